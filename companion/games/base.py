"""What every referee shares: balanced coin entries and exact push/pop undo over immutable snapshots."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from companion.errors import IllegalActionError

POT = "pot"
DEFAULT_STACK = 50

A = TypeVar("A")
S = TypeVar("S")


@dataclass(frozen=True)
class Entry:
    """A balanced movement of coins: postings over players and "pot" sum to zero."""

    kind: str
    postings: tuple[tuple[str, int], ...]
    memo: str = ""

    def __post_init__(self) -> None:
        total = sum(v for _, v in self.postings)
        if total != 0:  # a referee bug, never user input
            raise AssertionError(f"unbalanced entry {self.kind}: {self.postings}")

    @property
    def moves_coins(self) -> bool:
        return any(v for _, v in self.postings)

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "postings": dict(self.postings), "memo": self.memo}


class Referee(Generic[A, S]):
    """push/pop of immutable states (python-chess style). Subclasses set ``self._state`` in __init__ and
    implement ``why_illegal(action) -> str | None`` and ``_next(action) -> new state``."""

    _state: S

    def __init__(self) -> None:
        self._history: list[tuple[A, S]] = []

    def why_illegal(self, action: A) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _next(self, action: A) -> S:  # pragma: no cover - abstract
        raise NotImplementedError

    def is_legal(self, action: A) -> bool:
        return self.why_illegal(action) is None

    def apply(self, action: A) -> None:
        """Apply a legal action; an illegal one raises IllegalActionError and changes nothing."""
        reason = self.why_illegal(action)
        if reason is not None:
            raise IllegalActionError(reason)
        new = self._next(action)
        self._history.append((action, self._state))
        self._state = new

    def push(self, action: A) -> None:
        self.apply(action)

    def undo(self) -> A:
        """Take back the last action exactly; returns it."""
        if not self._history:
            raise IllegalActionError("nothing to undo")
        action, prev = self._history.pop()
        self._state = prev
        return action

    def pop(self) -> A:
        return self.undo()

    @property
    def moves(self) -> list[A]:
        return [a for a, _ in self._history]

    def snapshot(self) -> S:
        """The immutable current state (equal snapshots mean equal games)."""
        return self._state
