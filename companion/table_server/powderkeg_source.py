"""Powderkeg's live / die / fold through phones: every player still in calls at once on a SecretRound; the
calls are applied to the referee, in calling order, only when all are in (the rulebook's one-by-one calls with
coins face up / face down become simultaneous and hidden; the referee's rulings are the same).

Until Powderkeg moves into the game registry, this adapter lives here; it shows the shape a game's source has
(docs/phones.md)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

from companion.games import powderkeg as pk
from companion.secrets import SecretRound
from companion.table_server.source import PublicState, SeatState

KIND = "live-die-fold"


class PowderkegSource:
    """``hand()`` returns the PowderkegRound in play (or None between rounds); ``apply(action)`` applies an
    action to it the way the app does (e.g. ``TableSession.apply``, which also saves)."""

    def __init__(self, players: Sequence[str], hand: Callable[[], pk.PowderkegRound | None],
                 apply: Callable[[Any], None]) -> None:
        self._players = tuple(players)
        self._hand = hand
        self._apply = apply
        self._round: SecretRound | None = None
        self._key: tuple[Any, ...] | None = None

    def seats(self) -> Sequence[str]:
        return self._players

    def _calling(self) -> pk.PowderkegRound | None:
        h = self._hand()
        if h is None or h.phase != "calling" or h.pending_calls:
            return None  # pending calls: the tablet is taking them one by one; phones wait
        return h

    def open_secret(self) -> SecretRound | None:
        h = self._calling()
        if h is None:
            self._round, self._key = None, None
            return None
        key = (id(h), len(h.moves), h.in_players)
        if self._key != key or self._round is None:
            self._round = SecretRound(KIND, h.in_players, pk.CALLS)
            self._key = key
        return self._round

    def secret_revealed(self, rnd: SecretRound, answers: Mapping[str, Any]) -> None:
        for p in rnd.seats:  # calling order: the referee sees the calls the way the rulebook orders them
            self._apply(pk.Call(p, answers[p]))
        self._round, self._key = None, None

    def public_state(self) -> PublicState:
        h = self._hand()
        if h is None:
            return PublicState("Powderkeg", "Between rounds", None)
        n = len(h.revealed)
        phase = {
            "dock": "The dealer docks a card",
            "opening": f"The dealer turns the opening cards ({n} up)",
            "calling": f"Live, Die or Fold on card {n + 1}",
            "reveal": f"The dealer turns card {n + 1}",
            "showing": "The dealer shows the rest of the hand",
            "over": "Round over",
        }.get(h.phase, h.phase)
        turn = None if h.phase == "calling" else h.dealer
        return PublicState("Powderkeg", phase, turn)

    def seat_state(self, seat: str) -> SeatState:
        h = self._hand()
        if h is None:
            return SeatState(None, "chips", "")
        note = ""
        if h.phase == "calling" and seat in h.in_players:
            note = f"Your call on card {len(h.revealed) + 1}"
        elif seat in h.out:
            note = "You are out of this round"
        return SeatState(h.stacks[seat], "chips", note)
