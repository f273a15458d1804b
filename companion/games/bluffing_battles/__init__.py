"""Bluffing Battles (Jeff Wilcox): two players, one or two standard decks, fights and battles with hidden
prizes, four variants. Rules: rules.py; records: record.py; table model: table.py; demo games: demo.py."""

from __future__ import annotations

from pathlib import Path

from companion.games.bluffing_battles.record import rule_record
from companion.games.registry import GameSpec, register

_HERE = Path(__file__).resolve().parent
EXAMPLES = tuple(sorted((_HERE / "examples").glob("*.json")))
REFUSED = tuple(sorted((_HERE / "examples" / "refused").glob("*.json")))


SPEC = register(GameSpec(
    id="bluffing-battles",
    title="Bluffing Battles",
    min_players=2,
    max_players=2,
    deck="standard52",
    uses_chips=False,
    rule_record=rule_record,
    examples=EXAMPLES,
    refused_examples=REFUSED,
    table="companion.games.bluffing_battles.table:BattlesModel",
    screens=(
        "companion.games.bluffing_battles.ui.setup:BattlesSetupScreen",
        "companion.games.bluffing_battles.ui.fight:BattlesFightScreen",
        "companion.games.bluffing_battles.ui.history:BattlesHistoryScreen",
    ),
    setup_screen="battles_setup",
    demo="companion.games.bluffing_battles.demo:steps",
    demo_step="companion.games.bluffing_battles.demo:step",
    camera=True,  # the two revealed cards of a fight (ui/fight.py, camera.py)
    summary="Two players reveal a card at once; the higher takes both; equal cards start a battle with "
            "hidden prizes. The larger score pile wins.",
))
