"""A table session: players, stacks, the hand in play and every finished hand. Pure (no Kivy).

The app (companion/ui/) drives a ``TableSession``; nothing here imports the UI. The session is saved as one
JSON document written atomically (tmp file + ``os.replace``), so an app killed at any moment resumes exactly
where it was: the hand in play is stored as its events (the hand-record vocabulary of docs/pirates-bluff.md)
and replayed through the referee on load.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from companion import inputs
from companion.cards import PBCard
from companion.errors import PirateTableError
from companion.games.pirates_bluff import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Bid,
    Call,
    Countdown,
    Options,
    PiratesBluffHand,
    RevealStarting,
    Showdown,
)
from companion.games import powderkeg as pk
from companion.games.pirates_bluff_record import ruling
from companion.games.powderkeg_record import ruling as pk_ruling
from companion.island import IslandCard
from companion.ledger import Ledger

STATE_VERSION = 1
GAMES = ("pirates-bluff", "powderkeg")


def _event_dict(a: Any) -> dict[str, Any]:
    if isinstance(a, Bid):
        return {"t_ms": a.t_ms, "player": a.player, "bid": [a.quantity, a.rank]}
    if isinstance(a, Call):
        return {"t_ms": a.t_ms, "player": a.player, "call": True}
    if isinstance(a, Countdown):
        return {"t_ms": a.t_ms, "player": a.player, "countdown": "dead" if a.complete else "start"}
    raise TypeError(a)


def _event_action(ev: dict[str, Any]) -> Any:
    if "bid" in ev:
        q, r = ev["bid"]
        return Bid(ev["player"], int(q), int(r), ev["t_ms"])
    if "call" in ev:
        return Call(ev["player"], ev["t_ms"])
    return Countdown(ev["player"], ev["t_ms"], ev["countdown"] == "dead")


class TableSession:
    """One evening at the table. Coins are whole numbers; stacks may go below zero (a loan to settle)."""

    def __init__(self, players: list[str], buy_in: int = 50, game: str = "pirates-bluff",
                 options: Options | None = None) -> None:
        players = [p.strip() for p in players]
        if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
            raise PirateTableError(f"a session needs 3-8 players, got {len(players)}")
        if any(not p for p in players):
            raise PirateTableError("every seat needs a name")
        for i, p in enumerate(players):
            inputs.name(p, f"players[{i}]")  # printable, at most 32 characters
        if len(set(players)) != len(players):
            raise PirateTableError("player names must be distinct")
        if "pot" in players:
            raise PirateTableError("'pot' is reserved for the pot")
        if isinstance(buy_in, bool) or not isinstance(buy_in, int) or buy_in < 1:
            raise PirateTableError(f"buy-in must be a whole number of coins >= 1, got {buy_in!r}")
        if game not in GAMES:
            raise PirateTableError(f"unknown game {game!r}")
        self.players = players
        self.buy_in = buy_in
        self.game = game
        self.options = options or Options()
        self.stacks: dict[str, int] = {p: buy_in for p in players}
        self.pot_carry = 0
        self.history: list[dict[str, Any]] = []  # rulings of finished hands, in order
        self.hand: PiratesBluffHand | None = None
        self.hand_clock_ms = 0.0  # the t_ms of the last event of the hand in play
        self.ledger_path: str | None = None  # the session's SQLite ledger (companion.ledger), when it has one
        self.dealer = players[0]  # Powderkeg: the deal passes to the left after each round

    def _new_referee(self, stacks, pot_carry):
        if self.game == "powderkeg":
            return pk.PowderkegRound(self.players, self.dealer, stacks, pot_carry, pk.Options())
        return PiratesBluffHand(self.players, stacks, pot_carry, self.options)

    def _rule(self, h) -> dict[str, Any]:
        return pk_ruling(h, []) if self.game == "powderkeg" else ruling(h, [])

    # ------------------------------------------------------------------ the ledger
    def create_ledger(self, path: str | os.PathLike) -> None:
        """Open the session's ledger: one SQLite file, everyone buys in. Stacks and pot then come from it."""
        if self.history or (self.hand is not None and self.hand.moves):
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
        if self.hand is not None and self.hand.moves:
            raise PirateTableError("loans and repayments are made between hands (before the starting cards "
                                   "are revealed)")

    def _restart_hand(self) -> None:
        if self.hand is not None:
            self.hand = self._new_referee(self.stacks, self.pot_carry)

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

    # ------------------------------------------------------------------ hands
    def new_hand(self) -> PiratesBluffHand:
        if self.hand is not None and self.hand.phase != "over":
            raise PirateTableError("the hand in play is not over")
        if self.hand is not None:
            self.finish_hand()
        self.hand = self._new_referee(self.stacks, self.pot_carry)
        self.hand_clock_ms = 0.0
        return self.hand

    def finish_hand(self) -> dict[str, Any]:
        """Commit the finished hand: its ruling joins the history and its stacks become the session's."""
        h = self.hand
        if h is None or h.phase != "over":
            raise PirateTableError("no finished hand to commit")
        r = self._rule(h)
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
        self.hand = None
        if self.game == "powderkeg":
            self.dealer = r["next_dealer"]
        return r

    def apply(self, action: Any) -> None:
        if self.hand is None:
            raise PirateTableError("no hand in play")
        self.hand.apply(action)
        t = getattr(action, "t_ms", None)
        if t is not None:
            self.hand_clock_ms = max(self.hand_clock_ms, t)

    def undo(self) -> Any:
        if self.hand is None:
            raise PirateTableError("no hand in play")
        a = self.hand.undo()
        return a

    def current_ruling(self) -> dict[str, Any] | None:
        if self.hand is None or self.hand.phase != "over":
            return None
        r = self._rule(self.hand)
        r["hand_no"] = len(self.history) + 1
        return r

    def stack_series(self) -> list[dict[str, int]]:
        """Stacks at the buy-in and after each finished hand (and the hand in play once it is ruled)."""
        out = [{p: self.buy_in for p in self.players}]
        out.extend({p: r["stacks"][p] for p in self.players} for r in self.history)
        cur = self.current_ruling()
        if cur:
            out.append({p: cur["stacks"][p] for p in self.players})
        return out

    # ------------------------------------------------------------------ persistence
    def to_dict(self) -> dict[str, Any]:
        hand = None
        h = self.hand
        if h is not None and self.game == "powderkeg":
            moves = []
            for a in h.moves:
                if isinstance(a, pk.Dock):
                    moves.append({"dock": str(a.card)})
                elif isinstance(a, pk.Reveal):
                    moves.append({"reveal": str(a.card)})
                else:
                    moves.append({"call": [a.player, a.call]})
            hand = {"stacks": dict(h.stacks_before), "pot_carry": h.pot_carry_before, "dealer": h.dealer,
                    "moves": moves}
        elif h is not None:
            moves = h.moves
            hand = {"stacks": dict(h.stacks_before), "pot_carry": h.pot_carry_before, "starting": None,
                    "events": [], "showdown_counts": None}
            for a in moves:
                if isinstance(a, RevealStarting):
                    hand["starting"] = {p: str(c) for p, c in a.cards}
                elif isinstance(a, Showdown):
                    if a.counts is not None:
                        hand["showdown_counts"] = {p: [n, w] for p, n, w in a.counts}
                    else:
                        hand["showdown_hands"] = {p: [str(c) for c in cs] for p, cs in a.hands}
                else:
                    hand["events"].append(_event_dict(a))
        o = self.options
        return {
            "version": STATE_VERSION,
            "game": self.game,
            "players": self.players,
            "buy_in": self.buy_in,
            "options": {"super_wilds": o.super_wilds, "window_ms": o.window_ms, "ante": o.ante,
                        "cyclone": o.cyclone},
            "stacks": self.stacks,
            "pot_carry": self.pot_carry,
            "history": self.history,
            "ledger": self.ledger_path,
            "dealer": self.dealer,
            "hand": hand,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "TableSession":
        if not isinstance(d, dict) or d.get("version") != STATE_VERSION:
            raise PirateTableError("not a Pirate Table session state (unknown version)")
        s = cls(d["players"], d["buy_in"], d["game"], Options(**d["options"]))
        s.stacks = {p: inputs.whole(d["stacks"][p], f"stacks.{p}", -inputs.COIN_MAX) for p in s.players}
        s.pot_carry = inputs.whole(d["pot_carry"], "pot_carry", 0)
        s.history = list(d["history"])
        s.ledger_path = d.get("ledger")
        s.dealer = d.get("dealer", s.players[0])
        hd = d.get("hand")
        if hd is not None and s.game == "powderkeg":
            s.hand = pk.PowderkegRound(s.players, hd["dealer"], hd["stacks"], hd["pot_carry"], pk.Options())
            for m in hd["moves"]:
                if "dock" in m:
                    s.hand.apply(pk.Dock(IslandCard.parse(m["dock"])))
                elif "reveal" in m:
                    s.hand.apply(pk.Reveal(IslandCard.parse(m["reveal"])))
                else:
                    s.hand.apply(pk.Call(*m["call"]))
        elif hd is not None:
            h = PiratesBluffHand(s.players, hd["stacks"], hd["pot_carry"], s.options)
            s.hand = h
            if hd["starting"] is not None:
                h.apply(RevealStarting.of({p: PBCard.parse(c) for p, c in hd["starting"].items()}))
            for ev in hd["events"]:
                s.apply(_event_action(ev))
            if hd.get("showdown_counts") is not None:
                h.apply(Showdown.of_counts({p: tuple(v) for p, v in hd["showdown_counts"].items()}))
            elif hd.get("showdown_hands") is not None:
                h.apply(Showdown.of_hands({p: [PBCard.parse(c) for c in cs]
                                           for p, cs in hd["showdown_hands"].items()}))
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
        except json.JSONDecodeError as exc:
            raise PirateTableError(f"{path}: not a session state ({exc})") from None
        try:
            return cls.from_dict(d)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, PirateTableError):
                raise
            raise PirateTableError(f"{path}: damaged session state ({exc!r})") from None
