"""Bluffing Battles in the real app under Xvfb, with real touches: set-up, a fight, a battle (and undo, the
history), a refused card, the reshuffle prompt, and resume after the app is killed. Each scenario runs the app
in a fresh process (tests/ui/bluffing_battles_driver.py). Without a display these tests FAIL (not skip)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "ui" / "bluffing_battles_driver.py"


def need_display():
    if not os.environ.get("DISPLAY"):
        pytest.fail("the Bluffing Battles screens need a display: run under xvfb-run (make test does)")


def env():
    return dict(os.environ, KIVY_NO_ARGS="1", KIVY_NO_CONSOLELOG="1")


def run(scenario, tmp_path, data=None):
    need_display()
    data = data or tmp_path / "data"
    p = subprocess.run([sys.executable, str(DRIVER), scenario, str(tmp_path / "shots"), str(data)], cwd=ROOT,
                       env=env(), capture_output=True, text=True, timeout=300)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert lines, p.stderr[-3000:]
    res = json.loads(lines[-1])
    assert res["error"] is None and p.returncode == 0, res["error"] or p.stderr[-3000:]
    for name in res["shots"]:
        png = (tmp_path / "shots" / name).read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5_000, name
    return res


def test_setup_names_who_is_shown_first_the_variant_and_the_red_half(tmp_path):
    r = run("setup", tmp_path)
    assert r["screen"] == "battles_fight"
    assert r["players"] == ["Ben", "Ann"]  # swapped: Ben is shown first
    assert r["options"] == {"variant": "one-deck", "red": 0, "seed": None}
    labels = " ".join(r["setup_labels"])
    for v in ("One deck split red against black", "7 or fewer to reshuffle loses", "13 or fewer",
              "Each player a whole deck, played through once"):
        assert v in labels
    v = r["view"]
    assert (v["name0"], v["name1"]) == ("Ben", "Ann")
    assert v["counts0"].startswith("draw pile 23") and "score pile 0" in v["counts0"] and "hand 3" in v["counts0"]
    assert "one-deck" in v["banner"] and "battle pot: 0" in v["banner"]
    # Ben holds the red half: only red cards can be tapped for him, only black for Ann
    assert len(r["enabled0"]) == 26 and all(c[-1] in "HD" for c in r["enabled0"])
    assert len(r["enabled1"]) == 26 and all(c[-1] in "SC" for c in r["enabled1"])


def test_a_fight_by_touch(tmp_path):
    r = run("fight", tmp_path)
    w = r["waiting"]
    assert "Ann reveals QS. Waiting for Ben's card." == w["event"] and w["prompt"] == "Reveal a card: Ben."
    assert w["shown0"].startswith("revealed Q") and w["undo_enabled"]
    a = r["after"]
    assert a["event"] == "Ann's QS beats 5D: Ann takes both cards. Both draw one."
    assert a["counts0"] == "draw pile 48   ·   score pile 2   ·   hand 3"
    assert a["counts1"] == "draw pile 48   ·   score pile 0   ·   hand 3"
    assert r["status"] == a["event"]


def test_a_battle_by_touch_then_undo_and_history(tmp_path):
    r = run("battle", tmp_path)
    b = r["battle"]
    assert b["event"].startswith("7H against 7C: equal, a battle!")
    assert "hidden prizes: Ann puts up 2, Ben puts up 2" in b["event"]
    assert "battle pot: 6" in b["banner"] and b["prompt"] == "Reveal the battle's next card: Ann and Ben."
    assert "draw pile 46" in b["counts0"]
    w = r["won"]
    assert w["event"].startswith("Ann's JD beats 2S: Ann wins the battle and takes 8 cards")
    assert "score pile 8" in w["counts0"] and "battle pot: 0" in w["banner"]
    u = r["undone"]
    assert "battle pot: 6" in u["banner"] and u["prompt"] == "Reveal the battle's next card: Ben."
    assert r["undo_status"].startswith("Undone: Ben's 2S")
    assert r["history_screen"] == "battles_history" and "1. 7H=7C: battle in progress" in r["history"]


def test_a_card_already_out_of_play_is_refused_and_changes_nothing(tmp_path):
    r = run("refuse", tmp_path)
    assert r["refused_ok"] is False and r["refused_error"] is True and r["unchanged"] is True
    assert "KH is already out of play" in r["refused_status"]
    assert r["kh_enabled"] is False and r["black_enabled_for_ann"] is False


def test_the_reshuffle_prompt(tmp_path):
    r = run("reshuffle", tmp_path)
    assert r["phase"] == "reshuffle" and r["taps"] > 0
    p = r["prompt"]
    assert "draw pile is empty: shuffle the score pile" in p["prompt"] and p["reshuffle_enabled"]
    who = p["reshuffle"].split()[0]
    assert p["reshuffle"] == f"{who} reshuffled" and "limit: 7 or fewer" in p["banner"]
    assert r["phase_after"] in ("reveal", "reshuffle", "over")
    assert f"{who} shuffled" in r["after"]["event"]


def test_resume_after_the_app_is_killed(tmp_path):
    need_display()
    data = tmp_path / "data"
    p = subprocess.Popen([sys.executable, str(DRIVER), "kill", str(tmp_path / "shots"), str(data)], cwd=ROOT,
                         env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = None
    try:
        end = time.monotonic() + 240
        for line in p.stdout:
            if line.startswith("{"):
                first = json.loads(line)
            if line.strip() == "READY" or time.monotonic() > end:
                break
    finally:
        p.send_signal(signal.SIGKILL)  # killed, not closed: nothing gets to save on the way out
        p.wait(timeout=30)
    assert first is not None and first["error"] is None, p.stderr.read()[-3000:] if p.stderr else ""
    r = run("resume", tmp_path, data)
    assert r["screen"] == "battles_fight" and "Bluffing Battles" in r["resume_info"]
    assert r["view"] == first["view"]
    assert r["table"] == first["saved"]
    assert r["after"]["event"] == "Ann's AS beats 9D: Ann takes both cards. Both draw one."
