"""The source for a registered game played in the app: a ``TableSession`` and its table model.

A table model takes phone answers by defining a few optional methods (duck-typed; docs/phones.md):

- ``open_secret() -> SecretRound | None`` — the question phones may answer now (required for phones);
- ``phone_choices(rnd) -> tuple | None`` — the answers to offer when the round has no ``choices`` (Whist bids:
  ``tuple(range(cards + 1))``);
- ``secret_action(seat, value) -> action`` — the game action that records one answer (a game that saves every
  bid as an event); without it the answer goes straight into the SecretRound;
- ``reveal_action(rnd) -> action`` — the game action that reveals a complete round; without it the round is
  revealed here and ``revealed_actions(rnd, answers) -> list`` (default none) are applied;
- ``phone_phase() -> str``, ``phone_turn() -> str | None``, ``phone_note(seat) -> str`` — the public line,
  whose turn it is, and a seat's private line.

Every action goes through ``apply`` (the app applies it through the session and saves), so phone answers are
recorded, saved and undone exactly like the tablet's. Pure: no Kivy, no network.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from companion.secrets import SecretRound
from companion.table_server.source import PublicState, SeatState


class SessionSource:
    def __init__(self, session: Any, apply: Callable[[Any], None]) -> None:
        self.session = session
        self._apply = apply

    @property
    def model(self) -> Any:
        return self.session.model

    @staticmethod
    def supports(session: Any) -> bool:
        """True when the session's game takes secret answers from phones."""
        return session is not None and callable(getattr(session.model, "open_secret", None))

    def seats(self) -> Sequence[str]:
        return tuple(self.session.players)

    def public_state(self) -> PublicState:
        m = self.model
        phase = m.phone_phase() if hasattr(m, "phone_phase") else str(m.phase or "")
        turn = m.phone_turn() if hasattr(m, "phone_turn") else None
        return PublicState(self.session.spec.title, phase, turn)

    def seat_state(self, seat: str) -> SeatState:
        s = self.session
        note = self.model.phone_note(seat) if hasattr(self.model, "phone_note") else ""
        if s.uses_chips:
            stacks = getattr(s.hand, "stacks", None) if s.hand is not None else None
            score = (stacks if isinstance(stacks, dict) else s.stacks).get(seat)
            return SeatState(score, "chips", note)
        totals = s.totals() if hasattr(s, "totals") else {}
        return SeatState(totals.get(seat), "points", note)

    def open_secret(self) -> SecretRound | None:
        return self.model.open_secret()

    def phone_choices(self, rnd: SecretRound) -> tuple[Any, ...] | None:
        f = getattr(self.model, "phone_choices", None)
        return f(rnd) if f is not None else None

    def submit_secret(self, rnd: SecretRound, seat: str, value: Any) -> None:
        f = getattr(self.model, "secret_action", None)
        if f is not None:
            self._apply(f(seat, value))
        else:
            rnd.submit(seat, value)

    def reveal_secret(self, rnd: SecretRound) -> None:
        f = getattr(self.model, "reveal_action", None)
        if f is not None:
            self._apply(f(rnd))
        else:
            self.secret_revealed(rnd, rnd.reveal())

    def secret_revealed(self, rnd: SecretRound, answers: Mapping[str, Any]) -> None:
        f = getattr(self.model, "revealed_actions", None)
        for action in (f(rnd, answers) if f is not None else ()):
            self._apply(action)
