"""`pirate-table app`: --screenshot writes every main screen, --measure-start prints the cold start figure;
nothing outside companion/ui imports Kivy."""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCREENS = ["start", "scan", "deal", "bid", "showdown", "ruling", "coach", "history", "ledger", "powderkeg", "settings",
           "buttons"]


def env(tmp_path):
    e = dict(os.environ, KIVY_HOME=str(tmp_path / "kivy"), PIRATE_TABLE_DATA=str(tmp_path / "data"),
             KIVY_NO_ARGS="1")
    return e


def test_core_never_imports_kivy():
    code = ("import sys, companion.cli, companion.session, companion.ledger, companion.ui.services; "
            "companion.cli.build_parser(); print('kivy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def _why(r):
    """What a failed app run said: stdout and the stderr lines that are not ALSA's noise about a missing sound card."""
    err = "\n".join(line for line in r.stderr.splitlines() if "ALSA" not in line and "alsa" not in line)
    return f"rc={r.returncode}\n--- stdout ---\n{r.stdout[-3000:]}\n--- stderr (ALSA lines left out) ---\n{err[-4000:]}"


def needs_display(test):
    """A UI test fails, never skips, without a display (make test runs it under xvfb-run)."""

    @functools.wraps(test)
    def run(*args, **kwargs):
        if not os.environ.get("DISPLAY"):
            pytest.fail("needs a display: run under xvfb-run (make test does)", pytrace=False)
        return test(*args, **kwargs)

    return run


@needs_display
def test_screenshot_writes_each_main_screen(tmp_path):
    out = tmp_path / "shots"
    r = subprocess.run([sys.executable, "-m", "companion", "app", "--demo", "--screenshot", str(out)],
                       cwd=ROOT, env=env(tmp_path), capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, _why(r)
    for name in SCREENS:
        data = (out / f"{name}.png").read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, name


@needs_display
def test_measure_start_prints_the_figure(tmp_path):
    r = subprocess.run([sys.executable, "-m", "companion", "app", "--measure-start"], cwd=ROOT, env=env(tmp_path),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, _why(r)
    m = re.search(r"cold start to first screen: ([0-9.]+) s", r.stdout)
    assert m, r.stdout
    assert 0 < float(m.group(1)) < 60
