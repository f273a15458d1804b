"""Bluff Pirate in the session and the app: the TableModel (companion/games/registry.py) around
:class:`~companion.games.bluff_pirate.table.BluffPirateTable`.

A round is one race (to the treasure); the session's score sheet counts races won (``points``: 1 for the
winner). The app sends :class:`Intent` values through ``app.act``; the model applies them to the race, which rules
through rules.py. Nothing here shows a secret: ``describe`` of a vote says who voted, never what; ``Intent``'s repr
hides a vote; ``round_json`` (the saved session, the tablet's own file) holds the secrets for resume.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from companion.errors import IllegalActionError, PirateTableError
from companion.games.bluff_pirate import rules as R
from companion.games.bluff_pirate.record import rule_record
from companion.games.bluff_pirate.table import BluffPirateTable
from companion.games.registry import RoundStart, TableModel

INTENTS = ("draw", "keep", "discard", "lay_set", "vote", "pick", "land", "board")
OPTION_KEYS = ("track", "cards", "seed")


@dataclass(frozen=True)
class Intent:
    """One thing a player does at the table: ``Intent("draw")``, ``Intent("vote", ("Ben", "bluffing"))``..."""

    name: str
    args: tuple[Any, ...] = ()

    def __repr__(self) -> str:  # a vote's value and a set's hidden cards never reach a log or the status bar
        if self.name == "vote":
            return f"Intent('vote', {self.args[0]!r}, <secret>)"
        if self.name == "lay_set":
            return f"Intent('lay_set', {self.args[0]!r}, <{len(self.args[1])} hidden>)"
        return f"Intent({self.name!r}, {self.args!r})"

    __str__ = __repr__


def options_of(options: Any) -> dict[str, Any]:
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise PirateTableError(f"Bluff Pirate options: expected an object, got {options!r}")
    for k in options:
        if k not in OPTION_KEYS:
            raise PirateTableError(f"Bluff Pirate options: unknown option {k!r} (known: {', '.join(OPTION_KEYS)})")
    out = {"track": options.get("track", R.DEFAULT_TRACK), "cards": options.get("cards", R.CARDS),
           "seed": options.get("seed")}
    seed = out["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise PirateTableError(f"Bluff Pirate options: seed must be a whole number, got {seed!r}")
    return out


class BluffPirateModel(TableModel):
    """Races of Bluff Pirate; the score sheet counts races won."""

    spec_id = "bluff-pirate"

    def __init__(self, players: Sequence[str], options: Any = None) -> None:
        super().__init__(players, options)
        self.options = options_of(options)
        R.new_game(self.players, R.Options(track=self.options["track"], cards=self.options["cards"]))  # validate
        self.round: BluffPirateTable | None = None

    def options_json(self) -> dict[str, Any]:
        return dict(self.options)

    # ---- rounds
    def new_round(self, start: RoundStart) -> None:
        seed = self.options["seed"]
        seed = None if seed is None else seed + start.number   # each race hides the treasure anew
        # the first player moves one seat on each race (the youngest starts the first)
        k = (start.number - 1) % len(self.players)
        order = self.players[k:] + self.players[:k]
        self.round = BluffPirateTable(order, self.options["track"], seed=seed, cards=self.options["cards"])

    def apply(self, action: Any) -> None:
        if self.round is None:
            raise IllegalActionError("no race in play")
        if not isinstance(action, Intent) or action.name not in INTENTS:
            raise IllegalActionError(f"not a Bluff Pirate action: {action!r}")
        getattr(self.round, action.name)(*action.args)

    def undo(self) -> Any:
        """Undo the turn in progress (back to its start) or, between turns, the last whole turn."""
        if self.round is None:
            raise IllegalActionError("no race in play")
        self.round.undo()
        return Intent("undo")

    def can_undo(self) -> bool:
        return self.round is not None and self.round.can_undo

    @property
    def moves(self) -> list[Any]:
        """The rules' actions of the race so far (a set appears only once it is ruled, with its revealed vote)."""
        if self.round is None:
            return []
        return [a for turn in self.round._turns for a in turn] + list(self.round._current)

    @property
    def phase(self) -> str:
        return self.round.step if self.round is not None else ""

    def round_over(self) -> bool:
        return self.round is not None and self.round.step == "over"

    def rule_round(self) -> dict[str, Any]:
        if not self.round_over():
            raise PirateTableError("the race is not over")
        t = self.round
        r = rule_record(t.export_record())
        winner = t.state.winner
        r.update(winner=winner, points={p: int(p == winner) for p in self.players},
                 islands=t.islands_view(), turns_played=t.state.turn,
                 summary=f"{winner} found the treasure after {t.state.turn} turns")
        return r

    # ---- the app
    def screen(self) -> str:
        step = self.round.step if self.round is not None else "draw"
        return {"votes": "bp_vote", "pick": "bp_pick", "land": "bp_land"}.get(step, "bp_race")

    def describe(self, action: Any) -> str:
        """The status-bar line after an action: never a vote's value or a hidden card before the reveal."""
        if not isinstance(action, Intent) or self.round is None:
            return ""
        if action.name == "vote":
            left = self.round.public_view().get("set", {}).get("waiting", [])
            return f"{action.args[0]} has voted." + (f" Next: {left[0]}." if left else " Every vote is in.")
        hist = self.round.history
        return hist[-1] if hist else ""

    def round_intro(self, number: int) -> str:
        first = self.round.current if self.round is not None else self.players[0]
        return f"Race {number}: the treasure is hidden. {first} starts."

    def history_line(self, ruling: dict[str, Any]) -> str:
        isl = ruling.get("islands", [])
        where = next((f"island {k + 1}" for k, v in enumerate(isl) if v == "treasure"), "an island")
        return (f"#{ruling.get('hand_no', '?')}: {ruling.get('winner')} found the treasure on {where} after "
                f"{ruling.get('turns_played', '?')} turns.  " +
                ", ".join(f"{p} {x}" for p, x in ruling.get("positions", {}).items()))

    # ---- resume
    def round_json(self) -> dict[str, Any] | None:
        return None if self.round is None else self.round.to_json()

    def load_round(self, data: dict[str, Any] | None, start: RoundStart) -> None:
        self.round = None if data is None else BluffPirateTable.from_json(data)
