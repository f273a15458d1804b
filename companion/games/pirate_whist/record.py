"""Pirate Whist game records (JSON) in, rulings out: the contract in docs/pirate-whist.md.

``rule_record(record)`` checks the whole record's shape first (keys, names, numbers, cards), then replays it
through the rules (:mod:`.rules`: one truth for the referee and the table model) and only then writes the
ruling. Anything wrong is a RecordError naming its place, e.g. ``rounds[2].bids.Ann: bid 5 is more than the 3
cards dealt`` or ``rounds[0].tricks[1][2]: revoke: ...``; a malformed record never yields half a ruling.
"""

from __future__ import annotations

import math
from typing import Any

from companion.decks.standard52 import StdCard
from companion.errors import CardError, IllegalActionError, RecordError
from companion.games.pirate_whist import rules
from companion.games.pirate_whist.rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    Bid,
    Counts,
    Deal,
    PlayCard,
    Setup,
    State,
)

GAME_ID = "pirate-whist"
KEYS = ("game", "players", "max_cards", "first_dealer", "rounds")
ROUND_KEYS = ("bids", "hands", "tricks", "won")


def _place(where: str, key: Any) -> str:
    """``where.key``; a key that is not a clean name is written as ``where['...']`` (one line, always)."""
    if rules.name_problem(key) is None and "." not in key and "[" not in key:
        return f"{where}.{key}" if where else key
    return f"{where}[{_show(key)}]"


def _keys(obj: dict[str, Any], known: tuple[str, ...], where: str) -> None:
    for k in obj:
        if k not in known:
            raise RecordError(f"{_place(where, k)}: unknown key (known: {', '.join(known)})")


def _whole(v: Any, where: str, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and not math.isfinite(v):
            raise RecordError(f"{where}: {what} must be a whole number, got {v!r}")
        raise RecordError(f"{where}: {what} must be a whole number, got {_show(v)}")
    return v


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _obj(v: Any, where: str, what: str) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise RecordError(f"{where}: expected {what}, got {type(v).__name__}")
    return v


def _list(v: Any, where: str, what: str) -> list[Any]:
    if not isinstance(v, list):
        raise RecordError(f"{where}: expected {what}, got {type(v).__name__}")
    return v


def _card(v: Any, where: str) -> StdCard:
    try:
        return rules.card(v)
    except CardError as exc:
        raise RecordError(f"{where}: {exc}") from None


def _per_player(obj: Any, players: tuple[str, ...], where: str, what: str) -> dict[str, Any]:
    """An object with exactly one entry per player (unknown names and missing players refused)."""
    d = _obj(obj, where, f"an object player -> {what}")
    for p in d:
        if p not in players:
            raise RecordError(f"{_place(where, p)}: unknown player {_show(p)} (players: {', '.join(players)})")
    for p in players:
        if p not in d:
            raise RecordError(f"{where}: no {what} for {p}")
    return d


def parse_setup(rec: Any) -> Setup:
    """The record's table: players, max_cards, first_dealer (RecordError naming the key)."""
    if not isinstance(rec, dict):
        raise RecordError(f"record: expected a JSON object, got {type(rec).__name__}")
    _keys(rec, KEYS, "")
    for k in KEYS:
        if k not in rec:
            raise RecordError(f"{k}: missing")
    if rec["game"] != GAME_ID:
        raise RecordError(f"game: expected {GAME_ID!r}, got {_show(rec['game'])}")
    players = _list(rec["players"], "players", "a list of names in seating order (clockwise)")
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise RecordError(f"players: Pirate Whist is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {len(players)}")
    for i, p in enumerate(players):
        why = rules.name_problem(p)
        if why:
            raise RecordError(f"players[{i}]: {why} (got {_show(p)})")
    seen: set[str] = set()
    for i, p in enumerate(players):
        if p in seen:
            raise RecordError(f"players[{i}]: {p!r} is listed twice (names must be distinct)")
        seen.add(p)
    n = len(players)
    m = _whole(rec["max_cards"], "max_cards", "the maximum hand size")
    limit = rules.max_cards_limit(n)
    if not 1 <= m <= limit:
        raise RecordError(f"max_cards: must be 1 to {limit} (52 cards / {n} players), got {m}")
    fd = rec["first_dealer"]
    if not isinstance(fd, str) or fd not in players:
        raise RecordError(f"first_dealer: {_show(fd)} is not one of the players ({', '.join(players)})")
    return Setup(tuple(players), m, fd)


def _parse_play(v: Any, players: tuple[str, ...], where: str) -> tuple[str, StdCard]:
    if not isinstance(v, str):
        raise RecordError(f"{where}: a play is \"player:card\", got {_show(v)}")
    name, sep, text = v.rpartition(":")
    if not sep:
        raise RecordError(f"{where}: a play is \"player:card\", got {_show(v)}")
    if name not in players:
        raise RecordError(f"{where}: unknown player {_show(name)} (players: {', '.join(players)})")
    return name, _card(text, where)


def _parse_round(rd: Any, setup: Setup, k: int) -> dict[str, Any]:
    """Shape of round ``k``: typed bids, hands, tricks, won (rules are checked later)."""
    where = f"rounds[{k}]"
    players = setup.players
    cards = setup.cards(k)
    rd = _obj(rd, where, "an object with bids and won or tricks")
    _keys(rd, ROUND_KEYS, where)
    if "bids" not in rd:
        raise RecordError(f"{where}.bids: missing (every player bids in every round)")
    bids_in = _per_player(rd["bids"], players, f"{where}.bids", "bid")
    bids: dict[str, int] = {}
    for p in players:
        b = _whole(bids_in[p], f"{where}.bids.{p}", "a bid")
        if not 0 <= b <= cards:
            if b < 0:
                raise RecordError(f"{where}.bids.{p}: bid {b} is negative")
            raise RecordError(f"{where}.bids.{p}: bid {b} is more than the {cards} "
                              f"card{'s' if cards != 1 else ''} dealt")
        bids[p] = b
    out: dict[str, Any] = {"bids": bids, "hands": None, "tricks": None, "won": None}
    if "hands" in rd and "tricks" not in rd:
        raise RecordError(f"{where}.hands: hands are given only with tricks")
    if "tricks" not in rd and "won" not in rd:
        raise RecordError(f"{where}: give won (tricks won per player) or tricks")
    if "hands" in rd:
        hands_in = _per_player(rd["hands"], players, f"{where}.hands", "hand")
        hands: dict[str, list[StdCard]] = {}
        for p in players:
            hw = f"{where}.hands.{p}"
            cs = _list(hands_in[p], hw, "a list of cards")
            if len(cs) != cards:
                raise RecordError(f"{hw}: {len(cs)} cards, but {cards} were dealt in round {k + 1}")
            hands[p] = [_card(c, f"{hw}[{i}]") for i, c in enumerate(cs)]
        out["hands"] = hands
    if "tricks" in rd:
        tw = f"{where}.tricks"
        tricks_in = _list(rd["tricks"], tw, "a list of tricks")
        tricks = []
        for t, trick in enumerate(tricks_in):
            tr = _list(trick, f"{tw}[{t}]", "a list of \"player:card\" plays")
            tricks.append([_parse_play(v, players, f"{tw}[{t}][{i}]") for i, v in enumerate(tr)])
        for t, tr in enumerate(tricks):
            if len(tr) != len(players):
                raise RecordError(f"{tw}[{t}]: {len(tr)} plays, but each of the {len(players)} players plays "
                                  "once per trick")
        if len(tricks) != cards:
            raise RecordError(f"{tw}: {len(tricks)} tricks, but round {k + 1} deals {cards} card"
                              f"{'s' if cards != 1 else ''} (every trick is given)")
        out["tricks"] = tricks
    if "won" in rd:
        won_in = _per_player(rd["won"], players, f"{where}.won", "tricks won count")
        won = {}
        for p in players:
            w = _whole(won_in[p], f"{where}.won.{p}", "tricks won")
            if not 0 <= w <= cards:
                raise RecordError(f"{where}.won.{p}: {w} tricks won, but round {k + 1} has {cards}")
            won[p] = w
        if sum(won.values()) != cards:
            raise RecordError(f"{where}.won: tricks won add up to {sum(won.values())}, but round {k + 1} has "
                              f"{cards}")
        out["won"] = won
    return out


def parse_record(rec: Any) -> tuple[Setup, list[dict[str, Any]]]:
    """Validate the record's shape; the setup and the typed rounds."""
    setup = parse_setup(rec)
    rounds = _list(rec["rounds"], "rounds", "a list of rounds")
    if len(rounds) > setup.n_rounds:
        raise RecordError(f"rounds: {len(rounds)} rounds, but the plan {setup.max_cards}..1..{setup.max_cards} "
                          f"has {setup.n_rounds}")
    return setup, [_parse_round(rd, setup, k) for k, rd in enumerate(rounds)]


def replay(setup: Setup, rounds: list[dict[str, Any]]) -> State:
    """Play the typed rounds through the rules; RecordError naming the place of the first illegal step."""
    state = rules.initial(setup)
    for k, rd in enumerate(rounds):
        where = f"rounds[{k}]"
        assert state.round is not None and state.round.index == k
        for p in setup.clockwise_from(state.round.leader):
            try:
                state = rules.apply(state, Bid(p, rd["bids"][p]))
            except IllegalActionError as exc:
                raise RecordError(f"{where}.bids.{p}: {exc}") from None
        if rd["hands"] is not None:
            try:
                state = rules.apply(state, Deal.of(rd["hands"]))
            except IllegalActionError as exc:
                raise RecordError(f"{where}.hands: {exc}") from None
        if rd["tricks"] is not None:
            for t, trick in enumerate(rd["tricks"]):
                for i, (p, c) in enumerate(trick):
                    try:
                        state = rules.apply(state, PlayCard(p, c))
                    except IllegalActionError as exc:
                        raise RecordError(f"{where}.tricks[{t}][{i}]: {exc}") from None
            played = state.done[k]
            got = played.won()
            if rd["won"] is not None:
                for p in setup.players:
                    if rd["won"][p] != got.get(p, 0):
                        raise RecordError(f"{where}.won.{p}: {rd['won'][p]}, but the tricks give {p} "
                                          f"{got.get(p, 0)}")
        else:
            try:
                state = rules.apply(state, Counts.of(rd["won"]))
            except IllegalActionError as exc:
                raise RecordError(f"{where}.won: {exc}") from None
    return state


def ruling(state: State) -> dict[str, Any]:
    """The ruling (JSON-ready) of a state: every finished round, totals, completeness, the Captain(s)."""
    setup = state.setup
    out_rounds = []
    running = {p: 0 for p in setup.players}
    for res in rules.results(state):
        for p in setup.players:
            running[p] += res.scores[p]
        r: dict[str, Any] = {
            "round": res.index + 1, "cards": res.cards, "dealer": res.dealer, "leader": res.leader,
            "bids": res.bids, "won": res.won, "scores": res.scores,
        }
        if res.trick_winners is not None:
            r["trick_winners"] = list(res.trick_winners)
            r["tricks"] = [[f"{p}:{c}" for p, c in t.plays] for t in (res.tricks or ())]
        if res.hands is not None:
            r["hands"] = {p: [str(c) for c in cs] for p, cs in res.hands.items()}
        r["totals"] = dict(running)
        out_rounds.append(r)
    oc = rules.outcome(state)
    out: dict[str, Any] = {
        "game": GAME_ID,
        "players": list(setup.players),
        "max_cards": setup.max_cards,
        "plan": list(setup.plan),
        "rounds": out_rounds,
        "totals": oc.totals,
        "complete": oc.complete,
        "winners": list(oc.winners),
    }
    if state.round is not None:
        nr = state.round
        out["next"] = {"round": nr.index + 1, "cards": nr.cards, "dealer": nr.dealer, "leader": nr.leader}
    return out


def rule_record(record: Any) -> dict[str, Any]:
    """Validate the whole record (RecordError "<place>: <what>"), then rule it."""
    setup, rounds = parse_record(record)
    return ruling(replay(setup, rounds))


def round_record(r: rules.RoundState, players: tuple[str, ...]) -> dict[str, Any]:
    """One finished round as a record round: ``tricks`` (and ``hands``) when every trick's cards were entered,
    and always ``won``."""
    rd: dict[str, Any] = {"bids": r.bid_map}
    if r.counted is None and all(t.plays for t in r.tricks):
        if r.hands is not None:
            rd["hands"] = {p: [str(c) for c in cs] for p, cs in r.hands}
        rd["tricks"] = [[f"{p}:{c}" for p, c in t.plays] for t in r.tricks]
    won = r.won()
    rd["won"] = {p: won.get(p, 0) for p in players}
    return rd


def to_record(state: State) -> dict[str, Any]:
    """The record of a state's finished rounds (what the table model exports and the referee accepts)."""
    setup = state.setup
    return {"game": GAME_ID, "players": list(setup.players), "max_cards": setup.max_cards,
            "first_dealer": setup.first_dealer,
            "rounds": [round_record(r, setup.players) for r in state.done]}


def rounds_of(setup: Setup, round_records: list[Any]) -> tuple[rules.RoundState, ...]:
    """Finished rounds back from their record form (a saved game's history); RecordError naming the place.
    The hook restriction is not re-checked (the rounds were ruled under it when played)."""
    plain = Setup(setup.players, setup.max_cards, setup.first_dealer)
    rec = {"game": GAME_ID, "players": list(setup.players), "max_cards": setup.max_cards,
           "first_dealer": setup.first_dealer, "rounds": list(round_records)}
    _, rounds = parse_record(rec)
    return replay(plain, rounds).done
