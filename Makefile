# The README's two promises: `make run` and `make test`, from a fresh clone on Debian with Python 3.11.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
RUN_STAMP  := $(VENV)/.run-installed
TEST_STAMP := $(VENV)/.test-installed

.PHONY: run test train venv system-deps-run system-deps-test system-deps-train firmware bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(RUN_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $@

$(TEST_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[test,train]'
	touch $@ $(RUN_STAMP)

system-deps-run:
	bash scripts/system-deps.sh run

system-deps-test:
	bash scripts/system-deps.sh test

system-deps-train:
	bash scripts/system-deps.sh train

venv: $(RUN_STAMP)

run: system-deps-run $(RUN_STAMP)
	$(VENV)/bin/pirate-table app

# Two workers (pytest-xdist) for everything but the real-time serial tests, which then run alone (marker `alone`).
# A test file goes whole to one worker (`--dist loadfile`): the UI tests of a file drive one app in order, and a
# test sent to the other worker found no session there (tests/test_ui_app.py failed or skipped that way).
# The two workers share the cores, so onnxruntime's pool threads do not spin there (vision/ortsession.py: the same
# readings; the camera tests 49 s instead of 55).
XVFB := KIVY_NO_ARGS=1 xvfb-run -a -s "-screen 0 1280x800x24"
test: system-deps-test $(TEST_STAMP)
	PIRATE_TABLE_ORT_SPIN=off $(XVFB) $(PY) -m pytest -n 2 --dist loadfile -rs -m "not alone" --durations=30
	$(XVFB) $(PY) -m pytest -m alone --durations=5

# The camera's models, trained here from the project's own data (fonts from Debian packages: the train set).
train: system-deps-train $(TEST_STAMP)
	$(PY) -m vision.train

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis

# The CALL button box: firmware ELF + simavr harness, and the end-to-end benchmark over them.
firmware:
	$(MAKE) -C hardware/firmware
	$(MAKE) -C hardware/sim

bench: firmware $(RUN_STAMP)
	$(VENV)/bin/pirate-table buttons bench --sim-firmware --presses 10000
