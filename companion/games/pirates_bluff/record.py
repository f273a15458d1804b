"""Pirate's Bluff hand records (JSON) in, rulings out. Format: docs/pirates-bluff.md.

The whole record is validated before anything is ruled (RecordError naming the place, e.g. ``events[3].bid``).
A well-formed event that the rules do not allow is skipped and listed in ``rejected`` with its reason.
"""

from __future__ import annotations

from typing import Any

from companion.decks.pirates72 import PBCard
from companion.games import validate as records
from companion.errors import PirateTableError, RecordError
from companion.games.pirates_bluff.rules import (
    Bid,
    Call,
    Countdown,
    Options,
    PiratesBluffHand,
    RevealStarting,
    Showdown,
    hand_size,
)

KEYS = {"game", "players", "stacks", "options", "starting_cards", "hands", "showdown_counts", "events", "note"}
OPTION_KEYS = {"super_wilds", "window_ms", "ante", "pot_carry", "cyclone"}
EVENT_KINDS = ("bid", "call", "countdown")
COUNTDOWN_WORDS = {"start": False, "going": False, "dead": True}

RULEBOOK_EXAMPLE: dict[str, Any] = {
    "game": "pirates-bluff",
    "note": "The rulebook's example of play: five players, Eris bids seven sevens, Douglas calls, six in play.",
    "players": ["Arville", "Bethany", "Carter", "Douglas", "Eris"],
    "starting_cards": {"Arville": "2D", "Bethany": "2C", "Carter": "3A", "Douglas": "4A", "Eris": "7A"},
    "hands": {
        "Arville": ["2D", "1A", "1B", "2E", "3B", "8A", "0A"],
        "Bethany": ["2C", "3C", "4B", "5A", "7B", "7C", "8B"],
        "Carter": ["3A", "1C", "1D", "2F", "4C", "5B", "8C"],
        "Douglas": ["4A", "1E", "2G", "3D", "4D", "8D", "0B"],
        "Eris": ["7A", "2A", "2B", "7D", "7E", "8E", "0C"],
    },
    "events": [
        {"t_ms": 0, "player": "Bethany", "bid": [3, 2]},
        {"t_ms": 2100, "player": "Arville", "bid": [4, 2]},
        {"t_ms": 3900, "player": "Carter", "bid": [5, 2]},
        {"t_ms": 6000, "player": "Bethany", "bid": [5, 7]},
        {"t_ms": 8200, "player": "Douglas", "bid": [6, 7]},
        {"t_ms": 9700, "player": "Carter", "bid": [7, 2]},
        {"t_ms": 11500, "player": "Eris", "bid": [7, 7]},
        {"t_ms": 13250, "player": "Douglas", "call": True},
    ],
}


def parse_record(rec: dict[str, Any]) -> dict[str, Any]:
    """Validate a record and return it in typed form. Raises RecordError naming the first bad place."""
    records.check_keys(rec, KEYS, "pirates-bluff")
    players = records.players_of(rec, 3, 8, "Pirate's Bluff")
    size = hand_size(len(players))

    stacks = records.stacks_of(rec, players)

    opts_in = rec.get("options", {})
    if not isinstance(opts_in, dict):
        raise RecordError("options: expected an object")
    for k in opts_in:
        if k not in OPTION_KEYS:
            raise RecordError(f"options.{k}: unknown option (known: {', '.join(sorted(OPTION_KEYS))})")
    pot_carry = records.whole(opts_in.get("pot_carry", 0), "options.pot_carry", 0)
    cyclone = opts_in.get("cyclone")
    if cyclone is True:
        cyclone = "left"
    elif cyclone is False:
        cyclone = None
    window = records.number(opts_in.get("window_ms", 10), "options.window_ms", 0, records.WINDOW_MAX_MS)
    try:
        options = Options(
            super_wilds=opts_in.get("super_wilds", False),
            window_ms=window,
            ante=records.whole(opts_in.get("ante", 1), "options.ante", 0),
            cyclone=cyclone,
        )
    except PirateTableError as exc:
        raise RecordError(f"options: {exc}") from None

    seen: dict[PBCard, str] = {}

    def claim(card: PBCard, where: str) -> None:
        if card in seen:
            raise RecordError(f"{where}: card {card} is dealt twice (also at {seen[card]})")
        seen[card] = where

    start_in = rec.get("starting_cards")
    if not isinstance(start_in, dict):
        raise RecordError("starting_cards: expected an object player -> card")
    for p in start_in:
        records.player(p, players, f"starting_cards.{p}")
    missing = [p for p in players if p not in start_in]
    if missing:
        raise RecordError(f"starting_cards: no starting card for {', '.join(missing)}")
    starting = {}
    for p in players:
        c = records.card(PBCard.parse, start_in[p], f"starting_cards.{p}")
        claim(c, f"starting_cards.{p}")
        starting[p] = c

    hands = None
    if rec.get("hands") is not None:
        h_in = rec["hands"]
        if not isinstance(h_in, dict):
            raise RecordError("hands: expected an object player -> list of cards")
        for p in h_in:
            records.player(p, players, f"hands.{p}")
        missing = [p for p in players if p not in h_in]
        if missing:
            raise RecordError(f"hands: no hand for {', '.join(missing)}")
        hands = {}
        for p in players:
            cards_in = h_in[p]
            if not isinstance(cards_in, list):
                raise RecordError(f"hands.{p}: expected a list of cards")
            if len(cards_in) != size:
                raise RecordError(f"hands.{p}: {len(cards_in)} cards, but hands are {size} cards "
                                  f"with {len(players)} players")
            cards = [records.card(PBCard.parse, c, f"hands.{p}[{i}]") for i, c in enumerate(cards_in)]
            if cards[0] != starting[p]:
                raise RecordError(f"hands.{p}[0]: the hand must begin with the starting card {starting[p]}, "
                                  f"not {cards[0]}")
            for i, c in enumerate(cards[1:], start=1):
                claim(c, f"hands.{p}[{i}]")
            hands[p] = cards

    counts = None
    if rec.get("showdown_counts") is not None:
        if hands is not None:
            raise RecordError("showdown_counts: give either hands or showdown_counts, not both")
        c_in = rec["showdown_counts"]
        if not isinstance(c_in, dict):
            raise RecordError("showdown_counts: expected an object player -> [naturals, wilds]")
        for p in c_in:
            records.player(p, players, f"showdown_counts.{p}")
        counts = {}
        for p in players:
            v = c_in.get(p)
            if not isinstance(v, list) or len(v) != 2:
                raise RecordError(f"showdown_counts.{p}: expected [naturals, wilds] of the called rank")
            counts[p] = (records.whole(v[0], f"showdown_counts.{p}[0]", 0), records.whole(v[1], f"showdown_counts.{p}[1]", 0))

    events_in = rec.get("events", [])
    if not isinstance(events_in, list):
        raise RecordError("events: expected a list")
    events = []
    last_t = None
    for i, ev in enumerate(events_in):
        where = f"events[{i}]"
        if not isinstance(ev, dict):
            raise RecordError(f"{where}: expected an object")
        unknown = set(ev) - {"t_ms", "player", *EVENT_KINDS}
        if unknown:
            raise RecordError(f"{where}.{sorted(unknown)[0]}: unknown key")
        t = records.number(ev.get("t_ms"), f"{where}.t_ms", -records.T_MAX_MS, records.T_MAX_MS)
        if last_t is not None and t < last_t:
            raise RecordError(f"{where}.t_ms: {t} is earlier than the event before ({last_t}); "
                              f"events are in time order")
        last_t = t
        player = records.player(ev.get("player"), players, f"{where}.player")
        kinds = [k for k in EVENT_KINDS if k in ev]
        if len(kinds) != 1:
            raise RecordError(f"{where}: expected exactly one of bid, call, countdown")
        kind = kinds[0]
        if kind == "bid":
            b = ev["bid"]
            if not isinstance(b, list) or len(b) != 2:
                raise RecordError(f"{where}.bid: expected [quantity, rank]")
            q = records.whole(b[0], f"{where}.bid[0]")
            r = records.whole(b[1], f"{where}.bid[1]", 0, 8)  # a rank that exists (0 = wild)
            events.append(Bid(player, q, r, t))
        elif kind == "call":
            if ev["call"] is not True:
                raise RecordError(f"{where}.call: expected true")
            events.append(Call(player, t))
        else:
            word = ev["countdown"]
            if word not in COUNTDOWN_WORDS:
                raise RecordError(f"{where}.countdown: expected 'start' or 'dead', got {word!r}")
            events.append(Countdown(player, t, COUNTDOWN_WORDS[word]))

    return {"players": players, "stacks": stacks, "pot_carry": pot_carry, "options": options,
            "starting": starting, "hands": hands, "counts": counts, "events": events}


def play_record(rec: dict[str, Any]) -> tuple[PiratesBluffHand, list[dict[str, Any]]]:
    """Validate and replay a record. Returns the hand and the rejected events."""
    r = parse_record(rec)
    hand = PiratesBluffHand(r["players"], r["stacks"], r["pot_carry"], r["options"])
    hand.apply(RevealStarting.of(r["starting"]))
    rejected = []
    for i, ev in enumerate(r["events"]):
        reason = hand.why_illegal(ev)
        if reason is None:
            hand.apply(ev)
        else:
            rejected.append({"index": i, "t_ms": ev.t_ms, "player": ev.player, "event": str(ev),
                             "reason": reason})
    if hand.phase == "called":
        if r["hands"] is not None:
            hand.apply(Showdown.of_hands(r["hands"]))
        elif r["counts"] is not None:
            sd = Showdown.of_counts(r["counts"])
            reason = hand.why_illegal(sd)
            if reason is not None:
                raise RecordError(f"showdown_counts: {reason}")
            hand.apply(sd)
    return hand, rejected


def ruling(hand: PiratesBluffHand, rejected: list[dict[str, Any]]) -> dict[str, Any]:
    o = hand.outcome
    bid = hand.standing_bid
    if o is not None:
        end = o.end
    elif hand.phase == "called":
        end = "awaiting_showdown"
    else:
        end = "open"
    first = hand.first_bidder
    stacks = hand.stacks
    return {
        "game": "pirates-bluff",
        "players": list(hand.players),
        "hand_size": hand.hand_size,
        "options": {"super_wilds": hand.options.super_wilds, "window_ms": hand.options.window_ms,
                    "ante": hand.options.ante, "cyclone": hand.options.cyclone},
        "announcements": hand.options.announcements(),
        "first_bidder": first,
        "first_bidder_card": str(hand.starting_cards[first]) if first else None,
        "final_bid": None if bid is None else {"quantity": bid[0], "rank": bid[1], "bidders": list(hand.bidders)},
        "callers": list(hand.callers),
        "end": end,
        "count": o.count if o else None,
        "counts": dict(o.counts) if o and o.count is not None else None,
        "bid_holds": o.bid_holds if o else None,
        "winners": list(o.winners) if o else [],
        "losers": list(o.losers) if o else [],
        "theoretical_max": hand.max_quantity,
        "stacks_before": dict(hand.stacks_before),
        "pot_carry_before": hand.pot_carry_before,
        "entries": [e.as_dict() for e in hand.entries],
        "stacks": stacks,
        "pot_carry": hand.pot,
        "short": [p for p in hand.players if stacks[p] < 0],
        "flags": list(hand.flags),
        "rejected": rejected,
    }


def rule_record(rec: dict[str, Any]) -> dict[str, Any]:
    hand, rejected = play_record(rec)
    return ruling(hand, rejected)
