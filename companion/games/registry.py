"""The game registry (OpenSpiel's ``register_game``): every game is one package under ``companion/games/``
that calls ``register(GameSpec(...))`` once in its ``__init__``. The CLI, session, app, camera and tests ask
the registry; nobody else compares game-name strings.

Packages are found by scanning ``companion/games/`` (any sub-package with an ``__init__`` that registers), so
adding a game touches no file outside its own package.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from companion.errors import RecordError


@dataclass(frozen=True)
class GameSpec:
    """What the rest of the project may know about a game.

    - ``id``: the record's ``"game"`` value and the CLI name (``"pirate-whist"``).
    - ``deck``: a :class:`companion.decks.Deck` id (``"standard52"``), resolved with ``get_deck``.
    - ``rule_record(record) -> ruling``: validates the whole record first, raising ``RecordError("<place>:
      <what>")``, then rules it; a JSON-ready dict out.
    - ``examples``: example record files shipped in the package (the contract test round-trips them; the
      first is what ``referee --demo ID`` rules).
    - ``screens``: ``"module:Class"`` of the game's Kivy screens; imported only by the UI.
    - ``uses_chips``: chip games use the ledger; points games keep a score sheet.
    """

    id: str
    title: str
    min_players: int
    max_players: int
    deck: str
    uses_chips: bool
    rule_record: Callable[[dict[str, Any]], dict[str, Any]]
    examples: tuple[Path, ...] = ()
    screens: tuple[str, ...] = ()
    odds: Callable[..., Any] | None = None
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def demo_record(self) -> dict[str, Any]:
        if not self.examples:
            raise RecordError(f"{self.id}: no example record")
        return json.loads(Path(self.examples[0]).read_text(encoding="utf-8"))


_REGISTRY: dict[str, GameSpec] = {}
_loaded = False


def register(spec: GameSpec) -> GameSpec:
    """Register a game once (a second registration of the same id is a programming error)."""
    if spec.id in _REGISTRY and _REGISTRY[spec.id] is not spec:
        raise ValueError(f"game {spec.id!r} registered twice")
    _REGISTRY[spec.id] = spec
    return spec


def load_all() -> None:
    """Import every game package under companion/games/ (each registers itself)."""
    global _loaded
    if _loaded:
        return
    import companion.games as pkg

    for info in pkgutil.iter_modules(pkg.__path__):
        if info.ispkg:
            importlib.import_module(f"companion.games.{info.name}")
    _loaded = True


def games() -> list[GameSpec]:
    """Every registered game, in id order."""
    load_all()
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def get(game_id: Any) -> GameSpec:
    """The game with this id; RecordError naming the known games otherwise."""
    load_all()
    if isinstance(game_id, str) and game_id in _REGISTRY:
        return _REGISTRY[game_id]
    known = ", ".join(sorted(_REGISTRY))
    raise RecordError(f"game: unknown game {game_id!r} (known: {known})")
