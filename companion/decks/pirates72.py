"""Card values for the Pirate's Bluff deck.

A Pirate's Bluff card is a rank 0-8 (0 is the wild) and a priority letter A-H, so every one of the 72 cards
is unique. It is written rank then letter: ``"7C"``; a wild may be written ``"0B"`` or ``"WB"``.

Cards order by (rank, letter): the lowest card is the one that makes the first bid, wilds lowest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from companion.decks import Deck, register_deck
from companion.errors import CardError

RANKS = tuple(range(9))  # 0 is the wild
NATURAL_RANKS = tuple(range(1, 9))
LETTERS = "ABCDEFGH"
WILD = 0


@dataclass(frozen=True, order=True, slots=True)
class PBCard:
    """One card of the 72-card Pirate's Bluff deck. Orders by rank, then letter (A earliest)."""

    rank: int
    letter: str

    def __post_init__(self) -> None:
        if not isinstance(self.rank, int) or isinstance(self.rank, bool) or self.rank not in RANKS:
            raise CardError(f"rank must be 0-8, got {self.rank!r}")
        if not isinstance(self.letter, str) or len(self.letter) != 1 or self.letter not in LETTERS:
            raise CardError(f"letter must be one of A-H, got {self.letter!r}")

    @property
    def is_wild(self) -> bool:
        return self.rank == WILD

    @classmethod
    def parse(cls, text: str) -> "PBCard":
        """Parse ``"7C"``, ``"0B"`` or ``"WB"`` (case-insensitive, surrounding spaces ignored)."""
        if not isinstance(text, str):
            raise CardError(f"a card is a string like '7C', got {text!r}")
        s = text.strip().upper()
        if len(s) != 2:
            raise CardError(f"not a Pirate's Bluff card: {text!r} (expected rank 0-8 or W, then letter A-H)")
        r, letter = s[0], s[1]
        if r == "W":
            rank = WILD
        elif r in "0123456789" and int(r) in RANKS:  # ASCII digits only (not "٣")
            rank = int(r)
        else:
            raise CardError(f"not a Pirate's Bluff card: {text!r} (rank must be 0-8 or W)")
        if letter not in LETTERS:
            raise CardError(f"not a Pirate's Bluff card: {text!r} (letter must be A-H)")
        return cls(rank, letter)

    def __str__(self) -> str:
        return f"{self.rank}{self.letter}"


def full_deck() -> tuple[PBCard, ...]:
    """All 72 cards, in (rank, letter) order."""
    return tuple(PBCard(r, letter) for r in RANKS for letter in LETTERS)


def parse_cards(texts: Iterable[str]) -> list[PBCard]:
    return [PBCard.parse(t) for t in texts]


def rank_name(rank: int, plural: bool = False) -> str:
    """Spoken name of a rank: 'Seven' / 'Sevens'; 0 is 'Wild'."""
    names = ["Wild", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight"]
    plurals = ["Wilds", "Ones", "Twos", "Threes", "Fours", "Fives", "Sixes", "Sevens", "Eights"]
    return (plurals if plural else names)[rank]


def display(card: PBCard) -> str:
    """Short face for the screen: ``7C``; a wild shows as ``W`` and its letter (``WB``)."""
    return f"W{card.letter}" if card.is_wild else str(card)


# The camera's models for this deck live in models/ (card_det.onnx + index_reader.onnx; vision/detect.py).
PIRATES72 = register_deck(Deck(
    id="pirates72",
    title="Pirate's Bluff deck (72 cards: ranks 0-8, letters A-H)",
    cards=full_deck(),
    parse=PBCard.parse,
    display=display,
    camera_model="pirates72",
    aliases=("pirates-bluff",),
))
