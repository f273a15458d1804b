"""Drive the real app through Bluff Pirate's screens with real touches, in its own process (Kivy has one window
per process). Run by tests/ui/test_bluff_pirate_ui.py under Xvfb:

    python tests/ui/bluff_pirate_driver.py MODE DATA_DIR OUT.json [VARIANT]

MODE ``touch``: set-up by touch, a whole turn with secret votes, All aboard with only legal targets, refusals,
undo, then the race played out to the treasure; ``secrets``: a scripted race whose secrets come from VARIANT
(``a`` or ``b``), with a snapshot of every text in the whole widget tree after each step; ``kill``: play to the
middle of the votes and die without closing; ``resume``: start again on the same data and finish the turn.
Writes its findings as JSON to OUT.json; exit 0 when the script ran to its end.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from ui_driver import find, pump, screen, start_app, tap, tap_text, wait_until  # noqa: E402


SHARED = ("start", "history")     # the shared screens a Bluff Pirate session can reach


def texts(app) -> list[str]:
    """Every text in the widget tree: the window (nav and status bars, the screen shown), every Bluff Pirate
    screen and the shared screens (shown or not, opacity 0 included), and the board's view. The CALL-button box's
    own status line (its connection and round-trip time change on their own) is left out."""
    out = []
    roots = [app.root] + [s for s in app.sm.screens
                          if s.parent is None and (s.name.startswith("bp_") or s.name in SHARED)]
    for r in roots:
        for w in r.walk(restrict=True):
            t = getattr(w, "text", None)
            if isinstance(t, str) and t and not t.startswith("Box:"):   # shown or not
                out.append(f"{type(w).__name__}:{t}")
            v = getattr(w, "view", None)
            if isinstance(v, dict):
                out.append("board:" + json.dumps(v, sort_keys=True))
    return out


def on(app, name):
    assert wait_until(lambda: screen(app).name == name, 3), (screen(app).name, name, app.status_text)


def tap_tag(app, tag):
    tap_text(app, tag=tag)


def vote_by_touch(app, voter, bluffing):
    on(app, "bp_vote")
    scr = screen(app)
    assert scr.ids.title.text == f"Pass the tablet to {voter}", scr.ids.title.text
    assert scr.ids.bluff.opacity == 0 and scr.ids.bluff.disabled         # nothing to press before the hand-over
    tap_tag(app, "bp:vote:ready")
    tap_tag(app, "bp:vote:bluffing" if bluffing else "bp:vote:not")


def lay_by_touch(app, claim, shown, hidden):
    tap_tag(app, "bp:set")
    on(app, "bp_set")
    tap_tag(app, f"bp:claim:{claim}")
    tap_tag(app, f"bp:shown:{shown}")
    for h in hidden:
        tap_tag(app, f"bp:hide:{h}")
    tap_tag(app, "bp:set:lay")


def mode_touch(app, out):
    # set-up by touch: the start screen (game, count, names), then the game's own setup screen
    tap(app.root_widget.ids.nav_start)
    on(app, "start")
    tap_tag(app, "game:bluff-pirate")
    start = screen(app)
    tap(next(b for b in start.ids.count_row.children if b.text == "3 players"))
    for t, name in zip(start.name_inputs, ["Cy", "Ann", "Ben"]):
        t.text = name
    tap_text(app, text="Start a new session")
    on(app, "bp_setup")
    st = screen(app)
    tap_tag(app, "bp:first:Ann")                         # the youngest starts: Ann, Ben, Cy
    minus = next(w for w in st.ids.track.children if getattr(w, "text", None) == "-")
    for _ in range(22):
        tap(minus)
    out["track_after_taps"] = st.ids.track.value
    tap_tag(app, "bp:setup:start")
    on(app, "bp_race")
    t = app.session.model.round
    out["order"] = list(t.players)
    out["track"] = t.state.options.track
    race = screen(app)
    out["aboard_at_start"] = find(race, tag="bp:aboard").disabled
    tap_tag(app, "bp:draw")
    out["after_draw"] = race.ids.counts.text
    # an illegal set (2 cards) is refused with the rules' reason and changes nothing
    before = json.dumps(app.session.to_dict(), sort_keys=True)
    tap_tag(app, "bp:set")
    on(app, "bp_set")
    tap_tag(app, "bp:claim:hat")
    tap_tag(app, "bp:hide:sword")
    out["set_reason"] = screen(app).ids.reason.text
    tap_tag(app, "bp:set:lay")
    out["illegal_set_status"] = app.status_text
    out["illegal_set_screen"] = screen(app).name
    out["illegal_set_changed"] = json.dumps(app.session.to_dict(), sort_keys=True) != before
    tap_tag(app, "bp:set:back")
    on(app, "bp_race")
    lay_by_touch(app, "hat", 2, ["hat"])
    vote_by_touch(app, "Ben", True)
    # the screen blanks for the next voter: the previous vote is not on it
    vs = screen(app)
    out["blank_after_vote"] = [vs.ids.title.text, vs.ids.bluff.opacity, vs.ids.honest.opacity]
    # a vote from the setter is refused with a clear message and changes nothing
    before = json.dumps(app.session.to_dict(), sort_keys=True)
    from companion.games.bluff_pirate.model import Intent

    app.act(Intent("vote", ("Ann", "bluffing")))
    out["setter_vote_status"] = app.status_text
    out["setter_vote_changed"] = json.dumps(app.session.to_dict(), sort_keys=True) != before
    vote_by_touch(app, "Cy", False)
    on(app, "bp_pick")
    tap_tag(app, "bp:pick:Cy")                           # Cy trusted Ann: Ann moves 3
    on(app, "bp_race")
    pump(5)
    out["reveal_words"] = screen(app).ids.reveal.text
    out["positions"] = dict(app.session.model.round.state.positions_map())
    # Ben's turn: All aboard offers Ann (ahead) and refuses Cy (level), with the reason
    tap_tag(app, "bp:aboard")
    race = screen(app)
    ann, cy = find(race, tag="bp:board:Ann"), find(race, tag="bp:board:Cy")
    out["aboard"] = {"Ann": [ann.text, ann.disabled], "Cy": [cy.text, cy.disabled]}
    tap(ann)
    out["after_board_hands"] = dict(app.session.model.round.state.hands_map())
    # undo the boarding
    tap_tag(app, "bp:undo")
    out["after_undo_hands"] = dict(app.session.model.round.state.hands_map())
    out["after_undo_current"] = app.session.model.round.current
    # the history screen lists the turn in words
    tap_tag(app, "bp:history")
    on(app, "bp_history")
    out["history"] = screen(app).ids.lines.text
    tap_tag(app, "bp:history:back")
    # play the race out by touch: random legal choices through the buttons
    rng = random.Random(4)
    for _ in range(3000):
        t = app.session.model.round
        if t.step == "over":
            break
        step = t.step
        on(app, app.session.model.screen())
        if step == "draw":
            tap_tag(app, "bp:draw")
        elif step == "choose":
            hand = t.state.hand(t.current)
            if hand >= 3 and rng.random() < 0.7:
                size = rng.choice([k for k in (3, 4, 5) if k <= hand])
                shown = rng.choice([1, 2])
                claim = rng.choice(["hat", "map", "pirate"])
                hidden = [claim if rng.random() < 0.6 else "sword" for _ in range(size - shown)]
                lay_by_touch(app, claim, shown, hidden)
            elif hand >= 5:
                tap_tag(app, "bp:discard")
                tap_tag(app, "bp:discard:map")
            else:
                tap_tag(app, "bp:keep")
        elif step == "votes":
            vote_by_touch(app, t.next_voter(), rng.random() < 0.5)
        elif step == "pick":
            tap_tag(app, f"bp:pick:{rng.choice(list(t.pending.votes))}")
        elif step == "land":
            tap_tag(app, f"bp:land:{rng.choice([k + 1 for k in range(2) if t.islands_view()[k] == 'unknown'])}")
    t = app.session.model.round
    out["winner"] = t.state.winner
    on(app, "bp_race")
    out["banner"] = screen(app).ids.banner.text
    out["cards"] = t.state.total
    tap_tag(app, "bp:next")
    out["next_race_first"] = app.session.model.round.current
    out["totals"] = app.session.totals()


VARIANTS = {
    # only the secrets differ: the treasure island (seed), Ben's vote (never picked), the face-down cards
    "a": {"seed": None, "treasure": 0, "ben": True, "hidden": ["sword", "parrot", "hat", "hat"]},
    "b": {"seed": None, "treasure": 1, "ben": False, "hidden": ["barrel", "anchor", "hat", "hat"]},
}


def seed_for(island):
    from companion.games.bluff_pirate.table import BluffPirateTable

    # the model hides race k's treasure with seed + k
    return next(s for s in range(200) if BluffPirateTable(["A", "B"], seed=s + 1)._treasure == island)


def mode_secrets(app, out, variant):
    v = VARIANTS[variant]
    snaps = out["snapshots"] = []

    def snap(label):
        pump(3)
        snaps.append({"label": label, "texts": texts(app)})

    app.new_session(players=["Ann", "Ben", "Cy"], game="bluff-pirate", options={"track": 5, "seed": seed_for(v["treasure"])})
    on(app, "bp_race")
    out["treasure"] = app.session.model.round._treasure
    snap("start")
    tap_tag(app, "bp:draw")
    snap("drawn")
    lay_by_touch(app, "hat", 1, v["hidden"])
    snap("laid")
    on(app, "bp_vote")
    tap_tag(app, "bp:vote:ready")
    snap("ben holds the tablet")
    tap_tag(app, "bp:vote:bluffing" if v["ben"] else "bp:vote:not")
    snap("ben voted")
    tap_tag(app, "bp:vote:ready")
    snap("cy holds the tablet")
    tap_tag(app, "bp:vote:not")
    snap("cy voted")
    on(app, "bp_pick")
    tap_tag(app, "bp:pick:Cy")                           # Cy trusted the bluff: Ann sails to the islands
    snap("picked")
    on(app, "bp_land")
    snap("landing")
    for name in ("bp_race", "bp_history", "bp_vote", "bp_pick", "bp_set"):
        app.go(name)
        snap(f"shown {name}")
    app.go("bp_land")
    tap_tag(app, "bp:land:1")
    snap("landed")
    out["winner"] = app.session.model.round.state.winner
    out["islands"] = app.session.model.round.islands_view()
    # what the app wrote besides its saved session (which may hold secrets, for resume): Kivy's log, settings
    written = {}
    for base in (Path(os.environ["KIVY_HOME"]), Path(os.environ["PIRATE_TABLE_DATA"])):
        for f in base.rglob("*"):
            if f.is_file() and f.name != "session.json" and f.suffix in (".txt", ".log", ".ini", ".csv", ".json"):
                written[str(f)] = f.read_text(errors="replace")
    out["written"] = written


def mode_kill(app, out):
    app.new_session(players=["Ann", "Ben", "Cy"], game="bluff-pirate", options={"track": 30, "seed": 3})
    on(app, "bp_race")
    tap_tag(app, "bp:draw")
    lay_by_touch(app, "map", 2, ["map", "map"])
    vote_by_touch(app, "Ben", True)
    out["state"] = app.session.to_dict()
    out["view"] = app.session.model.round.public_view()
    Path(out["_out"]).write_text(json.dumps(out))
    os._exit(0)                                          # killed: no stop, no further save


def mode_resume(app, out):
    tap(app.root_widget.ids.nav_start)
    st = screen(app)
    out["resume_info"] = st.ids.resume_info.text
    tap_text(app, text="Resume the last session")
    on(app, "bp_vote")
    out["state"] = app.session.to_dict()
    out["view"] = app.session.model.round.public_view()
    out["title"] = screen(app).ids.title.text
    vote_by_touch(app, "Cy", False)
    on(app, "bp_pick")
    tap_tag(app, "bp:pick:Ben")                          # Ben accused an honest set: Ann +4, Ben stays on 0
    on(app, "bp_race")
    out["positions"] = app.session.model.round.state.positions_map()


def main(mode: str, data: Path, out_path: Path, variant: str = "a") -> int:
    kivy_home = Path(tempfile.mkdtemp(prefix="bp-kivy-"))
    app = start_app(kivy_home, data)
    out: dict = {"mode": mode, "error": None, "_out": str(out_path)}
    try:
        {"touch": lambda: mode_touch(app, out), "secrets": lambda: mode_secrets(app, out, variant),
         "kill": lambda: mode_kill(app, out), "resume": lambda: mode_resume(app, out)}[mode]()
    except Exception:  # reported to the test, then a non-zero exit
        out["error"] = traceback.format_exc()
        out["status"] = getattr(app, "status_text", "")
    out_path.write_text(json.dumps(out))
    app.stop()
    return 0 if out["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]), *sys.argv[4:]))
