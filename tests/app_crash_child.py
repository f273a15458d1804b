"""Child process of the app crash test (tests/test_app_crash.py); not a test module itself.

``python app_crash_child.py DATA_DIR GAME HANDS`` runs the real app (Kivy, in this process, under the parent's
Xvfb display) on DATA_DIR, resumes the saved session if there is one (else starts a demo session of GAME), and
plays a demo evening through the app's own intents until HANDS hands are finished. After every step that the app
has saved it prints ``ack HANDS_DONE MOVES`` (the state's progress). The parent SIGKILLs it at random moments.
Each step is a function of the saved state alone, so a restarted child carries on where the last one stopped.
"""

from __future__ import annotations

import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

PB_PLAYERS = ["Arville", "Bethany", "Carter", "Douglas", "Eris"]
PB_STARTING = {"Arville": "2D", "Bethany": "2C", "Carter": "3A", "Douglas": "4A", "Eris": "7A"}
PB_BIDS = [("Bethany", 3, 2), ("Arville", 4, 2), ("Carter", 5, 2), ("Bethany", 5, 7), ("Douglas", 6, 7),
           ("Carter", 7, 2), ("Eris", 7, 7)]
PB_COUNTS = {"Arville": (0, 1), "Bethany": (2, 0), "Carter": (0, 0), "Douglas": (0, 1), "Eris": (3, 1)}
PK_PLAYERS = ["Alfonse", "Beatrice", "Cowen", "Dougherty", "Eron"]


def progress(app) -> tuple[int, int]:
    s = app.session
    if s is None:
        return (-1, 0)
    return (len(s.history), len(s.hand.moves) if s.hand is not None else -1)


def step_pirates_bluff(app) -> None:
    from companion.decks.pirates72 import PBCard
    from companion.games.pirates_bluff.rules import Bid

    h = app.session.hand
    if h.phase == "starting":
        app.reveal({p: PBCard.parse(c) for p, c in PB_STARTING.items()})
    elif h.phase == "bidding":
        bids = sum(isinstance(m, Bid) for m in h.moves)
        if bids < len(PB_BIDS):
            if app.sm.current != "bid":
                app.go("bid")
            app.bid(*PB_BIDS[bids])
        else:
            if app.sm.current != "bid":
                app.go("bid")
            app.call("Douglas")
    elif h.phase == "called":
        app.showdown(PB_COUNTS)
    elif h.phase == "over":
        app.next_hand()


def step_powderkeg(app) -> None:
    from companion.decks.island54 import island_deck

    s = app.session
    h = s.hand
    if h.phase == "over":
        app.next_hand()
        return
    if h.next_to_call is not None:
        rng = random.Random(len(s.history) * 1000 + len(h.moves))
        app.powderkeg_call("die" if rng.random() < 0.2 else "live")
        return
    deck = list(island_deck())
    random.Random(len(s.history)).shuffle(deck)
    used = set(h.revealed) | ({h.dock} if h.dock is not None else set())
    app.powderkeg_card(next(c for c in deck if c not in used))


def main() -> None:
    data, game, hands = sys.argv[1], sys.argv[2], int(sys.argv[3])
    from ui_driver import pump, start_app

    app = start_app(os.path.join(data, "kivy_home"), data)
    from companion.ui import services

    if services.session_path().exists():
        app.resume()
        if app.session is None:
            print(f"resume failed: {app.status_text}", flush=True)
            sys.exit(3)
    else:
        players = PK_PLAYERS if game == "powderkeg" else PB_PLAYERS
        app.new_session(players=players, buy_in=50, game=game, super_wilds=False, cyclone=None, window_ms=10,
                        ante=1)
        if app.session is None:
            print(f"new session failed: {app.status_text}", flush=True)
            sys.exit(3)
    pump(2)
    print(f"ready {' '.join(map(str, progress(app)))}", flush=True)
    step = step_powderkeg if game == "powderkeg" else step_pirates_bluff
    stuck = 0
    while len(app.session.history) < hands:
        before = progress(app)
        step(app)
        pump(1)
        after = progress(app)
        if after == before:
            stuck += 1
            time.sleep(0.05)  # e.g. the simultaneity window has to close before the showdown
            pump(3)
            if stuck > 100:
                print(f"stuck at {after}: {app.status_text}", flush=True)
                sys.exit(4)
            continue
        stuck = 0
        print(f"ack {after[0]} {after[1]}", flush=True)
    print("done", flush=True)
    app.stop()
    os._exit(0)


if __name__ == "__main__":
    main()
