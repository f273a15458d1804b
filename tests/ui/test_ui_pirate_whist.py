"""Pirate Whist in the real app under Xvfb, driven by real touches: set-up, the secret bid hand-off on the passed
tablet (nothing on any screen depends on a bid before the reveal), the hook dealer, trick by trick with the
revoke warning, the score sheet, editing a round, CSV export, and resume after the app is killed.

Each scenario runs in its own process (Kivy has one window per process; a kill is a real kill). The tests FAIL,
never skip, when there is no display: run them under xvfb-run.

    KIVY_NO_ARGS=1 xvfb-run -a -s "-screen 0 1280x800x24" python -m pytest tests/ui/test_ui_pirate_whist.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

pytestmark = pytest.mark.ui
ROOT = Path(__file__).resolve().parents[2]


def run(scenario, tmp_path, *args, expect_exit=0):
    if not os.environ.get("DISPLAY"):
        pytest.fail("the Pirate Whist UI tests need a display: run under xvfb-run")
    env = dict(os.environ, KIVY_NO_ARGS="1", KIVY_NO_CONSOLELOG="1")
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), scenario, str(tmp_path), *map(str, args)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{scenario}: no result (exit {p.returncode})\n{p.stderr[-4000:]}"
    res = json.loads(lines[-1])
    assert res["error"] is None, res["error"]
    assert p.returncode == expect_exit, p.stderr[-3000:]
    return res


def test_setup_seats_limit_dealer_and_options(tmp_path):
    res = run("setup", tmp_path)
    assert res["limit"].startswith("Limit 13 cards for 4 players")
    assert res["limit_3"].startswith("Limit 17 cards for 3 players")
    assert "Lowest card deals" in res["cut"]
    assert res["players"] == ["Ben", "Ann", "Cy", "Dee"]
    assert res["options"]["max_cards"] == 8 and res["options"]["first_dealer"] == "Cy"
    assert res["options"]["hook"] is True and res["options"]["mode"] == "tricks"
    assert res["screen"] == "whist_bids" and res["header"].startswith("Round 1 of 15")


def test_secret_bids_hand_off_shows_nothing_of_a_bid_before_the_reveal(tmp_path):
    low = run("bids", tmp_path / "a", 0)
    high = run("bids", tmp_path / "b", 3)
    assert low["before_reveal"] == high["before_reveal"]  # every text on every screen, the same
    assert low["revealed"]["Ben"] == 0 and high["revealed"]["Ben"] == 3
    assert low["handoff"] == "Pass the tablet to Cy" and low["pad_after_hide"] == 0
    assert low["pad_buttons"] == ["0", "1", "2", "3"]


def test_hook_dealer_bids_in_the_open_with_the_forbidden_bid_disabled(tmp_path):
    res = run("hook", tmp_path)
    assert res["forbidden_disabled"] and res["others_enabled"]
    assert res["bids"] == {"Ann": 0, "Ben": 1, "Cy": 1, "Dee": 0} and res["screen"] == "whist_play"


def test_trick_by_trick_with_cards_and_the_revoke_warning(tmp_path):
    res = run("tricks", tmp_path)
    assert res["warning"].startswith("Revoke! revoke: Ann failed to follow hearts")
    assert res["status_error"] and res["plays_after_warning"] == res["plays_before_warning"]
    assert res["trick_winners"] == ["Ben", "Ann"] and res["scores"] == {"Ann": 11, "Ben": 11}


def test_score_sheet_edit_round_and_csv(tmp_path):
    res = run("sheet", tmp_path)
    assert res["row1"]["Ann"] == "1/1  +11  =11" and res["row2"]["Ann"] == "1/0  -1  =10"
    assert res["save_disabled_when_wrong"]
    assert res["row1_after"]["Ann"] == "2/1  -1  =-1" and res["totals_after"]["Ann"] == "-2"
    assert res["session_totals"]["Ann"] == -2
    assert res["csv"].splitlines()[0].startswith("round,cards,dealer,Ann bid,Ann won,Ann score,Ann total")
    assert res["csv"].splitlines()[1].startswith("1,3,Dee,2,1,-1,-1")


def test_resume_after_the_app_is_killed_keeps_secret_bids_and_the_trick(tmp_path):
    run("resume_kill", tmp_path, expect_exit=9)  # the app dies mid-round (os._exit, no clean-up)
    res = run("resume_back", tmp_path)
    assert res["screen"] == "whist_bids" and res["handoff"] == "Pass the tablet to Dee"
    assert res["waiting"] == ["Dee", "Ann"]
    assert res["revealed"] == {"Ann": 1, "Ben": 2, "Cy": 0, "Dee": 0}
    assert res["trick_text"].startswith("Trick 1 of 3: Ben leads.")
    res = run("resume_back_2", tmp_path)
    assert res["trick_text"] == res["trick_text_before_kill"] and res["undo_enabled"]


# ------------------------------------------------------------------------------------ the scenarios (in the app)


def texts(app):
    """Every text a person could read now: the current screen, the nav bar and the status line (but the
    button box's connection line, which changes on its own)."""
    from kivy.uix.label import Label

    return sorted(w.text for w in app.root_widget.walk(restrict=True) if isinstance(w, Label) and w.opacity > 0
                  and w.get_root_window() is not None and not w.text.startswith("Box:"))


def new_session(app, players=("Ann", "Ben", "Cy", "Dee"), **options):
    opts = {"max_cards": 3, "first_dealer": "Ann", "mode": "counts"}
    opts.update(options)
    app.new_session(players=list(players), game="pirate-whist", options=opts)
    assert app.session is not None, app.status_text


def bid_by_touch(app, d, player, n):
    from ui_driver import screen, tap_text

    assert screen(app).name == "whist_bids", screen(app).name
    assert d.labels_of(app)["big"] == f"Pass the tablet to {player}"
    press(app, tag="whist:open-pad")
    press(app, tag=f"whist:bid:{n}")
    press(app, tag="whist:confirm-bid")


def press(app, tag=None, text=None, root=None):
    """A real touch on the button, once the screen has laid itself out (a shown box may have just grown)."""
    from ui_driver import pump, tap_text

    pump(3)
    tap_text(app, tag=tag, text=text, root=root)


class D:
    @staticmethod
    def labels_of(app):
        from ui_driver import screen

        return {k: getattr(w, "text", "") for k, w in screen(app).ids.items()}


def scenario_setup(app, out, args):
    from ui_driver import find, pump, screen, tap, tap_text

    st = app.screens["start"]
    app.go("start")
    press(app, tag="game:pirate-whist")
    st.set_count(4)
    for t, name in zip(st.name_inputs, ["Ann", "Ben", "Cy", "Dee"]):
        t.text = name
    tap(st.ids.new_session)
    assert screen(app).name == "whist_setup"
    ids = screen(app).ids
    out["limit"] = ids.limit.text
    press(app, tag="whist:cut")
    out["cut"] = ids.cut_text.text
    press(app, tag="whist:seat-down:0")  # Ann and Ben swap seats
    for _ in range(1):
        tap(find(screen(app), text="+"))  # 7 -> 8
    press(app, tag="whist:dealer:Cy")
    press(app, tag="whist:hook")
    press(app, tag="whist:mode:tricks")
    pump(2)
    press(app, tag="whist:start")
    s = app.session
    out["players"] = s.players
    out["options"] = s.model.options_json()
    out["screen"] = screen(app).name
    out["header"] = screen(app).ids.header.text
    scr = app.screens["whist_setup"]
    scr.setup(["A", "B", "C"])
    out["limit_3"] = scr.ids.limit.text


def scenario_bids(app, out, args):
    from ui_driver import screen, tap_text

    first = int(args[0])
    new_session(app)
    out["handoff"] = None
    # Ben (the leader) opens the pad, picks, confirms: the pad closes and the screen blanks for Cy
    assert D.labels_of(app)["big"] == "Pass the tablet to Ben"
    press(app, tag="whist:open-pad")
    out["pad_buttons"] = sorted(b.text for b in screen(app).ids.pad.children)
    press(app, tag="whist:hide-pad")  # not Ben after all: blank again
    out["pad_after_hide"] = len(screen(app).ids.pad.children)
    bid_by_touch(app, D, "Ben", first)
    out["handoff"] = D.labels_of(app)["big"]
    seen = {}
    for name in ("whist_bids", "whist_reveal", "whist_play", "whist_sheet", "whist_end", "history"):
        app.go(name)
        seen[name] = texts(app)
    app.go_hand()
    bid_by_touch(app, D, "Cy", 1)
    bid_by_touch(app, D, "Dee", 0)
    seen["bids_2"] = texts(app)
    bid_by_touch(app, D, "Ann", 2)
    assert screen(app).name == "whist_reveal"
    seen["reveal"] = texts(app)
    seen["saved_view"] = app.saved_session_info()
    out["before_reveal"] = seen
    press(app, tag="whist:reveal")
    assert screen(app).name == "whist_play"
    out["revealed"] = app.session.model.round.bids()
    shown = texts(app)
    assert str(first) in shown and "Bids vs cards:" in " ".join(shown)


def scenario_hook(app, out, args):
    from ui_driver import find, screen, tap_text

    new_session(app, hook=True)
    for p, n in (("Ben", 1), ("Cy", 1), ("Dee", 0)):
        bid_by_touch(app, D, p, n)
    press(app, tag="whist:reveal")
    assert screen(app).name == "whist_reveal", screen(app).name
    assert "Hook rule: Ann may not bid 1" in D.labels_of(app)["note"]
    out["forbidden_disabled"] = find(screen(app), tag="whist:dealer-bid:1").disabled
    out["others_enabled"] = not any(find(screen(app), tag=f"whist:dealer-bid:{n}").disabled for n in (0, 2, 3))
    press(app, tag="whist:dealer-bid:0")
    out["bids"] = app.session.model.round.bids()
    out["screen"] = screen(app).name


def play_card(app, text):
    from ui_driver import tap_text

    rank, suit = text[:-1], text[-1]
    press(app, tag=f"whist:rank:{rank}")
    press(app, tag=f"whist:suit:{suit}")


def scenario_tricks(app, out, args):
    from ui_driver import screen, tap_text

    new_session(app, players=("Ann", "Ben"), max_cards=2, mode="tricks")
    bid_by_touch(app, D, "Ben", 1)
    bid_by_touch(app, D, "Ann", 1)
    press(app, tag="whist:reveal")
    assert screen(app).name == "whist_play"
    play_card(app, "AH")  # Ben leads
    play_card(app, "2C")  # Ann shows out of hearts
    plays = len(app.session.model.moves)
    out["plays_before_warning"] = plays
    play_card(app, "KD")  # Ben leads again (won)
    play_card(app, "3H")  # Ann: a heart after failing to follow hearts
    out["warning"] = screen(app).ids.warning.text
    out["status_error"] = bool(app.status_error)
    out["plays_after_warning"] = len(app.session.model.moves) - 1
    play_card(app, "2S")  # Ann trumps instead
    r = app.session.model.rule_round()
    out["trick_winners"] = r["trick_winners"]
    out["scores"] = r["scores"]


def counts_by_touch(app, won):
    from ui_driver import tap_text

    for p, n in won.items():
        for _ in range(n):
            press(app, tag=f"whist:won+:{p}")
    press(app, tag="whist:counts-done")


def sheet_cells(app):
    """Row number -> player -> cell text, from the sheet's grid (label order)."""
    from kivy.uix.label import Label

    scr = app.screens["whist_sheet"]
    grid = scr.ids.grid
    cells = [w.text for w in reversed(grid.children)]
    players = app.session.players
    ncol = 3 + len(players)
    rows = [cells[i:i + ncol] for i in range(0, len(cells), ncol)]
    out = {}
    for row in rows[1:]:
        out[row[0].split()[0]] = dict(zip(players, row[3:]))
    assert all(isinstance(w, Label) for w in grid.children)
    return out


def scenario_sheet(app, out, args):
    from ui_driver import screen, tap_text

    new_session(app, first_dealer="Dee")
    for p, n in (("Ann", 1), ("Ben", 1), ("Cy", 1), ("Dee", 0)):
        bid_by_touch(app, D, p, n)
    press(app, tag="whist:reveal")
    counts_by_touch(app, {"Ann": 1, "Ben": 1, "Cy": 1})
    press(app, tag="whist:next-round")
    for p, n in (("Ben", 0), ("Cy", 0), ("Dee", 1), ("Ann", 1)):
        bid_by_touch(app, D, p, n)
    press(app, tag="whist:reveal")
    counts_by_touch(app, {"Ben": 1, "Dee": 1})
    press(app, tag="whist:next-round")
    app.go("whist_sheet")
    cells = sheet_cells(app)
    out["row1"], out["row2"] = cells["1"], cells["2"]
    press(app, tag="whist:edit:1")
    assert screen(app).name == "whist_edit"
    press(app, tag="whist:edit-won+:Dee")  # 4 tricks of 3: refused
    out["save_disabled_when_wrong"] = screen(app).ids.save.disabled
    press(app, tag="whist:edit-won-:Dee")
    press(app, tag="whist:edit-bid+:Ann")  # Ann had bid 2, not 1
    press(app, tag="whist:edit-save")
    assert screen(app).name == "whist_sheet", app.status_text
    cells = sheet_cells(app)
    out["row1_after"] = cells["1"]
    out["totals_after"] = cells["Total"]
    out["session_totals"] = app.session.totals()
    press(app, tag="whist:export")
    out["csv"] = Path(app.last_export).read_text(encoding="utf-8")


def scenario_resume_kill(app, out, args):
    from ui_driver import pump

    new_session(app, mode="tricks")
    bid_by_touch(app, D, "Ben", 2)
    bid_by_touch(app, D, "Cy", 0)
    pump(2)
    print(json.dumps({"error": None}), flush=True)
    os._exit(9)  # killed: no stop, no clean-up; the session file is all there is


def scenario_resume_back(app, out, args):
    from ui_driver import screen, tap_text

    app.go("start")
    press(app, text="Resume the last session")
    out["screen"] = screen(app).name
    out["handoff"] = D.labels_of(app)["big"]
    out["waiting"] = app.session.model.round.bid_status()["waiting"]
    bid_by_touch(app, D, "Dee", 0)
    bid_by_touch(app, D, "Ann", 1)
    press(app, tag="whist:reveal")
    out["revealed"] = app.session.model.round.bids()
    play_card(app, "QS")
    out["trick_text"] = screen(app).ids.trick.text
    Path(app.test_data_dir, "trick.txt").write_text(out["trick_text"])


def scenario_resume_back_2(app, out, args):
    from ui_driver import screen, tap_text

    app.go("start")
    press(app, text="Resume the last session")
    out["trick_text"] = screen(app).ids.trick.text
    out["trick_text_before_kill"] = Path(app.test_data_dir, "trick.txt").read_text()
    out["undo_enabled"] = not screen(app).ids.undo.disabled


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
        app.test_data_dir = tmp / "data"
        globals()[f"scenario_{scenario}"](app, out, argv[2:])
    except Exception:
        out["error"] = traceback.format_exc() + f"\nstatus line: {getattr(app, 'status_text', None)!r}"
    print(json.dumps(out, default=str), flush=True)
    if app is not None:
        app.stop()
    return 0 if out["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
