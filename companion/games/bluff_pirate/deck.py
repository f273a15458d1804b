"""The Bluff Pirate deck as a value: 90 cards, named by their accessory or ``pirate``.

The rulebook's box lists 90 accessory cards and 10 pirate cards; the project's contract and issue conserve 90
cards across pile, hands and board, so the deck in play here is 90 cards: eight accessories of ten cards each and
ten pirate cards (docs/bluff-pirate.md). The rulebook does not name the accessories; ``hat``, ``sword`` and
``parrot`` come from the contract's example, the other five are the project's names. Records may name cards by any
string (the contract compares names exactly); the table screens offer these names.
"""

from __future__ import annotations

from companion.decks import Deck, register_deck
from companion.errors import CardError
from companion.games.bluff_pirate.rules import PIRATE, name_problem

ACCESSORIES = ("hat", "sword", "parrot", "map", "spyglass", "compass", "anchor", "barrel")
KINDS = ACCESSORIES + (PIRATE,)
COPIES = 10


def parse(text: object) -> str:
    """A card name: one of the deck's kinds, case-insensitive (``"Hat"`` -> ``"hat"``)."""
    why = name_problem(text, "card name")
    if why:
        raise CardError(why)
    s = str(text).lower()
    if s not in KINDS:
        raise CardError(f"not a Bluff Pirate card: {text!r} (cards: {', '.join(KINDS)})")
    return s


def display(card: str) -> str:
    return card.capitalize()


ACCESSORY90 = register_deck(Deck(
    id="accessory90",
    title="Bluff Pirate cards (90)",
    cards=tuple(k for k in KINDS for _ in range(COPIES)),
    parse=parse,
    notation=str,
    display=display,
    camera_model=None,
    aliases=("bluff-pirate",),
))
