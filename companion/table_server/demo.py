"""A generic demo source: a series of secret rounds (any kind, any choices), each revealed at once. Used by the
demo command, the benchmark and the tests; a game's own source looks the same (see docs/phones.md)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from companion.secrets import SecretRound
from companion.table_server.source import PublicState, SeatState


class DemoSource:
    """``rounds`` secret rounds of ``kind`` with ``choices``; every seat is asked each time. Each seat scores
    one point per round it answered with the most common answer (just so the phones have a score to show)."""

    def __init__(self, seats: Sequence[str], *, kind: str = "vote", choices: Sequence[Any] = ("yes", "no"),
                 rounds: int = 1, title: str = "Demo vote") -> None:
        self._seats = tuple(seats)
        self.kind = kind
        self.choices = tuple(choices)
        self.rounds = rounds
        self.title = title
        self.history: list[dict[str, Any]] = []
        self.scores = {s: 0 for s in self._seats}
        self._open: SecretRound | None = self._new() if rounds > 0 else None

    def _new(self) -> SecretRound:
        return SecretRound(self.kind, self._seats, self.choices)

    def seats(self) -> Sequence[str]:
        return self._seats

    def public_state(self) -> PublicState:
        n = len(self.history)
        phase = f"Round {n + 1} of {self.rounds}" if self._open is not None else "All rounds played"
        return PublicState(self.title, phase, None)

    def seat_state(self, seat: str) -> SeatState:
        note = f"Your {self.kind}" if self._open is not None and seat in self._open.seats else ""
        return SeatState(self.scores[seat], "points", note)

    def open_secret(self) -> SecretRound | None:
        return self._open

    def secret_revealed(self, rnd: SecretRound, answers: Mapping[str, Any]) -> None:
        assert rnd is self._open
        self.history.append(dict(answers))
        counts: dict[Any, int] = {}
        for v in answers.values():
            counts[v] = counts.get(v, 0) + 1
        top = max(counts.values())
        for s, v in answers.items():
            if counts[v] == top:
                self.scores[s] += 1
        self._open = self._new() if len(self.history) < self.rounds else None
