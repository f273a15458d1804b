"""Pirate's Bluff: rules (rules.py), hand records (record.py), the odds calculator (odds.py), the table model
(table.py), the screens (ui/) and the rulebook's example hand (examples/). Registered once, here.

The rules' public names are re-exported: ``from companion.games.pirates_bluff import Bid, PiratesBluffHand``.
"""

from pathlib import Path

from companion.games.pirates_bluff.rules import *  # noqa: F401,F403  (the game's public API)
from companion.games.pirates_bluff.rules import MAX_PLAYERS, MIN_PLAYERS
from companion.games.pirates_bluff.record import rule_record
from companion.games.registry import GameSpec, register

HERE = Path(__file__).parent

SPEC = register(GameSpec(
    id="pirates-bluff",
    title="Pirate's Bluff",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    deck="pirates72",
    uses_chips=True,
    rule_record=rule_record,
    examples=(HERE / "examples" / "rulebook.json",),
    table="companion.games.pirates_bluff.table:PiratesBluffTable",
    screens=tuple(f"companion.games.pirates_bluff.ui.{m}" for m in (
        "deal:DealScreen", "bid:BidScreen", "showdown:ShowdownScreen", "ruling:RulingScreen", "coach:CoachScreen")),
    intents="companion.games.pirates_bluff.ui.intents:PiratesBluffIntents",
    nav=(("Coach", "coach"),),
    demo="companion.games.pirates_bluff.demo:steps",
    demo_step="companion.games.pirates_bluff.demo:step",
    start_options=("ante", "window_ms", "super_wilds", "cyclone"),
    odds="companion.games.pirates_bluff.odds",
    camera=True,
    reads_rule="companion.games.pirates_bluff.camera:first_bidder",
    reads_hold="companion.games.pirates_bluff.camera:left_for_tap",
    pot_carry_at="options.pot_carry",
    summary="Bid on how many of a rank are in play; CALL buttons; chips",
))
