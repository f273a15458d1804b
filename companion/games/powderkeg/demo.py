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
