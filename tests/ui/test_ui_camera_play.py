"""The table camera in play, in the real app under Xvfb, driven by recorded camera frames (the Settings >
Camera source ``frames:PATH``) and real touches: a Pirate Whist trick read and recorded, a revoke the camera saw
stopping the entry and the trick finished by touch; a Bluffing Battles fight's two revealed cards read, a card
the player cannot hold refused and corrected by touch; a Powderkeg dock card and the next card turned up read,
the next one by touch, and at the showdown the rest of the hand (four cards) read at once in its row. The frames are rendered scenes (vision/synth/suited.py ``seat_scene``) with the faces
set in a font family outside training (DejaVu Serif: calibration; no model trained on it) and read by the committed models. These
test the flows, not the reader's accuracy (the bench measures that): the scenes' seeds were picked among those
the committed standard52 / island54 readers read whole (e.g. 14 of 20 seeds of the first trick read all three
cards, none wrongly; 16 of 30 seeds of the Powderkeg showdown read all seven); a retrained reader may need
other seeds.

Each scenario runs in its own process (Kivy has one window per process). The tests FAIL, never skip, when
there is no display: run them under xvfb-run.

    KIVY_NO_ARGS=1 xvfb-run -a -s "-screen 0 1280x800x24" python -m pytest tests/ui/test_ui_camera_play.py
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import pytest
from ui_child import run_scenario

pytestmark = pytest.mark.ui
ROOT = Path(__file__).resolve().parents[2]
FAMILY = "DejaVu Serif"  # the faces of the recorded frames: a family outside training (held-out until session 99,
# calibration since: models/font_split.json)


def run(scenario, tmp_path):
    return run_scenario(__file__, scenario, tmp_path, "camera-in-play UI tests", timeout=400)


def test_whist_trick_read_by_the_camera_and_a_revoke_it_saw(tmp_path):
    res = run("whist", tmp_path)
    assert res["trick1_plays"] == [["Ben", "AH"], ["Cy", "5C"], ["Ann", "2H"]]
    assert res["trick1_back_on"] == "whist_play" and res["trick1_winner"] == "Ben"
    assert res["trick2_plays"] == [["Ben", "KH"]]  # entry stopped at Cy's heart: Cy showed void in hearts
    assert res["warning"].startswith("The camera saw Cy play 4H: Revoke!") and res["status_error"]
    assert res["trick_winners"] == ["Ben", "Cy"]  # Cy trumped by touch instead
    assert res["scan_title"] == "Cards of the trick read"


def test_battles_fight_read_by_the_camera_and_corrected_by_touch(tmp_path):
    res = run("battles", tmp_path)
    assert res["fight1"] == [["Ann", "KH"], ["Ben", "5S"]] and res["fights_after_1"] == 1
    assert res["stop"].startswith("The camera saw Ben reveal QD, which Ben cannot reveal now")
    assert res["fight2_before_touch"] == [["Ann", "3D"]]
    assert res["fight2"] == [["Ann", "3D"], ["Ben", "9C"]] and res["fights_after_2"] == 2


def test_powderkeg_dock_card_turned_up_and_the_rest_of_the_hand_read_by_the_camera(tmp_path):
    res = run("powderkeg", tmp_path)
    assert res["dock"] == "K:anchors" and res["revealed_1"] == ["2:boats"]
    assert res["revealed_2"] == ["2:boats", "6:palms"]  # the next by touch
    assert res["camera_disabled_when_calling"]
    assert res["phase_after_kill"] == "showing"
    assert res["revealed_all"] == ["2:boats", "6:palms", "Q:boats", "Q:skulls", "K:palms", "K:skulls", "K:crabs"]
    assert res["phase_end"] == "over"


# ------------------------------------------------------------------------------------ the scenarios (in the app)


def frame(tmp, name, deck, seats, middle=(), seed=11):
    """A recorded frame: the cards in front of the seats (and in the middle), faces in FAMILY."""
    import cv2

    from vision.fonts import split_fonts
    from vision.synth.suited import seat_scene

    fonts = [(f, files) for f, files in split_fonts("calibration") if f == FAMILY]
    assert fonts, f"{FAMILY} is not in the calibration split here"
    sc = seat_scene(seed, deck, seats, middle, fonts=fonts)
    d = tmp / name
    d.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(d / "frame.png"), sc.image)
    return d


def read_with_camera(app, folder, tag):
    from ui_driver import pump, screen, tap_text, wait_until

    app.config.set("table", "camera", f"frames:{folder}")
    pump(3)
    tap_text(app, tag=tag)
    assert screen(app).name in ("scan",) or app.camera is None
    assert wait_until(lambda: app.camera is None, 120), "no reading from the recorded frames"
    pump(3)


def whist_plays(app):
    t = app.session.model.round
    return [list(x) for x in t.trick_view()["cards"]]


def scenario_whist(app, out, tmp):
    from ui_driver import pump, screen, tap_text

    sys.path.insert(0, str(ROOT / "tests" / "ui"))
    from test_ui_pirate_whist import D, bid_by_touch, play_card, press

    app.new_session(players=["Ann", "Ben", "Cy"], game="pirate-whist",
                    options={"max_cards": 2, "first_dealer": "Ann", "mode": "tricks"})
    assert app.session is not None, app.status_text
    for p in ("Ben", "Cy", "Ann"):
        bid_by_touch(app, D, p, 1)
    press(app, tag="whist:reveal")
    assert screen(app).name == "whist_play", screen(app).name
    m = app.session.model
    # trick 1 (Ben leads): Ann 2H, Ben AH, Cy 5C (Cy fails to follow hearts)
    read_with_camera(app, frame(tmp, "t1", "standard52", [["2H"], ["AH"], ["5C"]]), "whist:camera")
    out["scan_title"] = app.screens["scan"].ids.scan_title.text
    t = m.round
    tr = t.state.round.tricks
    out["trick1_plays"] = [[p, str(c)] for p, c in tr[0].plays] if tr else whist_plays(app)
    out["trick1_winner"] = tr[0].winner if tr else None
    out["trick1_back_on"] = screen(app).name
    # trick 2 (Ben leads): Ben KH, Cy 4H (a revoke: Cy showed void in hearts), Ann 3H
    read_with_camera(app, frame(tmp, "t2", "standard52", [["3H"], ["KH"], ["4H"]], seed=11), "whist:camera")
    out["trick2_plays"] = whist_plays(app)
    out["warning"] = app.screens["whist_play"].ids.warning.text
    out["status_error"] = bool(app.status_error)
    if screen(app).name != "whist_play":
        app.end_scan()
        pump(3)
    play_card(app, "4S")  # Cy trumps instead, by touch
    play_card(app, "3H")  # Ann
    out["trick_winners"] = m.rule_round()["trick_winners"]


def scenario_battles(app, out, tmp):
    from ui_driver import pump, screen, tap_text

    app.new_session(players=["Ann", "Ben"], game="bluffing-battles", options={"variant": "one-deck", "red": 0})
    assert app.session is not None, app.status_text
    pump(3)
    assert screen(app).name == "battles_fight", screen(app).name
    t = app.session.model.round
    read_with_camera(app, frame(tmp, "f1", "standard52", [["KH"], ["5S"]], seed=12), "bb:camera")
    f = t.state.fights
    out["fight1"] = [[p, str(c)] for p, c in zip(t.players, f[-1].reveals[-1])] if f else []
    out["fights_after_1"] = len(f)
    # fight 2: Ben's card read as QD, which Ben (the black half) cannot hold: Ann's card is entered, Ben's is not
    read_with_camera(app, frame(tmp, "f2", "standard52", [["3D"], ["QD"]], seed=16), "bb:camera")
    out["stop"] = app.screens["battles_fight"].camera_stop
    out["fight2_before_touch"] = [[p, str(c)] for p, c in zip(t.players, t.pending) if c is not None]
    if screen(app).name != "battles_fight":
        app.end_scan()
        pump(3)
    tap_text(app, tag="bb:card:1:9C")  # Ben's real card, by touch
    pump(3)
    f = t.state.fights
    out["fight2"] = [[p, str(c)] for p, c in zip(t.players, f[-1].reveals[-1])]
    out["fights_after_2"] = len(f)


def scenario_powderkeg(app, out, tmp):
    from ui_driver import pump, screen, tap_text

    app.new_session(players=["Ann", "Ben", "Cy"], buy_in=50, game="powderkeg", options={})
    assert app.session is not None, app.status_text
    app.go_hand()
    pump(3)
    h = app.session.hand
    read_with_camera(app, frame(tmp, "d", "island54", [[], [], []], middle=["K:anchors"]), "pk:camera")
    out["dock"] = str(h.dock)
    read_with_camera(app, frame(tmp, "r1", "island54", [[], [], []], middle=["K:anchors", "2:boats"], seed=12),
                     "pk:camera")
    out["revealed_1"] = [str(c) for c in h.revealed]
    if screen(app).name != "powderkeg":
        app.end_scan()
        pump(3)
    tap_text(app, tag="pkrank:6")
    tap_text(app, tag="pksuit:palms")
    pump(3)
    out["revealed_2"] = [str(c) for c in h.revealed]
    out["phase"] = h.phase
    out["camera_disabled_when_calling"] = h.phase != "calling" or app.screens["powderkeg"].ids.camera.disabled
    from ui_driver import tap

    pk = app.screens["powderkeg"]
    while h.phase == "calling":  # everyone but the dealer calls Die, by touch
        tap(pk.ids.die)
        pump(2)
    tap_text(app, tag="pkrank:Q")
    tap_text(app, tag="pksuit:boats")  # Q:boats beside 2:boats: the hand dies on card 3
    pump(3)
    out["phase_after_kill"] = h.phase
    # the showdown: the dealer turns up the rest of the hand in its row; the camera reads the four at once
    rest = ["Q:skulls", "K:palms", "K:skulls", "K:crabs"]
    read_with_camera(app, frame(tmp, "show", "island54", [[], [], []],
                                middle=["2:boats", "6:palms", "Q:boats"] + rest, seed=11), "pk:camera")
    out["revealed_all"] = [str(c) for c in h.revealed]
    out["phase_end"] = h.phase


def main(argv):
    scenario, tmp = argv[0], Path(argv[1])
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "tests"))
    out = {"error": None}
    app = None
    try:
        from ui_driver import start_app

        tmp.mkdir(parents=True, exist_ok=True)
        app = start_app(tmp / "kivy_home", tmp / "data")
        globals()[f"scenario_{scenario}"](app, out, tmp)
    except Exception:
        out["error"] = traceback.format_exc() + f"\nstatus line: {getattr(app, 'status_text', None)!r}"
    print(json.dumps(out, default=str), flush=True)
    if app is not None:
        app.stop()
    return 0 if out["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
