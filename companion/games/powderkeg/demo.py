"""Powderkeg demo mode: the rulebook's round up to the third call, every card and call through the round
screen's intents (``pirate-table app --demo --screenshot DIR``). The GameSpec's demo hook."""

from __future__ import annotations

from companion.decks.island54 import IslandCard

PLAYERS = ["Alfonse", "Beatrice", "Cowen", "Dougherty", "Eron"]


def steps(app, shot):
    def round_():
        app.new_session(players=PLAYERS, buy_in=50, game="powderkeg")
        scr = app.screens["powderkeg"]
        for c in ("K:anchors", "A:flowers", "A:crabs"):
            scr.play_card(IslandCard.parse(c))
        for _ in PLAYERS[1:]:
            scr.call("live")
        scr.play_card(IslandCard.parse("3:boats"))
        for _ in PLAYERS[1:3]:
            scr.call("live")

    return [round_, lambda: None, shot("powderkeg")]


def step(app) -> None:
    """One step of a demo evening (GameSpec.demo_step), decided from ``app.session`` alone: a card turned up or
    a call on the round screen, each round's order of cards shuffled from its number, each call from the
    round's progress; the next round when one is over."""
    import random

    from companion.decks.island54 import island_deck

    if app.session is None:
        app.new_session(players=PLAYERS, buy_in=50, game="powderkeg")
        return
    s = app.session
    h = s.hand
    if h.phase == "over":
        app.next_hand()
        return
    scr = app.screens["powderkeg"]
    if app.sm.current != "powderkeg":
        app.go("powderkeg")
    if h.next_to_call is not None:
        rng = random.Random(len(s.history) * 1000 + len(h.moves))
        scr.call("die" if rng.random() < 0.2 else "live")
        return
    deck = list(island_deck())
    random.Random(len(s.history)).shuffle(deck)
    used = set(h.revealed) | ({h.dock} if h.dock is not None else set())
    scr.play_card(next(c for c in deck if c not in used))
