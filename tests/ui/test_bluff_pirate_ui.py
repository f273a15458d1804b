"""Bluff Pirate's screens in the real app, driven by real touches under Xvfb (each scenario in its own process:
Kivy has one window per process). These tests FAIL, not skip, when no display can be opened."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.ui

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "ui" / "bluff_pirate_driver.py"


def drive(tmp_path, mode, variant="a", data=None, expect_ok=True):
    if not os.environ.get("DISPLAY"):
        pytest.fail("no display: run the UI tests under Xvfb (xvfb-run -a ...)")
    data = data or tmp_path / f"data-{mode}-{variant}"
    out = tmp_path / f"{mode}-{variant}.json"
    p = subprocess.run([sys.executable, str(DRIVER), mode, str(data), str(out), variant], cwd=ROOT,
                       capture_output=True, text=True, timeout=240,
                       env={**os.environ, "KIVY_NO_ARGS": "1", "KIVY_NO_CONSOLELOG": "1"})
    assert out.exists(), f"the app did not start: rc={p.returncode}\n{p.stderr[-3000:]}"
    r = json.loads(out.read_text())
    assert r["error"] is None, r["error"] + "\nstatus: " + str(r.get("status"))
    if expect_ok:
        assert p.returncode == 0, p.stderr[-3000:]
    return r


def test_a_race_by_touch_set_up_turn_votes_aboard_undo_to_the_treasure(tmp_path):
    r = drive(tmp_path, "touch")
    assert r["order"] == ["Ann", "Ben", "Cy"] and r["track"] == 8 == r["track_after_taps"]
    assert r["aboard_at_start"] is True                       # nobody ahead: All aboard is not offered
    assert r["after_draw"].startswith("Pile 73 ")             # 90 - 15 - 2
    assert r["set_reason"] == r["illegal_set_status"] == "a set is 3, 4 or 5 cards, not 2"
    assert r["illegal_set_screen"] == "bp_set" and r["illegal_set_changed"] is False
    assert r["blank_after_vote"] == ["Pass the tablet to Cy", 0, 0]
    assert r["setter_vote_status"] == "Ann laid the set and does not vote" and r["setter_vote_changed"] is False
    assert r["reveal_words"].startswith("Cy voted not bluffing. Ann was honest (hidden: hat). Trusted: Ann moves 3")
    assert r["positions"] == {"Ann": 3, "Ben": 0, "Cy": 0}
    assert r["aboard"] == {"Ann": ["Board Ann", False], "Cy": ["Cy is level with Ben (both on 0)", True]}
    assert r["after_board_hands"] == {"Ann": 1, "Ben": 7, "Cy": 5}
    assert r["after_undo_hands"] == {"Ann": 4, "Ben": 5, "Cy": 5} and r["after_undo_current"] == "Ben"
    assert "Ann lays a set of 3: 2 hat face up, 1 face down." in r["history"]
    assert "Ben: bluffing" not in r["history"]
    assert r["winner"] in ("Ann", "Ben", "Cy") and r["banner"] == f"{r['winner']} wins!" and r["cards"] == 90
    assert r["next_race_first"] == "Ben" and r["totals"][r["winner"]] == 1


def _norm(texts):
    return [re.sub(r"\(hidden: [^)]*\)", "(hidden: ...)", t) for t in texts]


def test_no_secret_in_the_rendered_widget_tree_before_its_reveal(tmp_path):
    """Two races that differ only in their secrets (the treasure island, Ben's vote that is never picked, the
    face-down cards) show exactly the same texts in the whole widget tree, every screen, until each reveal."""
    a, b = drive(tmp_path, "secrets", "a"), drive(tmp_path, "secrets", "b")
    assert (a["treasure"], b["treasure"]) == (0, 1)
    labels = [s["label"] for s in a["snapshots"]]
    assert labels == [s["label"] for s in b["snapshots"]]
    picked = labels.index("picked")
    for sa, sb in zip(a["snapshots"], b["snapshots"]):
        if sa["label"] == "landed":
            break
        ta, tb = sa["texts"], sb["texts"]
        if labels.index(sa["label"]) >= picked:               # the face-down cards are revealed by the pick
            ta, tb = _norm(ta), _norm(tb)
        assert ta == tb, (sa["label"], sorted(set(ta) ^ set(tb))[:6])
    # the face-down cards were on no screen before the pick, and are shown after it
    before = [t for s in a["snapshots"][:picked] for t in s["texts"]]
    assert not any("parrot, hat" in t or "sword, parrot" in t for t in before)
    assert any("hidden: sword, parrot, hat, hat" in t for t in a["snapshots"][picked]["texts"])
    # the landing turns the token: now the runs differ, as they should
    la, lb = a["snapshots"][-1]["texts"], b["snapshots"][-1]["texts"]
    assert a["winner"] == "Ann" and a["islands"] == ["treasure", "unknown"]
    assert b["winner"] is None and b["islands"] == ["empty", "unknown"]
    assert la != lb
    # no log line or other file the app wrote holds a face-down card (the saved session may, for resume)
    for run, hidden in ((a, ("sword", "parrot")), (b, ("barrel", "anchor"))):
        assert run["written"], "no log found"
        for path, text in run["written"].items():
            assert not any(h in text for h in hidden), path


def test_resume_after_the_app_is_killed_mid_vote(tmp_path):
    data = tmp_path / "data"
    k = drive(tmp_path, "kill", data=data, expect_ok=False)
    r = drive(tmp_path, "resume", data=data)
    assert "Bluff Pirate: 3 players (Ann, Ben, Cy), 0 hands played, hand in play: votes." in r["resume_info"]
    assert r["state"] == k["state"] and r["view"] == k["view"]
    assert r["title"] == "Pass the tablet to Cy"             # Ben's vote is in, and not shown
    assert r["positions"] == {"Ann": 4, "Ben": 0, "Cy": 0}


def test_demo_mode_plays_a_whole_race_with_a_picture_of_every_screen(tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.fail("no display: run the UI tests under Xvfb (xvfb-run -a ...)")
    shots = tmp_path / "shots"
    p = subprocess.run([sys.executable, "-m", "companion", "app", "--demo", "--game", "bluff-pirate",
                        "--screenshot", str(shots)], cwd=ROOT, capture_output=True, text=True, timeout=300,
                       env={**os.environ, "KIVY_NO_ARGS": "1", "KIVY_NO_CONSOLELOG": "1",
                            "KIVY_HOME": str(tmp_path / "kivy"), "PIRATE_TABLE_DATA": str(tmp_path / "data")})
    assert p.returncode == 0, p.stderr[-3000:]
    names = {f.stem for f in shots.glob("bp_*.png")}
    assert names == {"bp_setup", "bp_race_start", "bp_set", "bp_vote_pass", "bp_vote", "bp_pick", "bp_reveal",
                     "bp_aboard", "bp_land", "bp_empty_island", "bp_over", "bp_history"}
    saved = json.loads((tmp_path / "data" / "session.json").read_text())
    race = saved["table"]["round"]
    assert saved["game"] == "bluff-pirate" and race["turns"]
    from companion.games.bluff_pirate.table import BluffPirateTable

    t = BluffPirateTable.from_json(race)
    assert t.step == "over" and t.state.winner and t.islands_view().count("treasure") == 1
