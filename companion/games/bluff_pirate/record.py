"""Bluff Pirate turn records in, rulings out (contract: shared/contracts/bluff-pirate.md; docs/bluff-pirate.md).

``rule_record(record)`` validates the whole record's shape first (RecordError naming the place, e.g.
``turns[3].set.visible[1]``), then plays it through the rules; a turn the rules do not allow (a discard with
fewer than five cards, a board by the leader, a set larger than the hand) is refused the same way, naming the
turn. Nothing is printed until the whole record is ruled, so a bad record never yields half a ruling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.errors import IllegalActionError, RecordError
from companion.games.bluff_pirate import rules as R

GAME = "bluff-pirate"
KEYS = ("game", "players", "track", "turns")
TURN_KEYS = ("player", "set", "voter", "vote", "discard", "board")
SET_KEYS = ("visible", "hidden")
MAX_TURNS = 100_000


@dataclass(frozen=True)
class Turn:
    player: str
    action: R.Action | None   # None: draw only (Keep after Draw)
    kind: str                 # set | discard | board | draw


def _keys(obj: Any, allowed: tuple[str, ...], where: str) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise RecordError(f"{where}: expected a JSON object, got {_kind(obj)}")
    for k in obj:
        if k not in allowed:
            raise RecordError(f"{where + '.' if where != 'record' else ''}{k}: unknown key "
                              f"(known: {', '.join(allowed)})")
    return obj


def _kind(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null",
            int: "a number", float: "a number"}.get(type(v), type(v).__name__)


def _name(v: Any, where: str, what: str) -> str:
    why = R.name_problem(v, what)
    if why:
        raise RecordError(f"{where}: {why}")
    return v


def _player(v: Any, players: list[str], where: str) -> str:
    _name(v, where, "player name")
    if v not in players:
        raise RecordError(f"{where}: unknown player {v!r} (players: {', '.join(players)})")
    return v


def _cards(v: Any, where: str) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise RecordError(f"{where}: expected a list of card names, got {_kind(v)}")
    return tuple(_name(c, f"{where}[{k}]", "card name") for k, c in enumerate(v))


def parse_record(rec: Any) -> tuple[list[str], int, list[Turn]]:
    """Check every key and value of the record; the players, the track and the typed turns."""
    rec = _keys(rec, KEYS, "record")
    if rec.get("game") != GAME:
        raise RecordError(f"game: expected {GAME!r}, got {rec.get('game')!r}")
    if "players" not in rec:
        raise RecordError("players: missing (2-5 names in turn order)")
    players = rec["players"]
    if not isinstance(players, list):
        raise RecordError(f"players: expected a list of 2-5 names in turn order, got {_kind(players)}")
    for k, p in enumerate(players):
        _name(p, f"players[{k}]", "player name")
    if len(set(players)) != len(players):
        dup = next(p for p in players if players.count(p) > 1)
        raise RecordError(f"players: {dup!r} is listed twice")
    if not R.MIN_PLAYERS <= len(players) <= R.MAX_PLAYERS:
        raise RecordError(f"players: Bluff Pirate is for {R.MIN_PLAYERS}-{R.MAX_PLAYERS} players, "
                          f"got {len(players)}")
    track = rec.get("track", R.DEFAULT_TRACK)
    if isinstance(track, bool) or not isinstance(track, int):
        raise RecordError(f"track: expected a whole number of squares, got {track!r}")
    if not 1 <= track <= R.MAX_TRACK:
        raise RecordError(f"track: must be 1-{R.MAX_TRACK} squares, got {track}")
    if "turns" not in rec:
        raise RecordError("turns: missing (a list of turns, [] for none)")
    turns_in = rec["turns"]
    if not isinstance(turns_in, list):
        raise RecordError(f"turns: expected a list, got {_kind(turns_in)}")
    if len(turns_in) > MAX_TURNS:
        raise RecordError(f"turns: more than {MAX_TURNS} turns")
    turns = [_turn(t, k, players) for k, t in enumerate(turns_in)]
    return players, track, turns


def _turn(t: Any, k: int, players: list[str]) -> Turn:
    where = f"turns[{k}]"
    t = _keys(t, TURN_KEYS, where)
    if "player" not in t:
        raise RecordError(f"{where}.player: missing")
    who = _player(t["player"], players, f"{where}.player")
    expected = players[k % len(players)]
    if who != expected:
        raise RecordError(f"{where}.player: out of turn: it is {expected}'s turn, not {who}'s")
    chosen = [key for key in ("set", "discard", "board") if key in t]
    if len(chosen) > 1:
        raise RecordError(f"{where}: a turn holds only one of set, discard or board, got {' and '.join(chosen)}")
    for key in ("voter", "vote"):
        if key in t and chosen != ["set"]:
            raise RecordError(f"{where}.{key}: only a set is voted on")
    if not chosen:
        return Turn(who, None, "draw")
    kind = chosen[0]
    if kind == "discard":
        return Turn(who, R.Discard(_name(t["discard"], f"{where}.discard", "card name")), "discard")
    if kind == "board":
        target = _player(t["board"], players, f"{where}.board")
        if target == who:
            raise RecordError(f"{where}.board: {who} cannot board their own ship")
        return Turn(who, R.Board(target), "board")
    s = _keys(t["set"], SET_KEYS, f"{where}.set")
    for key in SET_KEYS:
        if key not in s:
            raise RecordError(f"{where}.set.{key}: missing")
    visible = _cards(s["visible"], f"{where}.set.visible")
    hidden = _cards(s["hidden"], f"{where}.set.hidden")
    if len(visible) not in R.VISIBLE:
        raise RecordError(f"{where}.set.visible: a set shows 1 or 2 cards face up, not {len(visible)}")
    if len(set(visible)) != 1:
        raise RecordError(f"{where}.set.visible: the visible cards must all be the same, got "
                          f"{', '.join(visible)}")
    size = len(visible) + len(hidden)
    if size not in R.SET_SIZES:
        raise RecordError(f"{where}.set: a set is 3, 4 or 5 cards, got {size} "
                          f"({len(visible)} visible + {len(hidden)} hidden)")
    for key in ("voter", "vote"):
        if key not in t:
            raise RecordError(f"{where}.{key}: missing (a set is voted on)")
    voter = _player(t["voter"], players, f"{where}.voter")
    if voter == who:
        raise RecordError(f"{where}.voter: {who} laid the set and cannot be the voter")
    vote = t["vote"]
    if vote not in R.VOTES:
        raise RecordError(f"{where}.vote: expected 'bluffing' or 'not bluffing', got {vote!r}")
    return Turn(who, R.LaySet(visible, hidden, voter, vote), "set")


def rule_record(rec: Any) -> dict[str, Any]:
    """The ruling of a Bluff Pirate record (keys per the contract, plus pile/board/reshuffle counts)."""
    players, track, turns = parse_record(rec)
    state = R.new_game(players, R.Options(track=track, islands=False))
    out_turns: list[dict[str, Any]] = []
    for k, t in enumerate(turns):
        where = f"turns[{k}]"
        try:
            if t.kind == "board":
                state = R.apply(state, t.action)
            else:
                state = R.apply(state, R.Draw())
                drew = state.drawn
                state = R.apply(state, t.action if t.action is not None else R.Keep())
        except IllegalActionError as exc:
            raise RecordError(f"{where}{_place(t)}: {exc}") from None
        entry: dict[str, Any] = {"player": t.player, "action": t.kind}
        if t.kind == "set":
            entry.update(bluff=t.action.bluff, outcome=t.action.outcome, size=t.action.size,
                         voter=t.action.voter)
        elif t.kind == "board":
            entry["target"] = t.action.target
        if t.kind != "board":
            entry["drew"] = drew
        entry.update(positions=state.positions_map(), hand_sizes=state.hands_map(), pile=state.pile,
                     board=state.board, reshuffles=state.reshuffles)
        out_turns.append(entry)
    return {
        "game": GAME,
        "players": players,
        "track": track,
        "turns": out_turns,
        "positions": state.positions_map(),
        "hand_sizes": state.hands_map(),
        "pile": state.pile,
        "board": state.board,
        "reshuffles": state.reshuffles,
        "cards": state.total,
        "leaders": state.leaders(),
        "islands": list(state.arrivals),
    }


def _place(t: Turn) -> str:
    return {"set": ".set", "discard": ".discard", "board": ".board", "draw": ""}[t.kind]
