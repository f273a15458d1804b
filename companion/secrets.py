"""Simultaneous secrets (Whist bids, Bluff Pirate votes and the voter pick, Powderkeg live/die/fold).

One interface for every way a secret reaches the table: the passed tablet and the players' phones both call
``SecretRound.submit``. A round keeps every submitted value to itself and reveals all of them at once, when the
last expected seat is in. ``public_view()`` is all anyone may see before that: who is still to answer, never
what anyone answered. Pure (no Kivy, no network); the owner of the round (a game's table model) decides what a
valid answer is through ``choices`` or ``validate``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from companion.errors import IllegalActionError


@dataclass
class SecretRound:
    """Collects one secret per expected seat; reveals them all together.

    ``kind`` names the question ("bid", "vote", "pick", "live-die-fold"); ``choices`` (if given) is the full list
    of allowed answers; ``validate(seat, value)`` (if given) returns an error text or None. A seat may change
    its answer until the round is revealed (``allow_change``); the reveal order is the ``seats`` order.
    """

    kind: str
    seats: tuple[str, ...]
    choices: tuple[Any, ...] | None = None
    validate: Callable[[str, Any], str | None] | None = None
    allow_change: bool = False
    _values: dict[str, Any] = field(default_factory=dict, repr=False)
    _revealed: bool = False

    def __post_init__(self) -> None:
        self.seats = tuple(self.seats)
        if not self.seats:
            raise IllegalActionError(f"{self.kind}: a secret round needs at least one seat")
        if len(set(self.seats)) != len(self.seats):
            raise IllegalActionError(f"{self.kind}: a seat is listed twice")

    def __repr__(self) -> str:  # never the values
        return f"SecretRound(kind={self.kind!r}, waiting={self.waiting()!r}, revealed={self._revealed})"

    def why_not(self, seat: str, value: Any) -> str | None:
        if self._revealed:
            return f"{self.kind}: already revealed"
        if seat not in self.seats:
            return f"{self.kind}: {seat!r} has no secret to give in this round"
        if seat in self._values and not self.allow_change:
            return f"{self.kind}: {seat} has already answered"
        if self.choices is not None and value not in self.choices:
            return f"{self.kind}: {value!r} is not one of the choices"
        if self.validate is not None:
            return self.validate(seat, value)
        return None

    def submit(self, seat: str, value: Any) -> bool:
        """Record ``seat``'s secret; IllegalActionError (nothing changed) when not allowed.
        Returns True when this was the last one missing (the round can be revealed)."""
        reason = self.why_not(seat, value)
        if reason is not None:
            raise IllegalActionError(reason)
        self._values[seat] = value
        return self.complete

    def withdraw(self, seat: str) -> None:
        """Take back ``seat``'s answer before the reveal (undo on the passed tablet)."""
        if self._revealed:
            raise IllegalActionError(f"{self.kind}: already revealed")
        if seat not in self._values:
            raise IllegalActionError(f"{self.kind}: {seat} has not answered")
        del self._values[seat]

    def has_answered(self, seat: str) -> bool:
        return seat in self._values

    def own_answer(self, seat: str) -> Any:
        """``seat``'s own answer before the reveal (None if it has not answered): for that seat's own screen
        only (its phone shows "your answer"), never for anyone else's."""
        return self._values.get(seat)

    def waiting(self) -> list[str]:
        return [s for s in self.seats if s not in self._values]

    @property
    def complete(self) -> bool:
        return len(self._values) == len(self.seats)

    @property
    def revealed(self) -> bool:
        return self._revealed

    def reveal(self) -> dict[str, Any]:
        """All answers at once, in seat order; IllegalActionError while any is missing."""
        if not self.complete:
            raise IllegalActionError(f"{self.kind}: still waiting for {', '.join(self.waiting())}")
        self._revealed = True
        return {s: self._values[s] for s in self.seats}

    def answers(self) -> dict[str, Any]:
        """The answers, only after the reveal."""
        if not self._revealed:
            raise IllegalActionError(f"{self.kind}: not revealed yet")
        return {s: self._values[s] for s in self.seats}

    def public_view(self) -> dict[str, Any]:
        """What any screen may show before the reveal: the question and who is still to answer. Same shape
        and size whatever the answers are; after the reveal the answers are included."""
        view: dict[str, Any] = {
            "kind": self.kind,
            "seats": list(self.seats),
            "waiting": self.waiting(),
            "revealed": self._revealed,
        }
        if self._revealed:
            view["answers"] = self.answers()
        return view

    # Saved sessions may hold the secrets (for resume after a kill); screens, logs and exports never do.
    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "seats": list(self.seats), "values": dict(self._values),
                "revealed": self._revealed, "allow_change": self.allow_change,
                "choices": list(self.choices) if self.choices is not None else None}

    @classmethod
    def from_json(cls, data: dict[str, Any], validate: Callable[[str, Any], str | None] | None = None
                  ) -> "SecretRound":
        choices = data.get("choices")
        r = cls(data["kind"], tuple(data["seats"]), tuple(choices) if choices is not None else None,
                validate, bool(data.get("allow_change", False)))
        for seat, value in data.get("values", {}).items():
            r.submit(seat, value)
        r._revealed = bool(data.get("revealed", False))
        return r
