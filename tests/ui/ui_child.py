"""One app scenario in its own process (Kivy has one window per process): the test file runs itself as a script
with the scenario's name and a folder, and prints its result as one JSON line (``{"error": None, ...}``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def run_scenario(test_file, scenario, tmp_path, what, timeout=400):
    """``python TEST_FILE SCENARIO TMP_PATH`` under the display; its last JSON line, asserted error-free. FAILS (not
    skips) without a display; ``what`` names the tests in that message."""
    if not os.environ.get("DISPLAY"):
        pytest.fail(f"the {what} need a display: run under xvfb-run (make test does)")
    env = dict(os.environ, KIVY_NO_ARGS="1", KIVY_NO_CONSOLELOG="1")
    p = subprocess.run([sys.executable, str(Path(test_file).resolve()), scenario, str(tmp_path)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{scenario}: no result (exit {p.returncode})\n{p.stderr[-4000:]}"
    res = json.loads(lines[-1])
    assert res["error"] is None, res["error"]
    return res
