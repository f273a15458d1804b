"""Hand / round records (JSON) in, rulings (JSON-ready dicts) out.

The record's ``"game"`` names a game in the registry (companion/games/registry.py); its GameSpec's
``rule_record(record) -> dict`` validates the whole record first (raising RecordError naming the place, e.g.
``events[3].bid``) and only then rules it, so a malformed record never yields half a ruling. The validators the
games share live in companion/games/validate.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from companion.errors import RecordError


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
    """Rule a record of any registered game (RecordError naming the known games for an unknown one)."""
    from companion.games import registry

    return registry.get(record.get("game")).rule_record(record)
