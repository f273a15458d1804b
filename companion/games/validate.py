"""Validators shared by the games' record parsers (``record.py`` in each game package).

Each raises ``RecordError("<place>: <what>")``; the number, name and text rules themselves live in one place,
companion/inputs.py. This module imports nothing from ``companion.records`` or any game, so records -> registry
-> games -> validate has no cycle.
"""

from __future__ import annotations

from typing import Any, Callable

from companion import inputs
from companion.errors import CardError, RecordError
from companion.games.base import DEFAULT_STACK, POT


def whole(v: Any, where: str, lo: int | None = None, hi: int | None = inputs.COIN_MAX) -> int:
    """A whole number (not a bool) in ``lo..hi`` (by default at most inputs.COIN_MAX, the ledger's range)."""
    return inputs.whole(v, where, lo, hi)


T_MAX_MS = 7 * 24 * 3600 * 1000  # event times: within a week of the hand's start
WINDOW_MAX_MS = 60_000  # a simultaneity window of at most a minute


def number(v: Any, where: str, lo: float | None = None, hi: float | None = None) -> float | int:
    """A finite number (not a bool) in ``lo..hi``."""
    return inputs.number(v, where, lo, hi)


def card(parse: Callable[[Any], Any], v: Any, where: str) -> Any:
    """Parse a card with the deck's parser; a bad card names its place."""
    try:
        return parse(v)
    except CardError as exc:
        raise RecordError(f"{where}: {exc}") from None


def player(v: Any, players: list[str], where: str) -> str:
    if v not in players:
        raise RecordError(f"{where}: unknown player {inputs.short(v)} (players: {', '.join(players)})")
    return v


def check_keys(rec: Any, keys: set[str], game: str) -> None:
    if not isinstance(rec, dict):
        raise RecordError("record: expected a JSON object")
    extra = set(rec) - keys
    if extra:
        raise RecordError(f"{inputs.plain(sorted(extra)[0])}: unknown key (known: {', '.join(sorted(keys))})")
    if rec.get("game") != game:
        raise RecordError(f"game: expected {game!r}, got {inputs.short(rec.get('game'))}")


def players_of(rec: dict[str, Any], lo: int, hi: int, title: str, order: str = "seat order") -> list[str]:
    players = rec.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise RecordError(f"players: expected a list of names in {order}")
    for i, p in enumerate(players):
        inputs.name(p, f"players[{i}]")
    if len(set(players)) != len(players):
        raise RecordError("players: names must be distinct")
    if POT in players:
        raise RecordError(f"players: {POT!r} is reserved for the pot")
    if not lo <= len(players) <= hi:
        raise RecordError(f"players: {title} is for {lo}-{hi} players, got {len(players)}")
    return players


def stacks_of(rec: dict[str, Any], players: list[str]) -> dict[str, int]:
    """Optional ``stacks``: player -> coins; missing players have the default stack."""
    stacks_in = rec.get("stacks", {})
    if not isinstance(stacks_in, dict):
        raise RecordError("stacks: expected an object player -> coins")
    for p in stacks_in:
        player(p, players, f"stacks.{p}")
    return {p: whole(stacks_in.get(p, DEFAULT_STACK), f"stacks.{p}", 0) for p in players}
