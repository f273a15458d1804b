"""Validators shared by the games' record parsers (``record.py`` in each game package).

Each raises ``RecordError("<place>: <what>")``. This module imports nothing from ``companion.records`` or any game,
so records -> registry -> games -> validate has no cycle.
"""

from __future__ import annotations

from typing import Any, Callable

from companion.errors import CardError, RecordError
from companion.games.base import DEFAULT_STACK, POT

def whole(v: Any, where: str, lo: int | None = None) -> int:
    """A whole number (not a bool), at least ``lo``."""
    if isinstance(v, bool) or not isinstance(v, int):
        raise RecordError(f"{where}: expected a whole number, got {v!r}")
    if lo is not None and v < lo:
        raise RecordError(f"{where}: must be at least {lo}, got {v}")
    return v


def card(parse: Callable[[Any], Any], v: Any, where: str) -> Any:
    """Parse a card with the deck's parser; a bad card names its place."""
    try:
        return parse(v)
    except CardError as exc:
        raise RecordError(f"{where}: {exc}") from None


def player(v: Any, players: list[str], where: str) -> str:
    if v not in players:
        raise RecordError(f"{where}: unknown player {v!r} (players: {', '.join(players)})")
    return v


def check_keys(rec: Any, keys: set[str], game: str) -> None:
    if not isinstance(rec, dict):
        raise RecordError("record: expected a JSON object")
    extra = set(rec) - keys
    if extra:
        raise RecordError(f"{sorted(extra)[0]}: unknown key (known: {', '.join(sorted(keys))})")
    if rec.get("game") != game:
        raise RecordError(f"game: expected {game!r}, got {rec.get('game')!r}")


def players_of(rec: dict[str, Any], lo: int, hi: int, title: str, order: str = "seat order") -> list[str]:
    players = rec.get("players")
    if not isinstance(players, list) or not all(isinstance(p, str) and p.strip() for p in players):
        raise RecordError(f"players: expected a list of names in {order}")
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
