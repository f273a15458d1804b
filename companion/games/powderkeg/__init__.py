"""Powderkeg: rules (rules.py), round records (record.py), the table model (table.py), the screens (ui/) and the
rulebook's example round (examples/). Registered once, here.

The rules' public names are re-exported: ``from companion.games.powderkeg import Dock, PowderkegRound``.
"""

from pathlib import Path

from companion.games.powderkeg.rules import *  # noqa: F401,F403  (the game's public API)
from companion.games.powderkeg.rules import MAX_PLAYERS, MIN_PLAYERS
from companion.games.powderkeg.record import rule_record
from companion.games.registry import GameSpec, register

HERE = Path(__file__).parent

SPEC = register(GameSpec(
    id="powderkeg",
    title="Powderkeg",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    deck="island54",
    uses_chips=True,
    rule_record=rule_record,
    examples=(HERE / "examples" / "rulebook.json",),
    table="companion.games.powderkeg.table:PowderkegTable",
    screens=("companion.games.powderkeg.ui.round:PowderkegScreen",),
    demo="companion.games.powderkeg.demo:steps",
    demo_step="companion.games.powderkeg.demo:step",
    camera=True,  # the dock card and each card turned up (ui/round.py, camera.py)
    summary="Live, die or fold as the Island Deck's cards turn up; chips",
))
