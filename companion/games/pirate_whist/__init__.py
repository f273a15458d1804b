"""Pirate Whist: Oh Hell with spades always trump, scored 10 + tricks for an exact bid, minus the miss otherwise.

One package: the pure rules (:mod:`.rules`), the record format and referee (:mod:`.record`), the table model
(:mod:`.table`: ``WhistTable`` for a whole game, ``WhistModel`` for the session; no Kivy), simulated players
(:mod:`.sim`), demo mode (:mod:`.demo`), the screens (``ui/``, the only Kivy code) and example records
(``examples/``, ``examples/refused/``). Registered once, here. docs/pirate-whist.md tells the rest.
"""

from __future__ import annotations

from pathlib import Path

from companion.games.pirate_whist.record import GAME_ID, rule_record
from companion.games.pirate_whist.rules import MAX_PLAYERS, MIN_PLAYERS
from companion.games.pirate_whist.table import NAME_MAX
from companion.games.registry import GameSpec, register

_EXAMPLES = Path(__file__).resolve().parent / "examples"

SPEC = register(GameSpec(
    id=GAME_ID,
    title="Pirate Whist",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    name_max=NAME_MAX,
    deck="standard52",
    uses_chips=False,
    rule_record=rule_record,
    examples=(
        _EXAMPLES / "contract-example.json",
        _EXAMPLES / "two-players-complete.json",
        _EXAMPLES / "five-players-trick-by-trick.json",
        _EXAMPLES / "three-players-tied-captains.json",
    ),
    refused_examples=tuple(sorted((_EXAMPLES / "refused").glob("*.json"))),
    table="companion.games.pirate_whist.table:WhistModel",
    screens=(
        "companion.games.pirate_whist.ui.setup:WhistSetupScreen",
        "companion.games.pirate_whist.ui.bids:WhistBidScreen",
        "companion.games.pirate_whist.ui.reveal:WhistRevealScreen",
        "companion.games.pirate_whist.ui.play:WhistPlayScreen",
        "companion.games.pirate_whist.ui.sheet:WhistSheetScreen",
        "companion.games.pirate_whist.ui.edit:WhistEditScreen",
        "companion.games.pirate_whist.ui.end:WhistEndScreen",
    ),
    setup_screen="whist_setup",
    nav=(("Scores", "whist_sheet"),),
    demo="companion.games.pirate_whist.demo:steps",
    demo_step="companion.games.pirate_whist.demo:step",
    camera=True,  # the trick in front of the seats (ui/play.py, camera.py)
    summary="Bid the exact number of tricks you will take; spades are always trump. Hand sizes go "
            "max..1..max; 10 + tricks for an exact bid, minus the miss otherwise.",
))
