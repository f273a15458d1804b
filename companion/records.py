"""Hand / round records (JSON) in, rulings (JSON-ready dicts) out.

Each game registers a module in GAMES that has ``rule_record(record: dict) -> dict``. It validates the whole
record first (raising RecordError naming the place, e.g. ``events[3].bid``) and only then rules it, so a
malformed record never yields half a ruling.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from companion.errors import RecordError

GAMES: dict[str, str] = {
    "pirates-bluff": "companion.games.pirates_bluff_record",
    "powderkeg": "companion.games.powderkeg_record",
}


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file. Errors are one line: the file and what is wrong."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise RecordError(f"{p}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RecordError(f"{p}: cannot read: {exc}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{p}: bad JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    if not isinstance(data, dict):
        raise RecordError(f"{p}: a record is a JSON object, got {type(data).__name__}")
    return data


def rule_record(record: dict[str, Any]) -> dict[str, Any]:
    """Rule a record of any registered game."""
    game = record.get("game")
    if game not in GAMES:
        known = ", ".join(sorted(GAMES))
        raise RecordError(f"game: unknown game {game!r} (known: {known})")
    module = importlib.import_module(GAMES[game])
    return module.rule_record(record)
