"""Bluff Pirate (2-5 players): draw two, lay a set of 3-5 with 1-2 visible (bluffing or not), one secretly
chosen vote decides, "All aboard!" steals from a player ahead, the first to the treasure island wins.

rules.py (pure state machine), record.py (``pirate-table referee``), deck.py (the 90-card deck value),
table.py (the table model the app drives), model.py (its TableModel for the session), ui/ (the screens),
demo.py (demo mode). Docs: docs/bluff-pirate.md.
"""

from __future__ import annotations

from pathlib import Path

from companion.games.bluff_pirate import deck as _deck  # noqa: F401  (registers the deck)
from companion.games.bluff_pirate.record import rule_record
from companion.games.bluff_pirate.rules import MAX_PLAYERS, MIN_PLAYERS
from companion.games.registry import GameSpec, register

_EXAMPLES = Path(__file__).resolve().parent / "examples"

SPEC = register(GameSpec(
    id="bluff-pirate",
    title="Bluff Pirate",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    deck="accessory90",
    uses_chips=False,
    rule_record=rule_record,
    examples=tuple(sorted(_EXAMPLES.glob("*.json"), key=lambda p: (p.name != "contract.json", p.name))),
    refused_examples=tuple(sorted((_EXAMPLES / "refused").glob("*.json"))),
    table="companion.games.bluff_pirate.model:BluffPirateModel",
    screens=tuple(f"companion.games.bluff_pirate.ui.{m}:BluffPirate{c}Screen" for m, c in (
        ("setup", "Setup"), ("race", "Race"), ("set", "Set"), ("vote", "Vote"), ("pick", "Pick"), ("land", "Land"),
        ("history", "History"))),
    setup_screen="bp_setup",
    demo="companion.games.bluff_pirate.demo:steps",
    summary="Race to the treasure island: lay sets of 3-5 cards, bluff, and vote in secret.",
))
