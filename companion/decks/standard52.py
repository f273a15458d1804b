"""The standard 52-card deck (Pirate Whist, Bluffing Battles).

A card is rank then suit: rank ``2``..``10`` (``T`` accepted for 10), ``J``, ``Q``, ``K``, ``A``; suit ``S``,
``H``, ``D``, ``C``. Case-insensitive on input; ``str()`` writes ``10H``, ``AS``, ``QD``. ``rank`` is 2..14
(A high), so cards of one suit compare by rank.
"""

from __future__ import annotations

from dataclasses import dataclass

from companion.decks import Deck, register_deck
from companion.errors import CardError

SUITS = "SHDC"
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
SUIT_SYMBOLS = {"S": "\u2660", "H": "\u2665", "D": "\u2666", "C": "\u2663"}
RED_SUITS = "HD"
RANKS = tuple(range(2, 15))
RANK_TEXT = {**{r: str(r) for r in range(2, 11)}, 11: "J", 12: "Q", 13: "K", 14: "A"}
RANK_NAMES = {**{r: str(r) for r in range(2, 11)}, 11: "Jack", 12: "Queen", 13: "King", 14: "Ace"}
_RANK_OF = {v: k for k, v in RANK_TEXT.items()}
_RANK_OF["T"] = 10


@dataclass(frozen=True, order=True, slots=True)
class StdCard:
    """One standard card. Orders by (rank, suit letter); compare ranks for trick-taking."""

    rank: int
    suit: str

    def __post_init__(self) -> None:
        if isinstance(self.rank, bool) or not isinstance(self.rank, int) or self.rank not in RANKS:
            raise CardError(f"rank must be 2-14, got {self.rank!r}")
        if not isinstance(self.suit, str) or len(self.suit) != 1 or self.suit not in SUITS:
            raise CardError(f"suit must be one of S, H, D, C, got {self.suit!r}")

    @classmethod
    def parse(cls, text: object) -> "StdCard":
        """Parse ``"10H"``, ``"TH"``, ``"as"``, ``"qd"``. Only ASCII ranks and suits are accepted."""
        if not isinstance(text, str):
            raise CardError(f"a card is a string like '10H' or 'AS', got {text!r}")
        s = text.strip().upper()
        if not s.isascii() or len(s) < 2:
            raise CardError(f"not a standard card: {text!r} (expected rank 2-10/T/J/Q/K/A then suit S/H/D/C)")
        r, suit = s[:-1], s[-1]
        if r not in _RANK_OF:
            raise CardError(f"not a standard card: {text!r} (rank must be 2-10, T, J, Q, K or A)")
        if suit not in SUITS:
            raise CardError(f"not a standard card: {text!r} (suit must be S, H, D or C)")
        return cls(_RANK_OF[r], suit)

    @property
    def is_red(self) -> bool:
        return self.suit in RED_SUITS

    def __str__(self) -> str:
        return f"{RANK_TEXT[self.rank]}{self.suit}"

    def display(self) -> str:
        """Short face for the screen: ``10♥``."""
        return f"{RANK_TEXT[self.rank]}{SUIT_SYMBOLS[self.suit]}"


def full_deck() -> tuple[StdCard, ...]:
    """All 52 cards, suit by suit (S, H, D, C), 2 up to A."""
    return tuple(StdCard(r, s) for s in SUITS for r in RANKS)


STANDARD52 = register_deck(Deck(
    id="standard52",
    title="Standard 52-card deck",
    cards=full_deck(),
    parse=StdCard.parse,
    display=StdCard.display,
    camera_model="standard52",  # vision/suited_reader.py: models/standard52_reader.int8.onnx
    aliases=("standard",),
    faces="vision.decks.standard:FACES",
))
