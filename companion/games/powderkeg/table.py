"""Powderkeg at the table: the TableModel (companion/games/registry.py) the session and the app run.

A round is one deal (:class:`PowderkegRound`); the deal passes to the left after each round. The round in play
is saved as its moves (dock, reveals, calls) and replayed on resume.
"""

from __future__ import annotations

from typing import Any, Sequence

from companion.decks.island54 import IslandCard
from companion.errors import PirateTableError
from companion.games.powderkeg.record import ruling
from companion.games.powderkeg.rules import CALLS, Call, Dock, Options, PowderkegRound, Reveal
from companion.games.registry import RoundStart, TableModel
from companion.secrets import SecretRound


def options_of(options: Any) -> Options:
    if options is None:
        return Options()
    if isinstance(options, Options):
        return options
    if not isinstance(options, dict):
        raise PirateTableError(f"Powderkeg options: expected an object, got {options!r}")
    known = set(Options().as_dict())
    unknown = set(options) - known
    if unknown:
        raise PirateTableError(f"Powderkeg options: unknown option {sorted(unknown)[0]!r}")
    return Options(**options)


class PowderkegTable(TableModel):
    """Rounds of Powderkeg; chips through the session's ledger; the deal rotates."""

    spec_id = "powderkeg"

    def __init__(self, players: Sequence[str], options: Any = None) -> None:
        super().__init__(players, options)
        self.options = options_of(options)
        self.dealer = self.players[0]
        self.round: PowderkegRound | None = None
        self._secret: SecretRound | None = None  # phones: the calls on the next card, in secret
        self._secret_key: tuple[Any, ...] | None = None

    def options_json(self) -> dict[str, Any]:
        return self.options.as_dict()

    # ---- rounds
    def new_round(self, start: RoundStart) -> None:
        self.round = PowderkegRound(list(self.players), self.dealer, dict(start.stacks or {}), start.pot_carry,
                                    self.options)

    def round_over(self) -> bool:
        return self.round is not None and self.round.phase == "over"

    def rule_round(self) -> dict[str, Any]:
        if not self.round_over():
            raise PirateTableError("the round is not over")
        return ruling(self.round, [])

    def round_committed(self, r: dict[str, Any]) -> None:
        self.dealer = r["next_dealer"]

    # ---- the app
    def screen(self) -> str:
        return "powderkeg"

    def round_intro(self, number: int) -> str:
        return f"Hand {number}: ante in, deal."

    def history_line(self, r: dict[str, Any]) -> str:
        deltas = ", ".join(f"{p} {r['stacks'][p] - r['stacks_before'][p]:+d}" for p in r["players"]
                           if r["stacks"][p] != r["stacks_before"][p])
        return (f"#{r.get('hand_no', '?')}: Powderkeg, {r['dealer']} dealt, {r['end']}, "
                f"winners {', '.join(r['winners']) or 'none'}.  {deltas}")

    # ---- phones (companion/table_server, docs/phones.md): everyone still in calls at once, in secret; the calls
    # reach the referee, in calling order, only when all are in (no stack or pot moves before that)
    def open_secret(self) -> SecretRound | None:
        h = self.round
        if h is None or h.phase != "calling" or h.pending_calls:
            self._secret = self._secret_key = None  # pending calls: the tablet is taking them one by one, openly
            return None
        key = (id(h), len(h.moves), h.in_players)
        if self._secret is None or self._secret_key != key:
            self._secret, self._secret_key = SecretRound("live-die-fold", h.in_players, CALLS), key
        return self._secret

    def revealed_actions(self, rnd: SecretRound, answers: dict[str, Any]) -> list[Call]:
        return [Call(p, answers[p]) for p in rnd.seats]

    def phone_phase(self) -> str:
        h = self.round
        if h is None:
            return "Between rounds"
        n = len(h.revealed)
        return {"dock": "The dealer docks a card", "opening": f"The dealer turns the opening cards ({n} up)",
                "calling": f"Live, Die or Fold on card {n + 1}", "reveal": f"The dealer turns card {n + 1}",
                "showing": "The dealer shows the rest of the hand", "over": "Round over"}.get(h.phase, h.phase)

    def phone_turn(self) -> str | None:
        h = self.round
        return None if h is None or h.phase == "calling" else h.dealer

    def phone_note(self, seat: str) -> str:
        h = self.round
        if h is None:
            return ""
        if h.phase == "calling" and seat in h.in_players:
            return f"Your call on card {len(h.revealed) + 1}"
        if seat == h.dealer:
            return "You deal this round"
        return "You are out of this round" if seat in h.out else ""

    # ---- resume
    def to_json(self) -> dict[str, Any]:
        d = super().to_json()
        d["dealer"] = self.dealer
        return d

    @classmethod
    def from_json(cls, players: Sequence[str], data: dict[str, Any], start: RoundStart) -> "PowderkegTable":
        m = cls(players, data.get("options") or {})
        m.dealer = data.get("dealer") or m.players[0]
        if m.dealer not in m.players:
            raise PirateTableError(f"dealer {m.dealer!r} is not at the table")
        m.load_round(data.get("round"), start)
        return m

    def round_json(self) -> dict[str, Any] | None:
        h = self.round
        if h is None:
            return None
        moves: list[dict[str, Any]] = []
        for a in h.moves:
            if isinstance(a, Dock):
                moves.append({"dock": str(a.card)})
            elif isinstance(a, Reveal):
                moves.append({"reveal": str(a.card)})
            else:
                moves.append({"call": [a.player, a.call]})
        return {"stacks": dict(h.stacks_before), "pot_carry": h.pot_carry_before, "dealer": h.dealer, "moves": moves}

    def load_round(self, hd: dict[str, Any] | None, start: RoundStart) -> None:
        if hd is None:
            self.round = None
            return
        self.round = PowderkegRound(list(self.players), hd["dealer"], hd["stacks"], hd["pot_carry"], self.options)
        for m in hd["moves"]:
            if "dock" in m:
                self.round.apply(Dock(IslandCard.parse(m["dock"])))
            elif "reveal" in m:
                self.round.apply(Reveal(IslandCard.parse(m["reveal"])))
            else:
                self.round.apply(Call(*m["call"]))

    @classmethod
    def upgrade(cls, state: dict[str, Any]) -> dict[str, Any]:
        """Version 1 (before the registry): Powderkeg used the default options; the dealer at the top level."""
        if state.get("version") == 1:
            return {"options": {}, "dealer": state.get("dealer"), "round": state.get("hand")}
        return super().upgrade(state)
