"""What a game gives the phone server: the source-of-truth interface (see docs/phones.md).

The server never reads a game's state directly. It asks a ``SecretSource`` for the few typed values a phone may
see (``PublicState`` for everyone, ``SeatState`` for one seat) and for the ``SecretRound`` that is open now, and
tells it when that round has been revealed. Whist bids, Bluff Pirate votes and the voter pick, Powderkeg's
live/die/fold all plug in through these four methods; the server does not change per game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from companion.errors import PirateTableError
from companion.secrets import SecretRound

MAX_TEXT = 200


def _text(name: str, v: object) -> str:
    if not isinstance(v, str) or len(v) > MAX_TEXT or any(ord(c) < 32 for c in v):
        raise PirateTableError(f"phones: {name} must be a one-line text of at most {MAX_TEXT} characters")
    return v


@dataclass(frozen=True)
class PublicState:
    """What every phone and the tablet may see about the game: its title, a one-line phase text and whose turn
    it is (None when nobody's, or everyone answers at once). Nothing secret may be put here."""

    game: str
    phase: str = ""
    turn: str | None = None

    def __post_init__(self) -> None:
        _text("game", self.game)
        _text("phase", self.phase)
        if self.turn is not None:
            _text("turn", self.turn)


@dataclass(frozen=True)
class SeatState:
    """What one seat's phone may see about itself: its chip stack or score (``label`` says which) and a private
    one-line note (e.g. the question's prompt for this seat). Never another seat's secret."""

    score: int | None = None
    label: str = "chips"
    note: str = ""

    def __post_init__(self) -> None:
        if self.score is not None and (isinstance(self.score, bool) or not isinstance(self.score, int)):
            raise PirateTableError("phones: a score is a whole number")
        _text("label", self.label)
        _text("note", self.note)


@runtime_checkable
class SecretSource(Protocol):
    """The game's side. All four methods are called on the app's event loop, never concurrently."""

    def seats(self) -> Sequence[str]:
        """The seats phones may join, in table order (fixed while the server runs)."""

    def public_state(self) -> PublicState:
        """The public line for everyone."""

    def seat_state(self, seat: str) -> SeatState:
        """This seat's own stack/score and note."""

    def open_secret(self) -> SecretRound | None:
        """The secret round phones may answer now (the same object until it is revealed), or None. Phones can
        only answer rounds that have ``choices`` (each phone shows them as buttons)."""

    def secret_revealed(self, rnd: SecretRound, answers: Mapping[str, Any]) -> None:
        """Called exactly once per round, right after the phone table revealed it (the last answer came in,
        from a phone or the tablet): apply the answers to the game."""
