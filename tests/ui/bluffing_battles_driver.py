"""Drive the real app (Xvfb) through one Bluffing Battles scenario with real touches, in a fresh process (Kivy
has one window per process):

    python tests/ui/bluffing_battles_driver.py SCENARIO OUTDIR DATADIR

Prints one JSON line with what the screens showed (and ``error`` with a traceback when a step failed); writes
screenshots to OUTDIR. Scenarios: setup, fight, battle, reshuffle, refuse, kill (plays, saves, prints a
``READY`` line and waits to be killed), resume (resumes what ``kill`` left in DATADIR).
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main(scenario: str, out: Path, data: Path) -> int:
    from ui_driver import find, labels, pump, start_app, tap

    app = start_app(Path(tempfile.mkdtemp(prefix="bb-kivy-")), data)
    from kivy.core.window import Window

    out.mkdir(parents=True, exist_ok=True)
    res: dict = {"scenario": scenario, "error": None, "shots": []}

    def shot(name):
        pump(3)
        fn = Window.screenshot(name=str(out / f"{name}.png"))
        os.replace(fn, out / f"{name}.png")
        res["shots"].append(f"{name}.png")

    def scr():
        return app.sm.current_screen

    def tap_tag(tag):
        tap(find(scr(), tag=tag), frames=2)

    def fight_view():
        ids = app.screens["battles_fight"].ids
        return {k: ids[k].text for k in ("banner", "event", "prompt", "counts0", "counts1", "shown0", "shown1",
                                         "name0", "name1", "reshuffle")} | {
            "reshuffle_enabled": not ids.reshuffle.disabled, "undo_enabled": not ids.undo.disabled}

    def set_up(variant, swap=False, red=None, names=("Ann", "Ben")):
        app.go("start")
        pump(2)
        tap_tag("game:bluffing-battles")
        st = app.screens["start"]
        for t, name in zip(st.name_inputs, names):
            t.text = name
        tap(find(scr(), text="Start a new session"), frames=2)
        assert app.sm.current == "battles_setup", app.sm.current
        tap_tag(f"bb:variant:{variant}")
        if swap:
            tap_tag("bb:swap")
        if red is not None:
            tap_tag(f"bb:red:{red}")
        res["setup_labels"] = labels(scr())
        shot("setup")
        tap_tag("bb:start")
        assert app.sm.current == "battles_fight", (app.sm.current, app.status_text)

    def reveal(a, b):
        tap_tag(f"bb:card:0:{a}")
        tap_tag(f"bb:card:1:{b}")

    try:
        if scenario == "setup":
            set_up("one-deck", swap=True, red=0)
            s = app.session
            res.update(players=s.players, options=s.model.options, screen=app.sm.current, view=fight_view(),
                       enabled0=[t for t, b in app.screens["battles_fight"].cards[0].items() if not b.disabled],
                       enabled1=[t for t, b in app.screens["battles_fight"].cards[1].items() if not b.disabled])
            res["enabled0"] = [str(c) for c in res["enabled0"]]
            res["enabled1"] = [str(c) for c in res["enabled1"]]
            shot("fight-start")
        elif scenario == "fight":
            set_up("two-decks")
            tap_tag("bb:card:0:QS")
            res["waiting"] = fight_view()
            shot("fight-waiting")
            tap_tag("bb:card:1:5D")
            res["after"] = fight_view()
            res["status"] = app.status_text
            shot("fight-after")
        elif scenario == "battle":
            set_up("two-decks")
            reveal("7H", "7C")
            res["battle"] = fight_view()
            shot("battle")
            reveal("JD", "2S")
            res["won"] = fight_view()
            tap_tag("bb:undo")
            res["undone"] = fight_view()
            res["undo_status"] = app.status_text
            tap_tag("bb:history")
            res["history_screen"] = app.sm.current
            res["history"] = app.screens["battles_history"].ids.lines.text
            shot("history")
        elif scenario == "refuse":
            set_up("one-deck")
            reveal("KH", "KS")
            res["after_king"] = fight_view()
            before = json.dumps(app.session.to_dict())
            from companion.games.bluffing_battles.table import Reveal

            ok = app.act(Reveal("Ann", "KH"))  # the card already out of play: the app refuses it
            res["refused_ok"] = ok
            res["refused_status"] = app.status_text
            res["refused_error"] = app.status_error
            res["unchanged"] = json.dumps(app.session.to_dict()) == before
            res["kh_enabled"] = not find(scr(), tag="bb:card:0:KH").disabled
            res["black_enabled_for_ann"] = not find(scr(), tag="bb:card:0:2S").disabled
            shot("refused")
        elif scenario == "reshuffle":
            app.new_session(players=["Ann", "Ben"], game="bluffing-battles",
                            options={"variant": "one-deck-until-all", "red": 0, "seed": 49})
            pump(2)
            from companion.games.bluffing_battles.demo import choose

            rng = random.Random(49)
            taps = 0
            while app.session.model.round.phase == "reveal" and not app.session.model.round.over:
                s = app.session.model.round.state
                a, b = choose(s, 0, rng), choose(s, 1, rng)
                reveal(a, b)
                taps += 2
            res["taps"] = taps
            res["phase"] = app.session.model.round.phase
            res["prompt"] = fight_view()
            shot("reshuffle-prompt")
            tap_tag("bb:reshuffle")
            res["after"] = fight_view()
            res["phase_after"] = app.session.model.round.phase
        elif scenario == "kill":
            set_up("two-decks-until-all")
            reveal("7H", "7C")
            reveal("JD", "2S")
            tap_tag("bb:card:0:AS")
            res["view"] = fight_view()
            res["saved"] = json.loads((data / "session.json").read_text())["table"]
            print(json.dumps(res), flush=True)
            print("READY", flush=True)
            time.sleep(600)
        elif scenario == "resume":
            app.go("start")
            pump(2)
            res["resume_info"] = app.screens["start"].ids.resume_info.text
            tap(app.screens["start"].ids.resume, frames=3)
            res["screen"] = app.sm.current
            res["view"] = fight_view()
            res["table"] = app.session.model.to_json()
            shot("resumed")
            tap_tag("bb:card:1:9D")
            res["after"] = fight_view()
        else:
            raise ValueError(f"unknown scenario {scenario}")
    except Exception:
        res["error"] = traceback.format_exc()
    print(json.dumps(res, default=str), flush=True)
    app.stop()
    return 0 if res["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])))
