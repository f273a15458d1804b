"""A saved session the app cannot read (garbage, cut short, UTF-16, nested 100 000 deep, a folder, NaN, names with
control characters, a state the rules refuse): the app starts, keeps the file aside byte for byte under a new name,
says so on screen, and starts fresh."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from companion.savefile import keep_aside, load_saved
from companion.session import TableSession

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

GOOD = TableSession(["Ann", "Bo", "Cy"]).to_dict()
BAD = {
    "garbage": bytes(range(256)) * 3,
    "cut": json.dumps(GOOD).encode()[:40],
    "utf16": json.dumps(GOOD).encode("utf-16"),
    "nested": b"[" * 100_000 + b"]" * 100_000,
    "nan": json.dumps({**GOOD, "pot_carry": float("nan")}).encode(),
    "names": json.dumps({**GOOD, "players": ["Ann", "B\no", "Cy"], "stacks": {"Ann": 50, "B\no": 50, "Cy": 50}}
                        ).encode(),
    "stacks": json.dumps({**GOOD, "stacks": {"Ann": 2.5, "Bo": 50, "Cy": 50}}).encode(),
    "shape": json.dumps({**GOOD, "table": {**GOOD["table"], "round": {"stacks": [], "pot_carry": 0, "starting": [1],
                                                                      "events": 5}}}).encode(),
    "list": b"[1, 2, 3]",
    "empty": b"",
}


# loads, but a screen would fail on it: the app's check reads it once at load and sets it aside too
HISTORY = json.dumps({**GOOD, "history": [{"game": "pirates-bluff"}]}).encode()


@pytest.mark.parametrize("kind", sorted(BAD) + ["folder"])
def test_load_saved_keeps_a_bad_file_aside(kind, tmp_path):
    p = tmp_path / "session.json"
    if kind == "folder":
        p.mkdir()
        (p / "inside").write_text("x")
    else:
        p.write_bytes(BAD[kind])
    s, note = load_saved(p, TableSession.from_dict)
    assert s is None and note and "kept as session.json.bad-" in note and "\n" not in note
    assert not p.exists()
    kept = list(tmp_path.glob("session.json.bad-*"))
    assert len(kept) == 1
    if kind == "folder":
        assert (kept[0] / "inside").read_text() == "x"
    else:
        assert kept[0].read_bytes() == BAD[kind]  # never changed, never deleted


def test_a_good_file_loads_and_a_second_bad_one_never_replaces_the_first(tmp_path):
    p = tmp_path / "session.json"
    p.write_text(json.dumps(GOOD))
    s, note = load_saved(p, TableSession.from_dict)
    assert note is None and s.players == ["Ann", "Bo", "Cy"] and p.exists()
    assert load_saved(tmp_path / "none.json", TableSession.from_dict) == (None, None)
    for i in range(3):
        p.write_bytes(b"bad %d" % i)
        keep_aside(p)
    assert sorted(f.read_bytes() for f in tmp_path.glob("session.json.bad-*")) == [b"bad 0", b"bad 1", b"bad 2"]


CHILD = r"""
import sys
sys.path.insert(0, sys.argv[3])
from ui_driver import pump, start_app
app = start_app(sys.argv[1], sys.argv[2])
pump(3)
print("STATUS", app.status_text.replace("\n", " "), flush=True)
print("SCREEN", app.sm.current, flush=True)
app.stop()
"""


@pytest.mark.ui
@pytest.mark.parametrize("kind", ["garbage", "utf16", "nested", "folder", "names", "history"])
def test_the_app_says_so_on_screen_and_starts_fresh(kind, tmp_path):
    if not os.environ.get("DISPLAY"):  # fail, never skip: make test runs these under xvfb-run
        pytest.fail("needs a display: run under xvfb-run (make test does)")
    data = tmp_path / "data"
    data.mkdir()
    p = data / "session.json"
    if kind == "folder":
        p.mkdir()
    else:
        p.write_bytes(HISTORY if kind == "history" else BAD[kind])
    r = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path / "kh"), str(data), str(HERE)], cwd=ROOT,
                       capture_output=True, text=True, timeout=120,
                       env={**os.environ, "PYTHONPATH": str(ROOT), "KIVY_NO_ARGS": "1"})
    assert r.returncode == 0, r.stderr[-3000:]
    status = next(line for line in r.stdout.splitlines() if line.startswith("STATUS"))
    assert "could not be read" in status and "Starting fresh" in status, status
    assert "SCREEN start" in r.stdout
    kept = list(data.glob("session.json.bad-*"))
    assert len(kept) == 1 and not p.exists()
    if kind != "folder":
        assert kept[0].read_bytes() == (HISTORY if kind == "history" else BAD[kind])
