"""The guided deck enrollment in the app (tests/ui_enroll_flow.py), run in a process of its own: Kivy has one
window per process, and the in-process app of tests/test_ui_app.py has already used this one. FAILS (not skips)
without a display."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ui
HERE = Path(__file__).resolve().parent


def test_guided_enrollment_flows_in_their_own_process():
    if not os.environ.get("DISPLAY"):
        pytest.fail("needs a display: run under xvfb-run (make test does)", pytrace=False)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(HERE / "ui_enroll_flow.py")],
                       cwd=HERE.parent, capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout and "skipped" not in r.stdout, r.stdout[-2000:]
