"""Pirate's Bluff at the table: the TableModel (companion/games/registry.py) the session and the app run.

A round is one hand (:class:`PiratesBluffHand`). The hand in play is saved as its events, in the hand-record
vocabulary of docs/pirates-bluff.md, and replayed through the referee on resume.
"""

from __future__ import annotations

from typing import Any, Sequence

from companion.decks.pirates72 import PBCard
from companion.errors import PirateTableError
from companion.games.pirates_bluff.record import ruling
from companion.games.pirates_bluff.rules import (
    Bid,
    Call,
    Countdown,
    Options,
    PiratesBluffHand,
    RevealStarting,
    Showdown,
    bid_name,
)
from companion.games.registry import RoundStart, TableModel

OPTION_KEYS = ("super_wilds", "window_ms", "ante", "cyclone")


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


def options_of(options: Any) -> Options:
    if options is None:
        return Options()
    if isinstance(options, Options):
        return options
    if not isinstance(options, dict):
        raise PirateTableError(f"Pirate's Bluff options: expected an object, got {options!r}")
    unknown = set(options) - set(OPTION_KEYS)
    if unknown:
        raise PirateTableError(f"Pirate's Bluff options: unknown option {sorted(unknown)[0]!r}")
    return Options(**options)


class PiratesBluffTable(TableModel):
    """Hands of Pirate's Bluff, one after the other; chips through the session's ledger."""

    spec_id = "pirates-bluff"

    def __init__(self, players: Sequence[str], options: Any = None) -> None:
        super().__init__(players, options)
        self.options = options_of(options)
        self.round: PiratesBluffHand | None = None

    def options_json(self) -> dict[str, Any]:
        o = self.options
        return {"super_wilds": o.super_wilds, "window_ms": o.window_ms, "ante": o.ante, "cyclone": o.cyclone}

    # ---- rounds
    def new_round(self, start: RoundStart) -> None:
        self.round = PiratesBluffHand(list(self.players), dict(start.stacks or {}), start.pot_carry, self.options)

    def round_over(self) -> bool:
        return self.round is not None and self.round.phase == "over"

    def rule_round(self) -> dict[str, Any]:
        if not self.round_over():
            raise PirateTableError("the hand is not over")
        return ruling(self.round, [])

    # ---- the app
    def screen(self) -> str:
        if self.round is None:
            return "ruling"
        return {"starting": "deal", "bidding": "bid", "called": "showdown", "over": "ruling"}[self.round.phase]

    def buttons_armed(self) -> bool:
        return self.round is not None and self.round.phase in ("bidding", "called")

    def describe(self, action: Any) -> str:
        return "" if isinstance(action, (RevealStarting, Showdown)) else str(action)

    def round_intro(self, number: int) -> str:
        return f"Hand {number}: ante in, deal."

    def history_line(self, r: dict[str, Any]) -> str:
        fb = r.get("final_bid")
        if not fb:
            return f"#{r.get('hand_no', '?')}: no bid"
        bid = bid_name(fb["quantity"], fb["rank"])
        who = " & ".join(fb["bidders"])
        if r["end"] == "countdown":
            res = f"countdown: {who} wins"
        else:
            res = (f"called by {' & '.join(r['callers'])}: {'holds' if r['bid_holds'] else 'fails'} "
                   f"({r['count']} in play)")
        deltas = ", ".join(f"{p} {r['stacks'][p] - r['stacks_before'][p]:+d}" for p in r["players"]
                           if r["stacks"][p] != r["stacks_before"][p])
        return f"#{r.get('hand_no', '?')}: {who} bid {bid}, {res}.  {deltas}"

    # ---- resume
    def round_json(self) -> dict[str, Any] | None:
        h = self.round
        if h is None:
            return None
        hand: dict[str, Any] = {"stacks": dict(h.stacks_before), "pot_carry": h.pot_carry_before,
                                "starting": None, "events": [], "showdown_counts": None}
        for a in h.moves:
            if isinstance(a, RevealStarting):
                hand["starting"] = {p: str(c) for p, c in a.cards}
            elif isinstance(a, Showdown):
                if a.counts is not None:
                    hand["showdown_counts"] = {p: [n, w] for p, n, w in a.counts}
                else:
                    hand["showdown_hands"] = {p: [str(c) for c in cs] for p, cs in a.hands}
            else:
                hand["events"].append(_event_dict(a))
        return hand

    def load_round(self, hd: dict[str, Any] | None, start: RoundStart) -> None:
        if hd is None:
            self.round = None
            return
        h = PiratesBluffHand(list(self.players), hd["stacks"], hd["pot_carry"], self.options)
        self.round = h
        if hd["starting"] is not None:
            h.apply(RevealStarting.of({p: PBCard.parse(c) for p, c in hd["starting"].items()}))
        for ev in hd["events"]:
            h.apply(_event_action(ev))
        if hd.get("showdown_counts") is not None:
            h.apply(Showdown.of_counts({p: tuple(v) for p, v in hd["showdown_counts"].items()}))
        elif hd.get("showdown_hands") is not None:
            h.apply(Showdown.of_hands({p: [PBCard.parse(c) for c in cs] for p, cs in hd["showdown_hands"].items()}))

    @classmethod
    def upgrade(cls, state: dict[str, Any]) -> dict[str, Any]:
        """Version 1 (before the registry): options and the hand at the top level, same hand format."""
        if state.get("version") == 1:
            return {"options": state["options"], "round": state.get("hand")}
        return super().upgrade(state)
