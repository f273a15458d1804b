"""Decks are values: a ``Deck`` holds its cards, its notation (parse / format), display names and the id of the
camera model that reads it. Games name a deck; nothing else hard-codes one.

    >>> from companion.decks import get_deck
    >>> d = get_deck("standard52")
    >>> str(d.parse("th"))
    '10H'
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from companion.errors import CardError


@dataclass(frozen=True)
class Deck:
    """One kind of deck. ``parse`` raises CardError on bad text; ``notation`` is the canonical string."""

    id: str
    title: str
    cards: tuple[Any, ...]
    parse: Callable[[Any], Any]
    notation: Callable[[Any], str] = str
    display: Callable[[Any], str] = str
    camera_model: str | None = None
    aliases: tuple[str, ...] = field(default=())

    @property
    def size(self) -> int:
        return len(self.cards)

    def parse_many(self, texts: Any) -> list[Any]:
        if not isinstance(texts, (list, tuple)):
            raise CardError(f"expected a list of cards, got {type(texts).__name__}")
        return [self.parse(t) for t in texts]


_DECKS: dict[str, Deck] = {}


def register_deck(deck: Deck) -> Deck:
    for name in (deck.id, *deck.aliases):
        if name in _DECKS and _DECKS[name] is not deck:
            raise ValueError(f"deck name {name!r} registered twice")
        _DECKS[name] = deck
    return deck


def get_deck(name: str) -> Deck:
    """The deck called ``name`` (id or alias); CardError naming the known decks otherwise."""
    _load()
    try:
        return _DECKS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted({d.id for d in _DECKS.values()}))
        raise CardError(f"unknown deck {name!r} (known: {known})") from None


def decks() -> list[Deck]:
    _load()
    seen: dict[str, Deck] = {}
    for d in _DECKS.values():
        seen.setdefault(d.id, d)
    return list(seen.values())


def _load() -> None:
    # The built-in decks register on import.
    from companion.decks import island54, pirates72, standard52  # noqa: F401
