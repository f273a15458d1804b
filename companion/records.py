"""Hand / round records (JSON) in, rulings (JSON-ready dicts) out.

The record's ``"game"`` names a game in the registry (companion/games/registry.py); its GameSpec's
``rule_record(record) -> dict`` validates the whole record first (raising RecordError naming the place, e.g.
``events[3].bid``) and only then rules it, so a malformed record never yields half a ruling. The validators the
games share live in companion/games/validate.py.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from companion import inputs
from companion.errors import RecordError


def load_record(path: str | Path) -> dict[str, Any]:
    """Read a record file strictly (companion.inputs: UTF-8, no NaN/Infinity, no duplicate keys, nested at most
    inputs.MAX_DEPTH deep). Errors are one line: the file and what is wrong."""
    data = inputs.read_json_file(path, str(path))
    if not isinstance(data, dict):
        raise RecordError(f"{path}: a record is a JSON object, got {type(data).__name__}")
    return data


def rule_record(record: dict[str, Any]) -> dict[str, Any]:
    """Rule a record of any registered game (RecordError naming the known games for an unknown one)."""
    from companion.games import registry

    return registry.get(record.get("game")).rule_record(record)
