"""Bluffing Battles game records (JSON) in, rulings out, exactly per the contract
(/work/shared/contracts/bluffing-battles.md; docs/bluffing-battles.md lists every decision).

The whole record is checked before anything is ruled: first its shape (keys, variant, players, piles, plays,
reshuffles), then a replay through :mod:`rules` that refuses a card not in hand, a play after the game has
ended, a missing or wrong reshuffle. Only a record that passes every check gets a ruling.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from companion.decks.standard52 import StdCard
from companion.errors import CardError, IllegalActionError, RecordError
from companion.games.bluffing_battles import rules
from companion.games.bluffing_battles.rules import OVER, RESHUFFLE, Play, Reshuffle, State

GAME = "bluffing-battles"
KEYS = ("game", "variant", "players", "piles", "plays", "reshuffles")
REQUIRED = ("game", "variant", "players", "piles", "plays")


def _card(v: Any, where: str) -> StdCard:
    try:
        return StdCard.parse(v)
    except CardError as exc:
        raise RecordError(f"{where}: {exc}") from None


def _cards(v: Any, where: str) -> tuple[StdCard, ...]:
    if not isinstance(v, list):
        raise RecordError(f"{where}: expected a list of cards, got {_kind(v)}")
    return tuple(_card(c, f"{where}[{i}]") for i, c in enumerate(v))


def _kind(v: Any) -> str:
    return "null" if v is None else {bool: "true/false", dict: "an object", list: "a list", str: "a string"}.get(
        type(v), type(v).__name__)


def _name(v: Any, where: str) -> str:
    if not isinstance(v, str):
        raise RecordError(f"{where}: a player's name is a string, got {_kind(v)}")
    if not v.strip():
        raise RecordError(f"{where}: a player's name must not be empty")
    if not v.isprintable():
        raise RecordError(f"{where}: a player's name must be printable text, got {v!r}")
    if v != v.strip():
        raise RecordError(f"{where}: a player's name must not start or end with spaces, got {v!r}")
    return v


def _players(rec: dict[str, Any]) -> tuple[str, str]:
    players = rec["players"]
    if not isinstance(players, list):
        raise RecordError(f"players: expected a list of two names, got {_kind(players)}")
    if len(players) != 2:
        raise RecordError(f"players: Bluffing Battles is for exactly two players, got {len(players)}")
    a, b = (_name(p, f"players[{i}]") for i, p in enumerate(players))
    if a == b:
        raise RecordError(f"players[1]: names must be distinct, {b!r} is also players[0]")
    return a, b


def _per_player(v: Any, players: tuple[str, str], where: str, required: bool) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise RecordError(f"{where}: expected an object player -> cards, got {_kind(v)}")
    for k in v:
        if k not in players:
            raise RecordError(f"{where}.{k}: unknown player {k!r} (players: {', '.join(players)})")
    if required:
        for p in players:
            if p not in v:
                raise RecordError(f"{where}.{p}: missing")
    return v


def _piles(rec: dict[str, Any], players: tuple[str, str], variant: rules.Variant):
    raw = _per_player(rec["piles"], players, "piles", True)
    piles = tuple(_cards(raw[p], f"piles.{p}") for p in players)
    a, b = (Counter(s) for s in rules.shares(variant))
    if variant.decks == 2:
        for p, pile in zip(players, piles):
            _whole_share(pile, a, f"piles.{p}", f"{variant.id} gives each player a whole 52-card deck")
        return piles
    # either player may hold the red half: the one whose pile holds more red cards (on a tie, a red top card)
    reds = [sum(c.is_red for c in pile) for pile in piles]
    blacks = [len(pile) - n for pile, n in zip(piles, reds)]
    for colour, counts in (("red", reds), ("black", blacks)):
        if not any(counts):
            raise RecordError(f"piles: neither pile holds the {colour} cards; {variant.id} gives one player the "
                              f"26 red cards and the other the 26 black cards")
    if reds[0] != reds[1]:
        r = 0 if reds[0] > reds[1] else 1
    else:
        r = next((i for i, pile in enumerate(piles) if pile and pile[0].is_red), 0)
    for i, (p, pile) in enumerate(zip(players, piles)):
        share, colour = (a, "red") if i == r else (b, "black")
        _whole_share(pile, share, f"piles.{p}", f"{variant.id} gives one player the 26 red cards and the other "
                     f"the 26 black cards; {p} holds the {colour} half")
    return piles


def _whole_share(pile: tuple[StdCard, ...], share: Counter, where: str, what: str) -> None:
    seen: dict[StdCard, int] = {}
    for i, c in enumerate(pile):
        if c in seen:
            raise RecordError(f"{where}[{i}]: {c} is there twice (also at [{seen[c]}]); {what}")
        if c not in share:
            raise RecordError(f"{where}[{i}]: {c} does not belong in this pile; {what}")
        seen[c] = i
    if len(pile) != sum(share.values()):
        missing = sorted(set(share) - set(pile))
        raise RecordError(f"{where}: {len(pile)} cards, missing {', '.join(map(str, missing[:6]))}"
                          f"{' …' if len(missing) > 6 else ''}; {what}")


def _plays(rec: dict[str, Any]) -> list[tuple[StdCard, StdCard]]:
    plays = rec["plays"]
    if not isinstance(plays, list):
        raise RecordError(f"plays: expected a list of reveal pairs, got {_kind(plays)}")
    out = []
    for i, pair in enumerate(plays):
        if not isinstance(pair, list) or len(pair) != 2:
            raise RecordError(f"plays[{i}]: expected a pair of cards [first player's, second player's], got "
                              f"{_kind(pair) if not isinstance(pair, list) else f'{len(pair)} entries'}")
        out.append((_card(pair[0], f"plays[{i}][0]"), _card(pair[1], f"plays[{i}][1]")))
    return out


def _reshuffles(rec: dict[str, Any], players: tuple[str, str], variant: rules.Variant):
    if "reshuffles" not in rec:
        return ([], [])
    raw = _per_player(rec["reshuffles"], players, "reshuffles", False)
    out: tuple[list, list] = ([], [])
    for i, p in enumerate(players):
        orders = raw.get(p, [])
        if not isinstance(orders, list):
            raise RecordError(f"reshuffles.{p}: expected a list of reshuffled piles, got {_kind(orders)}")
        if orders and not variant.until_all:
            raise RecordError(f"reshuffles.{p}: {variant.id} never reshuffles a score pile (only the until-all "
                              f"variants do); leave reshuffles empty or out")
        for k, order in enumerate(orders):
            out[i].append(_cards(order, f"reshuffles.{p}[{k}]"))
    return out


def parse_record(rec: Any) -> dict[str, Any]:
    """Check the record's shape; return typed parts. RecordError names the first bad place."""
    if not isinstance(rec, dict):
        raise RecordError(f"record: expected a JSON object, got {_kind(rec)}")
    for k in rec:
        if k not in KEYS:
            raise RecordError(f"{k}: unknown key (known: {', '.join(KEYS)})")
    for k in REQUIRED:
        if k not in rec:
            raise RecordError(f"{k}: missing")
    if rec["game"] != GAME:
        raise RecordError(f"game: expected {GAME!r}, got {rec['game']!r}")
    v = rec["variant"]
    if not isinstance(v, str) or v not in rules.VARIANTS:
        raise RecordError(f"variant: unknown variant {v!r} (known: {', '.join(rules.VARIANTS)})")
    variant = rules.VARIANTS[v]
    players = _players(rec)
    piles = _piles(rec, players, variant)
    plays = _plays(rec)
    reshuffles = _reshuffles(rec, players, variant)
    return {"variant": variant, "players": players, "piles": piles, "plays": plays, "reshuffles": reshuffles}


def replay(parsed: dict[str, Any]) -> State:
    """Play the record through the rules; RecordError at the first play or reshuffle the rules refuse."""
    players = parsed["players"]
    s = rules.new_game(players, parsed["variant"], parsed["piles"])
    orders = parsed["reshuffles"]
    used = [0, 0]

    def reshuffle_what_is_listed(s: State, at: str) -> State:
        while s.phase == RESHUFFLE:
            moved = False
            for p in rules.needs_reshuffle(s):
                k = used[p]
                if k < len(orders[p]):
                    try:
                        s = rules.apply(s, Reshuffle(p, orders[p][k]))
                    except IllegalActionError as exc:
                        raise RecordError(f"reshuffles.{players[p]}[{k}]: {exc}") from None
                    used[p] += 1
                    moved = True
            if not moved:
                return s
        return s

    for i, (a, b) in enumerate(parsed["plays"]):
        s = reshuffle_what_is_listed(s, f"plays[{i}]")
        if s.phase == OVER:
            raise RecordError(f"plays[{i}]: the game is over ({s.reason}); no more plays")
        if s.phase == RESHUFFLE:
            p = rules.needs_reshuffle(s)[0]
            raise RecordError(f"plays[{i}]: before this play {players[p]} must turn the score pile into a new "
                              f"draw pile, but reshuffles.{players[p]} has no entry [{used[p]}]")
        for j, (c, p) in enumerate(((a, 0), (b, 1))):
            if not rules.can_reveal(s, p, c):
                hand = ", ".join(map(str, s.hands[p]))
                raise RecordError(f"plays[{i}][{j}]: {c} is not in {players[p]}'s hand ({hand})")
        s = rules.apply(s, Play((a, b)))
    s = reshuffle_what_is_listed(s, "the end of plays")
    for p in (0, 1):
        if used[p] < len(orders[p]):
            raise RecordError(f"reshuffles.{players[p]}[{used[p]}]: this reshuffle never happens ({players[p]} "
                              f"turns the score pile over {used[p]} time{'s' if used[p] != 1 else ''} in this game)")
    return s


def ruling_of(s: State) -> dict[str, Any]:
    players = s.players
    fights = list(s.fights)
    if s.battle:  # the record stops inside a battle
        fights.append(rules.Fight(s.battle, None, 0, s.battle_prizes))
    return {
        "game": GAME,
        "variant": s.variant.id,
        "players": list(players),
        "fights": [
            {"reveals": [[str(a), str(b)] for a, b in f.reveals],
             "winner": None if f.winner is None else players[f.winner],
             "cards_won": f.cards_won,
             "hidden_prizes": [list(f.prizes[k:k + 2]) for k in range(0, len(f.prizes), 2)]}
            for f in fights
        ],
        "score": {players[p]: len(s.scores[p]) for p in (0, 1)},
        "ended": s.over,
        "winner": s.winner_name(),
        "reason": s.reason or None,
        "draw_piles": {players[p]: len(s.piles[p]) for p in (0, 1)},
        "hands": {players[p]: [str(c) for c in s.hands[p]] for p in (0, 1)},
        "battle_pot": s.pot_size(),
        "reshuffles_done": {players[p]: s.reshuffles[p] for p in (0, 1)},
        "waiting_for_reshuffle": [players[p] for p in rules.needs_reshuffle(s)],
    }


def rule_record(record: Any) -> dict[str, Any]:
    """Validate the whole record, then rule it (a JSON-ready dict)."""
    return ruling_of(replay(parse_record(record)))
