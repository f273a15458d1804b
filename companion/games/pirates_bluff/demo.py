"""Pirate's Bluff demo mode: the rulebook's example hand (docs/pirates-bluff.md) played through the app's
intents, with a screenshot at each of the game's screens (``pirate-table app --demo --screenshot DIR``).

``steps(app, shot)`` is the demo hook named in the GameSpec (see docs/adding-a-game.md).
"""

from __future__ import annotations

from companion.decks.pirates72 import PBCard

PLAYERS = ["Arville", "Bethany", "Carter", "Douglas", "Eris"]
STARTING = {"Arville": "2D", "Bethany": "2C", "Carter": "3A", "Douglas": "4A", "Eris": "7A"}
BIDS = [("Bethany", 3, 2), ("Arville", 4, 2), ("Carter", 5, 2), ("Bethany", 5, 7), ("Douglas", 6, 7),
        ("Carter", 7, 2), ("Eris", 7, 7)]
COUNTS = {"Arville": (0, 1), "Bethany": (2, 0), "Carter": (0, 0), "Douglas": (0, 1), "Eris": (3, 1)}


def steps(app, shot):
    """The steps (zero-argument callables, run a few frames apart; one that returns True is run again) of the demo;
    ``shot(name)`` gives a step that asks for a screenshot (taken once the screen has settled, before the next
    step)."""

    def new_session():
        app.new_session(players=PLAYERS, buy_in=50, game="pirates-bluff", super_wilds=False, cyclone=None,
                        window_ms=10, ante=1)

    def bids():
        for p, q, r in BIDS:
            app.bid(p, q, r)

    def counts():
        sd = app.screens["showdown"]
        for p, (n, w) in COUNTS.items():
            sd.counts[p] = [n, w]
        sd.refresh()

    def wait_scan():
        """Until the simulated table camera's reading (its worker thread) has come back: True = run me again."""
        return app.camera is not None

    return [
        new_session,
        app.start_scan, wait_scan, shot("scan"), app.end_scan,
        lambda: [app.screens["deal"].cards.update({p: PBCard.parse(c) for p, c in STARTING.items()}),
                 app.screens["deal"].refresh()],
        shot("deal"),
        lambda: app.reveal({p: PBCard.parse(c) for p, c in STARTING.items()}),
        bids, shot("bid"),
        lambda: app.press_call("Douglas"),  # the software box's button, through the driver
        lambda: None, lambda: None,  # the simultaneity window closes
        counts, shot("showdown"),
        lambda: app.showdown({p: tuple(v) for p, v in COUNTS.items()}), shot("ruling"),
        lambda: app.go("coach"), lambda: None, shot("coach"),
        app.next_hand,
    ]


def step(app) -> None:
    """One step of a demo evening (GameSpec.demo_step), decided from ``app.session`` alone: the rulebook's
    example hand again and again, one intent per step (reveal, each bid, the call, the showdown, next hand)."""
    from companion.games.pirates_bluff.rules import Bid

    if app.session is None:
        app.new_session(players=PLAYERS, buy_in=50, game="pirates-bluff", super_wilds=False, cyclone=None,
                        window_ms=10, ante=1)
        return
    h = app.session.hand
    if h.phase == "starting":
        app.reveal({p: PBCard.parse(c) for p, c in STARTING.items()})
    elif h.phase == "bidding":
        if app.sm.current != "bid":
            app.go("bid")
        bids = sum(isinstance(m, Bid) for m in h.moves)
        if bids < len(BIDS):
            app.bid(*BIDS[bids])
        else:
            app.call("Douglas")
    elif h.phase == "called":
        # the simultaneity window (window_ms) must close before the showdown: the referee refuses it before
        app.showdown({p: tuple(v) for p, v in COUNTS.items()})
    elif h.phase == "over":
        app.next_hand()
