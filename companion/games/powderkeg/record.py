"""Powderkeg round records (JSON) in, rulings out. Format and every ruling choice: docs/powderkeg.md.

The whole record is validated before anything is ruled (RecordError naming the place, e.g.
``calls[2].Beatrice``). A well-formed call that the rules do not allow (from the dealer, from a player already
out, after the round ended) is skipped and listed in ``rejected`` with its reason; the round goes on.
"""

from __future__ import annotations

from typing import Any

from companion.games import validate as records
from companion.errors import PirateTableError, RecordError
from companion.games.powderkeg.rules import (
    CALLS,
    MAX_PLAYERS,
    MIN_PLAYERS,
    Call,
    DealRotation,
    Dock,
    Options,
    PowderkegRound,
    Reveal,
)
from companion.decks.island54 import IslandCard

KEYS = {"game", "note", "players", "dealer", "stacks", "pot_carry", "dock", "hand", "calls", "options"}
OPTION_KEYS = set(Options().as_dict())

RULEBOOK_EXAMPLE: dict[str, Any] = {
    "game": "powderkeg",
    "note": "The rulebook's example game: Alfonse deals and docks the King of Anchors; the hand dies on the "
            "Queen of Anchors; Beatrice and Cowen split a pot of 24. The seventh card is not named in the "
            "rulebook: any card of rank Q or K not yet used fits; we use the King of Crabs.",
    "players": ["Alfonse", "Beatrice", "Cowen", "Dougherty", "Eron"],
    "dealer": "Alfonse",
    "dock": "K:anchors",
    "hand": ["A:flowers", "A:crabs", "3:boats", "6:anchors", "6:boats", "Q:anchors", "K:crabs"],
    "calls": [
        {"Beatrice": "live", "Cowen": "live", "Dougherty": "live", "Eron": "live"},
        {"Beatrice": "live", "Cowen": "live", "Dougherty": "live", "Eron": "live"},
        {"Beatrice": "live", "Cowen": "live", "Dougherty": "live", "Eron": "die"},
        {"Beatrice": "die", "Cowen": "die", "Dougherty": "live"},
    ],
}


def parse_record(rec: dict[str, Any]) -> dict[str, Any]:
    """Validate a record and return it in typed form. Raises RecordError naming the first bad place."""
    records.check_keys(rec, KEYS, "powderkeg")
    players = records.players_of(rec, MIN_PLAYERS, MAX_PLAYERS, "Powderkeg", "seat order (clockwise)")
    if "dealer" not in rec:
        raise RecordError("dealer: missing (the player who deals and plays the hand)")
    dealer = rec["dealer"]
    if dealer not in players:
        raise RecordError(f"dealer: {dealer!r} is not one of the players ({', '.join(players)})")

    stacks = records.stacks_of(rec, players)
    pot_carry = records.whole(rec.get("pot_carry", 0), "pot_carry", 0)

    opts_in = rec.get("options", {})
    if not isinstance(opts_in, dict):
        raise RecordError("options: expected an object")
    for k in opts_in:
        if k not in OPTION_KEYS:
            raise RecordError(f"options.{k}: unknown option (known: {', '.join(sorted(OPTION_KEYS))})")
    for k, v in opts_in.items():  # coins and counts within the ledger's range (Options checks the rest)
        if k != "misdeal":
            records.whole(v, f"options.{k}", 0)
    try:
        options = Options(**opts_in)
    except PirateTableError as exc:
        raise RecordError(f"options: {exc}") from None

    seen: dict[IslandCard, str] = {}

    def claim(card: IslandCard, where: str) -> None:
        if card in seen:
            raise RecordError(f"{where}: card {card} is used twice (also at {seen[card]})")
        seen[card] = where

    if "dock" not in rec:
        raise RecordError("dock: missing (the docked card, e.g. 'K:anchors')")
    dock = records.card(IslandCard.parse, rec["dock"], "dock")
    claim(dock, "dock")
    hand_in = rec.get("hand")
    if not isinstance(hand_in, list):
        raise RecordError(f"hand: expected a list of the {options.hand_size} cards in the dealer's order")
    if len(hand_in) != options.hand_size:
        raise RecordError(f"hand: {len(hand_in)} cards, but the dealer sets {options.hand_size}")
    hand = []
    for i, c in enumerate(hand_in):
        card = records.card(IslandCard.parse, c, f"hand[{i}]")
        claim(card, f"hand[{i}]")
        hand.append(card)

    calls_in = rec.get("calls", [])
    if not isinstance(calls_in, list):
        raise RecordError("calls: expected a list, one object per revealed card from the "
                          f"{_ordinal(options.opening + 1)} on")
    most = options.hand_size - options.opening
    if len(calls_in) > most:
        raise RecordError(f"calls: {len(calls_in)} entries, but only cards {options.opening + 1}-"
                          f"{options.hand_size} are called on (at most {most})")
    calls = []
    for i, entry in enumerate(calls_in):
        where = f"calls[{i}]"
        if not isinstance(entry, dict):
            raise RecordError(f"{where}: expected an object player -> live, die or fold")
        parsed = {}
        for p, c in entry.items():
            records.player(p, players, f"{where}.{p}")
            if not isinstance(c, str) or c.strip().lower() not in CALLS:
                raise RecordError(f"{where}.{p}: expected live, die or fold, got {c!r}")
            parsed[p] = c.strip().lower()
        calls.append(parsed)

    return {"players": players, "dealer": dealer, "stacks": stacks, "pot_carry": pot_carry, "options": options,
            "dock": dock, "hand": hand, "calls": calls, "note": rec.get("note")}


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def play_record(rec: dict[str, Any]) -> tuple[PowderkegRound, list[dict[str, Any]]]:
    """Validate and replay a record. Returns the finished round and the rejected calls."""
    r = parse_record(rec)
    players, hand, opts = r["players"], r["hand"], r["options"]
    rnd = PowderkegRound(players, r["dealer"], r["stacks"], r["pot_carry"], opts)
    rnd.apply(Dock(r["dock"]))
    for card in hand[:opts.opening]:
        if rnd.phase == "opening":
            rnd.apply(Reveal(card))
    rejected: list[dict[str, Any]] = []
    for i, entry in enumerate(r["calls"]):
        where = f"calls[{i}]"
        position = opts.opening + i + 1
        in_now = rnd.in_players if rnd.phase == "calling" else ()
        # calls that the rules do not allow, in seat order
        for p in players:
            if p in entry and p not in in_now:
                rejected.append({"index": i, "place": f"{where}.{p}", "card_position": position, "player": p,
                                 "call": entry[p], "reason": rnd.why_illegal(Call(p, entry[p]))})
        if rnd.phase != "calling":
            continue
        missing = [p for p in in_now if p not in entry]
        if missing:
            raise RecordError(f"{where}: no call from {', '.join(missing)}, still in the hand on card {position} "
                              f"(each player still in calls live, die or fold)")
        for p in in_now:  # clockwise from the dealer's left, whatever the order in the record
            rnd.apply(Call(p, entry[p]))
        if rnd.phase == "reveal":
            rnd.apply(Reveal(hand[len(rnd.revealed)]))
    if rnd.phase == "calling":
        n = len(rnd.revealed) + 1
        raise RecordError(f"calls: the round is not finished: card {n} needs calls from "
                          f"{', '.join(rnd.in_players)} (calls[{n - opts.opening - 1}])")
    while rnd.phase == "showing":
        rnd.apply(Reveal(hand[len(rnd.revealed)]))
    assert rnd.phase == "over", rnd.phase
    return rnd, rejected


def ruling(rnd: PowderkegRound, rejected: list[dict[str, Any]]) -> dict[str, Any]:
    o = rnd.outcome
    cards = rnd.revealed
    stacks = rnd.stacks
    rounds = []
    for cr in rnd.rounds:
        rounds.append({
            "card_position": cr.position,
            "card": None if cr.card is None else str(cr.card),
            "calls": dict(cr.calls),
            "dead": cr.dead,
            "right": list(cr.right),
        })
    return {
        "game": "powderkeg",
        "players": list(rnd.players),
        "dealer": rnd.dealer,
        "next_dealer": DealRotation(rnd.players, rnd.dealer).next_dealer,
        "call_order": list(rnd.call_order),
        "options": rnd.options.as_dict(),
        "dock": str(rnd.dock),
        "hand": [str(c) for c in cards],
        "rounds": rounds,
        "end": o.end,
        "ended_at": str(cards[o.ended_at - 1]) if o.ended_at else None,
        "ended_at_position": o.ended_at,
        "dead_at": None if o.dead_at is None else str(cards[o.dead_at - 1]),
        "dead_at_position": o.dead_at,
        "dock_death": o.dock_death,
        "set_legal": o.set_legal,
        "set_problem": o.set_problem,
        "misdeal": o.misdeal,
        "misdeal_ruling": rnd.options.misdeal if o.misdeal else None,
        "winners": list(o.winners),
        "dealer_wins": o.dealer_wins,
        "pot": o.pot,
        "out": rnd.out,
        "stacks_before": dict(rnd.stacks_before),
        "pot_carry_before": rnd.pot_carry_before,
        "entries": [e.as_dict() for e in rnd.entries],
        "stacks": stacks,
        "pot_carry": rnd.pot,
        "short": [p for p in rnd.players if stacks[p] < 0],
        "rejected": rejected,
    }


def rule_record(rec: dict[str, Any]) -> dict[str, Any]:
    rnd, rejected = play_record(rec)
    return ruling(rnd, rejected)
