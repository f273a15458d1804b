"""Card values for the 54-card Island Deck (Powderkeg).

Six suits of nine ranks: A, 2, 3, 4, 5, 6, 7, Q, K. A is lowest and K highest (the order for setting a Powderkeg
hand). A-7 are *number cards*, Q and K *face cards*.

Every suit has a colour (the published deck's name) and a symbol (the rules' name). The rules name four symbols
(anchors, boats, crabs, flowers); the project names the other two (palms, skulls). The colour <-> symbol pairing
below is a project decision (docs/powderkeg.md) and the card-face contract for our printed decks:

    symbol   colour   warmth
    boats    red      warm
    crabs    pink     warm
    flowers  yellow   warm
    anchors  blue     cool
    palms    green    cool
    skulls   purple   cool

A card is written ``"RANK:SUIT"``: ``"K:anchors"``, ``"3:boats"``, ``"Q:red"``. Either suit name is accepted
(case-insensitive, singular or plural symbol); ``str()`` prints the canonical form, rank then plural symbol.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from companion.decks import Deck, register_deck
from companion.errors import CardError

RANK_NAMES = ("A", "2", "3", "4", "5", "6", "7", "Q", "K")  # index = order, A lowest
RANK_ORDER = {r: i for i, r in enumerate(RANK_NAMES)}
NUMBER_RANKS = RANK_NAMES[:7]
FACE_RANKS = ("Q", "K")

# (symbol, colour): the order here is the suit order used for sorting and full_deck().
SUITS: tuple[tuple[str, str], ...] = (
    ("anchors", "blue"),
    ("boats", "red"),
    ("crabs", "pink"),
    ("flowers", "yellow"),
    ("palms", "green"),
    ("skulls", "purple"),
)
SYMBOLS = tuple(s for s, _ in SUITS)
COLOUR_OF = dict(SUITS)
SYMBOL_OF_COLOUR = {c: s for s, c in SUITS}
WARM = ("red", "pink", "yellow")
COOL = ("blue", "green", "purple")

_SUIT_ALIASES: dict[str, str] = {}
for _sym, _col in SUITS:
    _SUIT_ALIASES[_sym] = _sym
    _SUIT_ALIASES[_sym[:-1]] = _sym  # singular: "anchor"
    _SUIT_ALIASES[_col] = _sym
_RANK_ALIASES = {r.lower(): r for r in RANK_NAMES}
_RANK_ALIASES.update({"1": "A", "ace": "A", "queen": "Q", "king": "K"})


@dataclass(frozen=True, slots=True)
class IslandCard:
    """One card of the Island Deck. ``rank`` is one of A,2..7,Q,K; ``suit`` is the canonical plural symbol.

    Cards compare by (rank order, suit order), so sorting a hand gives a legal Powderkeg set.
    """

    rank: str
    suit: str

    def __post_init__(self) -> None:
        if self.rank not in RANK_ORDER:
            raise CardError(f"Island rank must be one of {', '.join(RANK_NAMES)}, got {self.rank!r}")
        if self.suit not in COLOUR_OF:
            raise CardError(f"Island suit must be one of {', '.join(SYMBOLS)}, got {self.suit!r}")

    @property
    def order(self) -> int:
        """0 (A) .. 8 (K): the order for setting a hand."""
        return RANK_ORDER[self.rank]

    @property
    def is_face(self) -> bool:
        return self.rank in FACE_RANKS

    @property
    def is_number(self) -> bool:
        return not self.is_face

    @property
    def colour(self) -> str:
        return COLOUR_OF[self.suit]

    def _key(self) -> tuple[int, int]:
        return (RANK_ORDER[self.rank], SYMBOLS.index(self.suit))

    def __lt__(self, other: "IslandCard") -> bool:
        if not isinstance(other, IslandCard):
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: "IslandCard") -> bool:
        if not isinstance(other, IslandCard):
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: "IslandCard") -> bool:
        if not isinstance(other, IslandCard):
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: "IslandCard") -> bool:
        if not isinstance(other, IslandCard):
            return NotImplemented
        return self._key() >= other._key()

    @classmethod
    def parse(cls, text: str) -> "IslandCard":
        """Parse ``"K:anchors"``, ``"3:boats"``, ``"Q:red"`` (case-insensitive; colour or symbol, singular or
        plural; ``1``/``ace`` for A)."""
        if not isinstance(text, str):
            raise CardError(f"an Island card is a string like 'K:anchors', got {text!r}")
        parts = text.strip().lower().split(":")
        if len(parts) != 2:
            raise CardError(f"not an Island card: {text!r} (expected RANK:SUIT, e.g. 'K:anchors' or 'Q:red')")
        r, s = parts[0].strip(), parts[1].strip()
        if r not in _RANK_ALIASES:
            raise CardError(f"not an Island card: {text!r} (rank must be one of {', '.join(RANK_NAMES)})")
        if s not in _SUIT_ALIASES:
            names = ", ".join(f"{sym}/{col}" for sym, col in SUITS)
            raise CardError(f"not an Island card: {text!r} (suit must be one of {names})")
        return cls(_RANK_ALIASES[r], _SUIT_ALIASES[s])

    def __str__(self) -> str:
        return f"{self.rank}:{self.suit}"


def island_deck() -> tuple[IslandCard, ...]:
    """All 54 cards, in (rank, suit) order."""
    return tuple(IslandCard(r, s) for r in RANK_NAMES for s in SYMBOLS)


def parse_island_cards(texts: Iterable[str]) -> list[IslandCard]:
    return [IslandCard.parse(t) for t in texts]


def is_dead(cards: Iterable[IslandCard]) -> bool:
    """A Powderkeg hand is dead when it holds a number card and a face card of the same suit."""
    numbers: set[str] = set()
    faces: set[str] = set()
    for c in cards:
        (faces if c.is_face else numbers).add(c.suit)
    return not numbers.isdisjoint(faces)


ISLAND54 = register_deck(Deck(
    id="island54",
    title="Island Deck (54 cards: six suits of A, 2-7, Q, K)",
    cards=island_deck(),
    parse=IslandCard.parse,
    camera_model="island54",  # vision/suited_reader.py: models/island54_reader.int8.onnx
    aliases=("island",),
    faces="vision.decks.island:FACES",
))
