"""Every screen with the longest names and the most players a game takes: no text spills out of its button or label
and no row is pushed out of its layout (under the buttons below it). A player's name may be 32 characters long
(Pirate Whist's 24); Pirate Whist seats 10, Pirate's Bluff and Powderkeg 8.

The app runs in its own process (Kivy has one window per process). The test FAILS, never skips, when there is no
display: run it under xvfb-run.

    KIVY_NO_ARGS=1 xvfb-run -a -s "-screen 0 1280x800x24" python -m pytest tests/ui/test_ui_fit.py

PIRATE_TABLE_SHOTS=<dir> saves each screen looked at there (fit-<screen>0001.png).
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from pathlib import Path

import pytest
from ui_child import run_scenario

pytestmark = pytest.mark.ui
ROOT = Path(__file__).resolve().parents[2]

# 32 characters each where the game takes 32 (a long name with spaces, and one long word that must break)
LONG = ["Bartholomew Roberts of Pembroke!", "Anne Bonny-Cormac from Kinsale 2", "Grace O'Malley of Clew Bay Mayo",
        "Henry Every the Arch Pirate Sr.", "Mary Read of Plymouth Sound UK.", "Edward Teach called Blackbeard!!",
        "Wolfeschlegelsteinhausenbergerdo", "Stede Bonnet the Gentleman Pirat", "Charlotte de Berry of Londontown",
        "Rachel Wall of Boston Harbour MA"]


def run(scenario, tmp_path):
    return run_scenario(__file__, scenario, tmp_path, "UI fit tests", timeout=600)


def test_the_check_finds_a_spilled_text_and_a_row_pushed_out(tmp_path):
    """The check itself: a plain label too small for its text, and a grid whose forced rows do not fit, are found."""
    res = run("selfcheck", tmp_path)
    kinds = {p[0] for p in res["problems"]}
    assert kinds == {"text spills", "outside its layout"}, res["problems"]


def test_long_names_and_full_tables_fit_on_every_screen(tmp_path):
    res = run("all", tmp_path)
    seen = res["screens"]
    # every registered game's screens were looked at (the ones its state allows), and Pirate's Bluff's hand played
    # through: the deal (with its "not sure" and "unreadable" marks), bids, the call, the showdown and the ruling
    for name in ("deal", "deal marks", "bid", "showdown", "ruling", "ledger", "history", "start", "whist_sheet",
                 "whist_bids", "powderkeg", "battles_fight", "bp_race", "buttons (pirate-whist)",
                 "phones (pirate-whist)", "ledger (powderkeg)"):
        assert name in seen, (name, sorted(seen))
    assert res["labels"] > 500, res["labels"]  # texts measured
    assert res["problems"] == [], "\n".join(map(str, res["problems"]))


# ---------------------------------------------------------------------------------------------- in the child


def _problems(scr):
    """(kind, where, ...) for each text that spills out of its widget and each child outside its layout."""
    from kivy.uix.label import Label
    from kivy.uix.layout import Layout
    from kivy.uix.scrollview import ScrollView

    from companion.ui.widgets import StackPlot

    out, n = [], 0

    def rect(w):
        x0, y0 = w.to_window(w.x, w.y)
        x1, y1 = w.to_window(w.right, w.top)
        return x0, y0, x1, y1

    def scrolled(w):  # a scroll view's content is larger than the view by design
        q = w
        while q is not None and q is not scr and q.parent is not q:
            if isinstance(q, ScrollView):
                return True
            q = q.parent
        return False

    for w in scr.walk(restrict=True):
        if not w.get_root_window() or w.opacity == 0 or scrolled(w):
            continue
        if isinstance(w, Label) and w.text and w.width > 1:
            w.texture_update()
            n += 1
            tw, th = w._label._internal_size  # the text as laid out, not the texture it is drawn on
            if tw > w.width + 2 or th > w.height + 2:
                out.append(("text spills", w.text[:40], [round(tw), round(th)], [round(w.width), round(w.height)]))
        if isinstance(w, Layout) and w.width > 1:
            px0, py0, px1, py1 = rect(w)
            for c in w.children:
                if c.width < 1 or c.height < 1:
                    continue
                x0, y0, x1, y1 = rect(c)
                if x0 < px0 - 2 or y0 < py0 - 2 or x1 > px1 + 2 or y1 > py1 + 2:
                    out.append(("outside its layout", type(c).__name__, getattr(c, "text", "")[:40],
                                [round(v) for v in (x0, y0, x1, y1)], [round(v) for v in (px0, py0, px1, py1)]))
        if isinstance(w, StackPlot) and w.legend_right > w.right + 1:
            out.append(("legend spills", w.legend_right, w.right))
    return out, n


def _child(scenario, tmp):
    sys.path.insert(0, str(ROOT / "tests"))
    from ui_driver import pump, start_app

    app = start_app(Path(tmp) / "kivy_home", Path(tmp) / "data")
    res = {"problems": [], "screens": [], "labels": 0, "error": None}

    shots = os.environ.get("PIRATE_TABLE_SHOTS")  # a folder: each screen looked at is saved there

    def look(name):
        pump(4)
        if shots:
            from kivy.core.window import Window

            Window.screenshot(name=str(Path(shots) / f"fit-{name.replace(' ', '_')}.png"))
        probs, n = _problems(app.sm.current_screen)
        res["screens"].append(name)
        res["labels"] += n
        res["problems"] += [[*p, name] for p in probs]

    if scenario == "selfcheck":
        from kivy.uix.gridlayout import GridLayout
        from kivy.uix.label import Label

        scr = app.sm.current_screen
        box = GridLayout(cols=1, row_force_default=True, row_default_height=200, size_hint=(None, None),
                         size=(300, 300), pos=(10, 10))
        box.add_widget(Label(text=LONG[0] * 2))  # one line, wider than the label
        box.add_widget(Label(text="row"))  # the second forced row lies below the grid
        scr.add_widget(box)
        res["problems"], _ = _problems(scr)
        return res

    from companion.decks.pirates72 import PBCard
    from companion.games import registry

    for spec in registry.games():
        n = min(spec.max_players, len(LONG))
        names = [p[: spec.name_max or 32].rstrip() for p in LONG[:n]]
        app.new_session(players=names, buy_in=50 if spec.uses_chips else None, game=spec.id)
        assert app.session is not None and app.session.game == spec.id, app.status_text
        # the game's screens, then the shared ones that show the players (not the camera's and enrollment's flows)
        for screen in [*app.game_screens[spec.id], "buttons", "phones", "history", "ledger", "settings"]:
            if app.allowed(screen)[0]:
                app.go(screen)
                look(screen if screen in app.game_screens[spec.id] else f"{screen} ({spec.id})")
        if spec.id != "pirates-bluff":
            continue
        # a Pirate's Bluff hand played through with eight players
        app.go("deal")
        deal = app.screens["deal"]
        deal.unreadable, deal.unsure = set(names[:4]), set(names[:2])
        deal.refresh()
        look("deal marks")
        cards = dict(zip(names, ["2D", "2C", "3A", "4A", "7A", "5B", "6C", "8H"]))
        app.reveal({p: PBCard.parse(c) for p, c in cards.items()})
        app.bid(names[1], 3, 2)
        app.bid(names[2], 4, 2)
        look("bid")
        app.call(names[3])
        pump(30)
        sd = app.screens["showdown"]
        for p in names:
            sd.counts[p] = [1, 0]
        app.go("showdown")
        sd.refresh()
        look("showdown")
        app.showdown({p: (1, 0) for p in names})
        assert app.sm.current == "ruling", app.status_text
        look("ruling")
        for screen in ("ledger", "history", "start"):
            app.go(screen)
            look(screen)
    return res


if __name__ == "__main__":
    try:
        out = _child(sys.argv[1], sys.argv[2])
    except BaseException:  # noqa: BLE001 - the parent shows it
        out = {"error": traceback.format_exc()}
    print(json.dumps(out), flush=True)
    os._exit(0)
