"""Bluff Pirate demo mode: a whole race played through the screens' own intents (set-up, draws, sets laid in
private, secret votes on the passed tablet, the pick and its reveal, All aboard, the islands), with screenshots
of each screen (``pirate-table app --demo --game bluff-pirate --screenshot DIR``). The GameSpec's demo hook."""

from __future__ import annotations

import random
import time

from companion.games.bluff_pirate.table import demo_intent

PLAYERS = ["Ann", "Ben", "Cy", "Dee"]
SEED = 2          # a race whose first landing finds the empty island (the race goes on)


def steps(app, shot):
    rng = random.Random(SEED)

    def setup():
        scr = app.screens["bp_setup"]
        scr.setup(PLAYERS)
        app.go("bp_setup")

    def start():
        app.new_session(players=PLAYERS, game="bluff-pirate", options={"track": 30, "seed": SEED})

    def play_until(cond, per_step=1, limit=4000):
        """A step that plays ``per_step`` intents per call through the screens until ``cond()``."""
        count = [0]

        def step():
            for _ in range(per_step):
                t = app.session.model.round
                if cond(t) or t.step == "over" or count[0] >= limit:
                    return False
                count[0] += 1
                play_one(t)
            return True
        return step

    def play_one(t):
        _perform(app, *demo_intent(t, rng))

    def laying():
        def step():
            # open the set screen with a set entered, for its picture
            s = app.screens["bp_set"]
            app.go("bp_set")
            s.forget()
            s._claim("hat")
            s.set_shown(2)
            s.add_hidden("hat")
            s.add_hidden("sword")
        return step

    def back_to_race():
        app.screens["bp_set"].forget()
        app.go("bp_race")

    def aboard_menu():
        app.screens["bp_race"]._aboard()

    def ready_vote():
        app.screens["bp_vote"].ready()

    def aboard_back():
        app.screens["bp_race"]._back()

    def pause(seconds):
        """A step that waits ``seconds`` of real time (the tour's steps come a few frames apart)."""
        def step():
            now = time.monotonic()
            if step.until is None:
                step.until = now + seconds
            if now < step.until:
                return True
            step.until = None
            return None
        step.until = None
        return step

    wait = [pause(1.25)]               # let an animation finish before its picture (a token's move takes 0.9 s)

    return [
        setup, lambda: None, shot("bp_setup"),
        start, lambda: None, shot("bp_race_start"),
        play_until(lambda t: t.step == "choose" and t.state.hand(t.current) >= 5), laying(), lambda: None,
        shot("bp_set"), back_to_race,
        play_until(lambda t: t.step == "votes"), lambda: None, shot("bp_vote_pass"),
        ready_vote, lambda: None, shot("bp_vote"),
        play_until(lambda t: t.step == "pick"), lambda: None, shot("bp_pick"),
        play_until(lambda t: t.step != "pick"), *wait, shot("bp_reveal"),
        play_until(lambda t: t.step == "draw" and any(w is None for w in t.board_options().values()), 3),
        aboard_menu, lambda: None, shot("bp_aboard"), aboard_back,
        play_until(lambda t: t.step == "land", 4), *wait, shot("bp_land"),
        play_until(lambda t: t.step != "land"), *wait, shot("bp_empty_island"),
        play_until(lambda t: False, 4), *wait, shot("bp_over"),
        lambda: app.go("bp_history"), lambda: None, shot("bp_history"),
    ]


def _intent(name, *args):
    from companion.games.bluff_pirate.model import Intent

    return Intent(name, tuple(args))


STEP_OPTIONS = {"track": 10, "seed": SEED}  # the step-wise demo's races (GameSpec.demo_step): a short track


def step(app) -> None:
    """One step of a demo evening (GameSpec.demo_step), decided from ``app.session`` alone: one intent of the
    race through the screens (as :func:`steps` plays them), chosen with a generator seeded by the saved race
    (its JSON), or the next race when one is over."""
    import hashlib
    import json

    if app.session is None:
        app.new_session(players=PLAYERS, game="bluff-pirate", options=dict(STEP_OPTIONS))
        return
    m = app.session.model
    t = m.round
    if t is None or t.step == "over":
        app.next_hand()
        return
    key = json.dumps([len(app.session.history), m.round_json()], sort_keys=True, default=str)
    rng = random.Random(hashlib.sha256(key.encode()).hexdigest())
    _perform(app, *demo_intent(t, rng))


def _perform(app, name: str, args) -> None:
    """Carry out one demo intent through the screens, as a player's taps would."""
    if name == "draw":
        app.screens["bp_race"].mode = None
        if app.sm.current != "bp_race":
            app.go("bp_race")
        app.act(_intent("draw"))
    elif name == "board":
        app.screens["bp_race"]._board(args[0])
    elif name == "discard":
        app.screens["bp_race"]._discard(args[0])
    elif name == "keep":
        app.act(_intent("keep"))
    elif name == "lay_set":
        visible, hidden = args
        s = app.screens["bp_set"]
        app.go("bp_set")
        s.forget()
        s._claim(visible[0])
        s.set_shown(len(visible))
        for h in hidden:
            s.add_hidden(h)
        s.lay()
    elif name == "vote":
        v = app.screens["bp_vote"]
        v.ready()
        v.vote(args[1] == "bluffing")
    elif name == "pick":
        app.screens["bp_pick"].pick(args[0])
    elif name == "land":
        app.screens["bp_land"].land(args[0])
