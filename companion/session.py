"""A table session for any registered game: players, chips or a score sheet, the round in play, every finished
round, undo, and resume. Pure (no Kivy).

The game is asked through the registry (companion/games/registry.py): its GameSpec gives the player range and
whether chips are used, its TableModel runs the rounds. Chip games (``uses_chips``) keep stacks and a pot, and
book each round's ruling in the session's SQLite ledger when it has one; points games keep a score sheet (each
round's ruling carries ``"points": {player: int}``; totals are summed from the history, so an edited round
recomputes them).

The session is saved as one JSON document written atomically (tmp file + ``os.replace``), so an app killed at
any moment resumes exactly where it was: the round in play is stored as its actions (the table model's JSON)
and replayed on load. Sessions saved before the registry (version 1) are upgraded by the game's table model or
refused cleanly.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from companion import inputs
from companion.errors import PirateTableError
from companion.games import registry
from companion.games.base import POT
from companion.games.registry import GameSpec, RoundStart, TableModel
from companion.ledger import Ledger

STATE_VERSION = 2


def _check_players(players: list[str], spec: GameSpec) -> list[str]:
    if not isinstance(players, (list, tuple)) or not all(isinstance(p, str) for p in players):
        raise PirateTableError("players: expected a list of names")
    players = [p.strip() for p in players]
    if not spec.min_players <= len(players) <= spec.max_players:
        raise PirateTableError(f"a {spec.title} session needs {spec.min_players}-{spec.max_players} players, "
                               f"got {len(players)}")
    if any(not p for p in players):
        raise PirateTableError("every seat needs a name")
    for i, p in enumerate(players):
        # printable, length-limited (the game's table may take shorter names), no control characters
        inputs.name(p, f"players[{i}]", spec.name_max or inputs.NAME_MAX)
    if len(set(players)) != len(players):
        raise PirateTableError("player names must be distinct")
    if POT in players:
        raise PirateTableError("'pot' is reserved for the pot")
    return players


class TableSession:
    """One evening at the table. Coins are whole numbers; stacks may go below zero (a loan to settle).

    ``TableSession(players, buy_in, game, options)``: ``game`` is a registered game id; ``options`` is the game's
    options (a JSON-ready dict, or the game's own options value); ``buy_in`` applies to chip games only.
    """

    def __init__(self, players: list[str], buy_in: int | None = 50, game: str | None = None,
                 options: Any = None) -> None:
        game = registry.DEFAULT_GAME if game is None else game
        try:
            self.spec = registry.get(game)
        except PirateTableError:
            raise PirateTableError(f"unknown game {game!r}") from None
        players = _check_players(players, self.spec)
        if self.spec.uses_chips:
            if isinstance(buy_in, bool) or not isinstance(buy_in, int) or buy_in < 1:
                raise PirateTableError(f"buy-in must be a whole number of coins >= 1, got {buy_in!r}")
        else:
            buy_in = None
        self.players = players
        self.buy_in = buy_in
        self.game = self.spec.id
        self.model: TableModel = self.spec.table_model()(players, options)
        self.stacks: dict[str, int] = {p: buy_in for p in players} if buy_in is not None else {}
        self.pot_carry = 0
        self.history: list[dict[str, Any]] = []  # rulings of finished rounds, in order
        self.hand_clock_ms = 0.0  # the t_ms of the last timed action of the round in play
        self.ledger_path: str | None = None  # the session's SQLite ledger (companion.ledger), when it has one

    # ------------------------------------------------------------------ what the game is
    @property
    def uses_chips(self) -> bool:
        return self.spec.uses_chips

    @property
    def options(self) -> Any:
        """The game's options value (the table model's)."""
        return getattr(self.model, "options", None)

    @property
    def hand(self) -> Any:
        """The round in play (the game's own state object, e.g. its referee), or None between rounds."""
        return self.model.round

    @property
    def round(self) -> Any:
        return self.model.round

    def _start(self) -> RoundStart:
        chips = self.spec.uses_chips
        return RoundStart(number=len(self.history) + 1, history=tuple(self.history),
                          stacks=dict(self.stacks) if chips else None, pot_carry=self.pot_carry if chips else 0)

    # ------------------------------------------------------------------ the ledger (chip games)
    def create_ledger(self, path: str | os.PathLike) -> None:
        """Open the session's ledger: one SQLite file, everyone buys in. Stacks and pot then come from it."""
        if not self.spec.uses_chips:
            raise PirateTableError(f"{self.spec.title} keeps a score sheet, not a chip ledger")
        if self.history or self.model.moves:
            raise PirateTableError("a ledger is created with the session, before any hand")
        with Ledger.create(str(path), self.players, self.buy_in) as led:
            self._sync_from(led)
        self.ledger_path = str(path)

    def ledger(self) -> Ledger:
        if self.ledger_path is None:
            raise PirateTableError("this session has no ledger")
        return Ledger.open(self.ledger_path)

    def _sync_from(self, led: Ledger) -> None:
        t = led.table()
        self.stacks = {p: t["stacks"][p] for p in self.players}
        self.pot_carry = t["pot_carry"]

    def _can_change_stacks(self) -> None:
        if self.model.moves:
            raise PirateTableError("loans and repayments are made between hands (before the starting cards "
                                   "are revealed)")

    def _restart_hand(self) -> None:
        if self.model.round is not None:
            self.model.new_round(self._start())

    def take_loan(self, player: str, coins: int) -> None:
        self._can_change_stacks()
        with self.ledger() as led:
            led.loan(player, coins)
            self._sync_from(led)
        self._restart_hand()

    def repay(self, player: str, coins: int) -> None:
        self._can_change_stacks()
        with self.ledger() as led:
            led.repay(player, coins)
            self._sync_from(led)
        self._restart_hand()

    # ------------------------------------------------------------------ rounds
    def new_round(self) -> Any:
        if self.model.round is not None and not self.model.round_over():
            raise PirateTableError("the hand in play is not over")
        if self.model.round is not None:
            self.finish_round()
        if self.model.game_over(self.history):
            raise PirateTableError(f"the game of {self.spec.title} is over")
        self.model.new_round(self._start())
        self.hand_clock_ms = 0.0
        return self.model.round

    def finish_round(self) -> dict[str, Any]:
        """Commit the finished round: its ruling joins the history (and, for chips, the ledger and stacks)."""
        if self.model.round is None or not self.model.round_over():
            raise PirateTableError("no finished hand to commit")
        r = self.model.rule_round()
        if self.spec.uses_chips:
            if self.ledger_path is not None:
                # booked in one ledger transaction; a ledger that already holds this very ruling (the app was
                # killed between the booking and the state file) is not booked twice
                digest = hashlib.sha256(json.dumps(r, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
                with self.ledger() as led:
                    last = led.entries()[-1]
                    if last.meta.get("ruling") != digest:
                        led.apply_ruling(r)
                    self._sync_from(led)
            else:
                self.stacks = dict(r["stacks"])
                self.pot_carry = r["pot_carry"]
        r["hand_no"] = len(self.history) + 1
        self.history.append(r)
        self.model.round = None
        self.model.round_committed(r)
        return r

    # the names the app and tests have always used
    new_hand = new_round
    finish_hand = finish_round

    def apply(self, action: Any) -> None:
        if self.model.round is None:
            raise PirateTableError("no hand in play")
        self.model.apply(action)
        t = getattr(action, "t_ms", None)
        if t is not None:
            self.hand_clock_ms = max(self.hand_clock_ms, t)

    def undo(self) -> Any:
        if self.model.round is None:
            raise PirateTableError("no hand in play")
        return self.model.undo()

    def current_ruling(self) -> dict[str, Any] | None:
        if self.model.round is None or not self.model.round_over():
            return None
        r = self.model.rule_round()
        r["hand_no"] = len(self.history) + 1
        return r

    def game_over(self) -> bool:
        return self.model.game_over(self.history)

    # ------------------------------------------------------------------ the score sheet (points games)
    def edit_round(self, index: int, ruling: dict[str, Any]) -> None:
        """Replace finished round ``index`` (0-based) with a corrected ruling; totals are recomputed.
        Points games only (a chip ledger is append-only: correct it with a new entry)."""
        if self.spec.uses_chips:
            raise PirateTableError("a chip game's rounds are booked in the ledger and cannot be edited")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.history):
            raise PirateTableError(f"no finished round {index!r}")
        r = dict(ruling)
        r["hand_no"] = index + 1
        self.history[index] = r

    def totals(self) -> dict[str, int]:
        """Points games: each player's total over the finished rounds. Chip games: the stacks."""
        if self.spec.uses_chips:
            return dict(self.stacks)
        out = {p: 0 for p in self.players}
        for r in self.history:
            for p, v in r.get("points", {}).items():
                out[p] += v
        return out

    def score_series(self) -> list[dict[str, int]]:
        """Points games: running totals, from 0 before the first round."""
        run = {p: 0 for p in self.players}
        out = [dict(run)]
        for r in self.history:
            for p, v in r.get("points", {}).items():
                run[p] += v
            out.append(dict(run))
        return out

    def stack_series(self) -> list[dict[str, int]]:
        """Stacks at the buy-in and after each finished hand (and the hand in play once it is ruled).
        Points games: the running totals."""
        if not self.spec.uses_chips:
            return self.score_series()
        out = [{p: self.buy_in for p in self.players}]
        out.extend({p: r["stacks"][p] for p in self.players} for r in self.history)
        cur = self.current_ruling()
        if cur:
            out.append({p: cur["stacks"][p] for p in self.players})
        return out

    def history_lines(self) -> list[str]:
        """One line per finished round (and the round in play once it is ruled), from the game's table model."""
        rulings = list(self.history)
        cur = self.current_ruling()
        if cur:
            rulings.append(cur)
        return [self.model.history_line(r) for r in rulings]

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"version": STATE_VERSION, "game": self.game, "players": self.players}
        if self.spec.uses_chips:  # chip games: the stacks, pot and ledger (points games have none)
            d.update({"buy_in": self.buy_in, "stacks": self.stacks, "pot_carry": self.pot_carry,
                      "ledger": self.ledger_path})
        d["history"] = self.history
        d["table"] = self.model.to_json()
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TableSession":
        """Version 2 (the registry) or version 1 (before it: Pirate's Bluff / Powderkeg, upgraded by the game's
        table model); anything else is refused."""
        if not isinstance(d, dict) or d.get("version") not in (1, STATE_VERSION):
            raise PirateTableError("not a Pirate Table session state (unknown version)")
        spec = registry.get(d.get("game"))
        model_cls = spec.table_model()
        table = model_cls.upgrade(d) if d["version"] == 1 else d["table"]
        if not isinstance(table, dict):
            raise PirateTableError("damaged session state (no table)")
        s = cls.__new__(cls)
        s.spec = spec
        s.game = spec.id
        s.players = _check_players(d["players"], spec)
        s.history = list(d["history"])
        s.hand_clock_ms = 0.0
        if spec.uses_chips:
            s.buy_in = inputs.whole(d["buy_in"], "buy_in", 1)
            s.stacks = {p: inputs.whole(d["stacks"][p], f"stacks.{p}", -inputs.COIN_MAX) for p in s.players}
            s.pot_carry = inputs.whole(d["pot_carry"], "pot_carry", 0)
            s.ledger_path = d.get("ledger")
        else:
            s.buy_in, s.stacks, s.pot_carry, s.ledger_path = None, {}, 0, None
        s.model = model_cls.from_json(s.players, table, s._start())
        for a in s.model.moves:
            t = getattr(a, "t_ms", None)
            if t is not None:
                s.hand_clock_ms = max(s.hand_clock_ms, t)
        return s

    def save(self, path: str | os.PathLike) -> None:
        """Write the state atomically: a reader (or a resumed app) sees the old file or the new one, whole."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".session-", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(self.to_dict(), f, indent=1)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            try:
                os.unlink(tmp)
            except FileNotFoundError:
                pass
            raise

    @classmethod
    def load(cls, path: str | os.PathLike) -> "TableSession":
        try:
            with open(path, encoding="utf-8") as f:
                d = json.load(f)
        except FileNotFoundError:
            raise PirateTableError(f"no saved session at {path}") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise PirateTableError(f"{path}: not a session state ({exc})") from None
        try:
            return cls.from_dict(d)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            if isinstance(exc, PirateTableError):
                raise PirateTableError(f"{path}: {exc}") from None
            raise PirateTableError(f"{path}: damaged session state ({exc!r})") from None
