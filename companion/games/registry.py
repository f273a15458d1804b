"""The game registry (OpenSpiel's ``register_game``): every game is one package under ``companion/games/``
that calls ``register(GameSpec(...))`` once in its ``__init__``. The CLI, session, app, camera and tests ask
the registry; nobody else compares game-name strings.

Packages are found by scanning ``companion/games/`` (any sub-package with an ``__init__`` that registers), so
adding a game touches no file outside its own package. docs/adding-a-game.md says exactly what a package
provides; tests/games/test_contract.py checks every registered game against it.

Two things live here besides the registry itself:

- :class:`GameSpec`: what the rest of the project may know about a game.
- :class:`TableModel`: the small protocol a game's *table model* implements so that the game-agnostic session
  (companion/session.py) and the app (companion/ui/) can run it: rounds, undo, rulings, history lines, the
  screen to show, and JSON for resume. Pure Python (no Kivy).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Mapping, Sequence

from companion.errors import IllegalActionError, PirateTableError, RecordError
from companion.inputs import NAME_MAX

# What `pirate-table referee --demo` (no GAME) and the app's start screen pick when nothing is chosen.
DEFAULT_GAME = "pirates-bluff"


@dataclass(frozen=True)
class GameSpec:
    """What the rest of the project may know about a game.

    - ``id``: the record's ``"game"`` value and the CLI name (``"pirate-whist"``).
    - ``title``: the name people see (start screen, errors).
    - ``min_players`` / ``max_players``: the player range (the session refuses others).
    - ``name_max``: the longest player name the game's table takes, when shorter than every session's
      (``companion.inputs.NAME_MAX``); the session refuses longer names when it starts, in one line.
    - ``deck``: a :class:`companion.decks.Deck` id (``"standard52"``), resolved with ``get_deck``.
    - ``uses_chips``: chip games use the ledger (stacks, buy-in, loans); points games keep a score sheet.
    - ``rule_record(record) -> ruling``: validates the whole record first, raising ``RecordError("<place>:
      <what>")``, then rules it; a JSON-ready dict out (``pirate-table referee``).
    - ``examples``: example record files shipped in the package (the contract test round-trips them; the
      first is what ``referee --demo ID`` rules). ``refused_examples``: malformed records the referee must
      refuse (exit 2, one line).
    - ``table``: the game's :class:`TableModel` subclass, or ``"module:Class"`` (imported when first needed).
    - ``screens``: ``"module:Class"`` of the game's Kivy screens; a ``.kv`` file with the module's name beside
      the module is loaded first. Imported only by the UI.
    - ``intents``: ``"module:Class"``; ``Class(app)`` is made once when the app builds; its public methods
      answer as the app's own while a session of this game is on (``app.bid(...)``). UI only.
    - ``nav``: ``(("Coach", "coach"),)``: nav-bar buttons (label, screen name) the game adds after "Ledger";
      a button is enabled while its screen's ``allowed()`` says so.
    - ``setup_screen``: the name of the screen the start screen opens to set up a new session of this game
      (players, seats, options); None: the start screen's own form (players, buy-in, ``start_options``).
    - ``start_options``: which of the start screen's variant controls apply to this game (``"ante"``,
      ``"window_ms"``, ``"super_wilds"``, ``"cyclone"``); the others are disabled while it is chosen.
    - ``demo``: ``"module:function"``; ``function(app, shot)`` returns the steps (zero-argument callables) that
      play a short demo through the app's intents, calling ``shot("name")`` where a screenshot belongs
      (``pirate-table app --demo --game ID --screenshot DIR``).
    - ``demo_step``: ``"module:function"``; ``function(app) -> None``: ONE step of a demo evening through the
      app's intents, decided from ``app.session`` alone (no state of its own, randomness seeded from the
      session's progress), so that an app killed at any moment and resumed carries on where the saved session
      stands: no session -> start one; the round over -> ``app.next_hand()``; else one intent (a tap, a bid, a
      card). The app crash test (tests/test_app_crash.py) plays every game's evening with it.
    - ``pot_carry_at``: chip games: where the record states the pot carried in from the previous round,
      ``"pot_carry"`` (top level) or ``"options.pot_carry"`` (the ledger fills it in: ``referee --ledger``).
    - ``odds``: ``"module"`` of the game's odds calculator (``pirate-table odds``), if any.
    - ``camera``: the game reads cards with the table camera (its deck has a camera model).
    - ``reads_rule``: ``"module:function"``; ``function(reads, players=None) -> dict``: what the game decides
      from the camera's reads of the table (Pirate's Bluff: who bids first; ``pirate-table scan --first-bidder``;
      ``players``, when known, is how many sit at the table: in the game's player range). The camera only reads;
      the game decides.
    - ``reads_hold``: ``"module:function"``; ``function(reads, players, taught=False) -> {index into reads: why}``:
      the cards the camera read that the game's screen leaves for a tap all the same when it records what was read
      (its ScanRequest's ``hold``, companion/tablecam.py; Pirate's Bluff: a starting card that could name a wrong
      first bidder once recorded; ``taught``: the camera reads a deck the players taught it, for what ``why`` says).
      The bench counts the app's first bidder with it.
    - ``summary``: one line for lists; ``extra``: anything else the game wants to publish.
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
    odds: Any = None
    summary: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    table: Any = None
    setup_screen: str | None = None
    start_options: tuple[str, ...] = ()
    demo: str | None = None
    camera: bool = False
    refused_examples: tuple[Path, ...] = ()
    pot_carry_at: str = "pot_carry"
    reads_rule: str | None = None
    reads_hold: str | None = None
    intents: str | None = None
    nav: tuple[tuple[str, str], ...] = ()
    demo_step: str | None = None
    name_max: int | None = None

    def demo_record(self) -> dict[str, Any]:
        if not self.examples:
            raise RecordError(f"{self.id}: no example record")
        return json.loads(Path(self.examples[0]).read_text(encoding="utf-8"))

    def table_model(self) -> type["TableModel"]:
        """The game's TableModel class (imported on first use when given as ``"module:Class"``)."""
        if self.table is None:
            raise PirateTableError(f"{self.title} has no table model yet: it cannot be played in the app")
        return resolve(self.table) if isinstance(self.table, str) else self.table

    def odds_module(self) -> Any:
        if self.odds is None:
            raise PirateTableError(f"{self.title} has no odds calculator")
        return importlib.import_module(self.odds) if isinstance(self.odds, str) else self.odds

    def player_range(self) -> str:
        return f"{self.min_players}-{self.max_players} players"


def resolve(ref: str) -> Any:
    """Import ``"package.module:Name"`` and return the attribute."""
    module, _, name = ref.partition(":")
    if not name:
        raise ValueError(f"expected 'module:Name', got {ref!r}")
    return getattr(importlib.import_module(module), name)


# ---------------------------------------------------------------------------------------------- table models


@dataclass(frozen=True)
class RoundStart:
    """What the session tells a table model when a round (hand, deal) begins.

    ``number``: 1 for the first round. ``history``: the rulings of the finished rounds, in order.
    ``stacks`` / ``pot_carry``: chip games only (None / 0 for points games).
    """

    number: int
    history: tuple[dict[str, Any], ...] = ()
    stacks: Mapping[str, int] | None = None
    pot_carry: int = 0


class TableModel:
    """A game at the table, as the session and the app see it. Pure: no Kivy, no clock, no files.

    The session owns the players, the chips (ledger) or the score sheet, the history of finished rounds and
    saving; the table model owns the game's options and the round in play. A subclass sets ``spec_id`` and
    implements the methods marked *required*; the rest have defaults.

    Contract (tests/games/test_contract.py checks it for every registered game):

    - ``__init__(players, options)``: ``options`` is a JSON-ready dict (or the game's own options value);
      refuse bad ones with PirateTableError. ``options_json()`` gives the dict back.
    - ``new_round(start: RoundStart)`` *required*: begin the next round; ``round`` is then its state.
    - ``apply(action)`` *required*: raise IllegalActionError (a PirateTableError) and change nothing when
      illegal. ``undo()`` *required*: take back the last action of the round in play exactly, return it; raise
      IllegalActionError when there is none. ``can_undo()``.
    - ``round_over()`` *required*; ``rule_round()`` *required*: the ruling of the finished round as a JSON-ready
      dict. Chip games: the referee's ruling (``entries``, ``stacks``, ``pot_carry``) that the ledger books.
      Points games: ``"points": {player: int}`` for this round (the session's score sheet adds them up).
    - ``round_committed(ruling)``: the session has booked the round (e.g. the deal passes on).
    - ``game_over(history)``: True when the whole game is finished (points games with a fixed plan).
    - ``screen()`` *required*: the name of the game's screen that shows the current state.
    - ``buttons_armed()``: True while the CALL-button box takes presses (default False).
    - ``round_intro(number)``: the status line when a round begins; ``describe(action)``: a status line for an
      applied action; ``history_line(ruling)``: one line per
      finished round on the History screen.
    - ``round_json()`` / ``load_round(data, start)`` *required*: the round in play as JSON (as its actions)
      and back by replaying them; ``to_json()`` / ``from_json(players, data)`` wrap options and round.
    - ``upgrade(state)``: classmethod, turn an older saved session (the whole dict) into ``to_json()`` form,
      or raise PirateTableError to refuse it cleanly.
    - ``referee_records(history)``: points games, optional: the finished rounds as records in the game's
      record format (a list, each ruled by the GameSpec's ``rule_record``), or None when the table cannot
      produce them; ``referee_points(ruling)``: the points one such ruling gives each player. Their sum is
      what the score sheet must show (the app crash test checks it).
    """

    spec_id: ClassVar[str] = ""

    def __init__(self, players: Sequence[str], options: Any = None) -> None:
        self.players: tuple[str, ...] = tuple(players)
        self.round: Any = None

    # ---- the round in play
    def new_round(self, start: RoundStart) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def apply(self, action: Any) -> None:
        if self.round is None:
            raise IllegalActionError("no round in play")
        self.round.apply(action)

    def undo(self) -> Any:
        if self.round is None:
            raise IllegalActionError("no round in play")
        return self.round.undo()

    def can_undo(self) -> bool:
        return self.round is not None and bool(getattr(self.round, "moves", ()))

    @property
    def moves(self) -> list[Any]:
        """The actions of the round in play, in order."""
        return list(getattr(self.round, "moves", ())) if self.round is not None else []

    @property
    def phase(self) -> str:
        return getattr(self.round, "phase", "") if self.round is not None else ""

    def round_over(self) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def rule_round(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def round_committed(self, ruling: dict[str, Any]) -> None:
        return None

    def game_over(self, history: Sequence[dict[str, Any]]) -> bool:
        return False

    # ---- for the app
    def screen(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def buttons_armed(self) -> bool:
        """True while the CALL-button box should take presses (Pirate's Bluff while bidding or called)."""
        return False

    def describe(self, action: Any) -> str:
        return str(action)

    def round_intro(self, number: int) -> str:
        """The status line when round ``number`` begins (after "Next hand")."""
        return f"Round {number}."

    def history_line(self, ruling: dict[str, Any]) -> str:
        pts = ruling.get("points")
        if isinstance(pts, dict):
            return ", ".join(f"{p} {v:+d}" for p, v in pts.items())
        return ruling.get("summary", "")

    # ---- options and resume
    def options_json(self) -> dict[str, Any]:
        return {}

    def round_json(self) -> dict[str, Any] | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def load_round(self, data: dict[str, Any] | None, start: RoundStart) -> None:  # pragma: no cover
        raise NotImplementedError

    def to_json(self) -> dict[str, Any]:
        return {"options": self.options_json(), "round": self.round_json() if self.round is not None else None}

    @classmethod
    def from_json(cls, players: Sequence[str], data: dict[str, Any], start: RoundStart) -> "TableModel":
        m = cls(players, data.get("options") or {})
        m.load_round(data.get("round"), start)
        return m

    @classmethod
    def upgrade(cls, state: dict[str, Any]) -> dict[str, Any]:
        raise PirateTableError(f"a saved session of version {state.get('version')!r} cannot be resumed")

    # ---- the referee's view of the score sheet (points games, optional)
    def referee_records(self, history: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
        """The finished rounds as records the game's referee rules (``GameSpec.rule_record``), or None."""
        return None

    def referee_points(self, ruling: dict[str, Any]) -> dict[str, int]:
        """The points the referee's ruling of one of ``referee_records`` gives each player."""
        raise NotImplementedError


# ---------------------------------------------------------------------------------------------- the registry

_REGISTRY: dict[str, GameSpec] = {}
_loaded = False


def register(spec: GameSpec) -> GameSpec:
    """Register a game once (a second registration of the same id is a programming error)."""
    if spec.id in _REGISTRY and _REGISTRY[spec.id] is not spec:
        raise ValueError(f"game {spec.id!r} registered twice")
    if not 1 <= spec.min_players <= spec.max_players:
        raise ValueError(f"game {spec.id!r}: bad player range {spec.min_players}-{spec.max_players}")
    if spec.name_max is not None and not 1 <= spec.name_max <= NAME_MAX:
        raise ValueError(f"game {spec.id!r}: name_max must be 1-{NAME_MAX}, got {spec.name_max!r}")
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
    raise RecordError(f"game: unknown game {_short(game_id)} (known: {known})")


def reads_game_for_deck(deck: str) -> GameSpec:
    """The game that decides from camera reads of ``deck`` (an id or alias): the first registered game on that
    deck that has a ``reads_rule``. PirateTableError when none has."""
    from companion.decks import get_deck

    want = get_deck(deck)
    for g in games():
        if g.reads_rule and get_deck(g.deck) is want:
            return g
    raise PirateTableError(f"no registered game decides anything from reads of the {want.title}")


def reads_rule_for_deck(deck: str) -> Callable[[Any], dict[str, Any]]:
    """The rule that decides from camera reads of ``deck``: ``reads_game_for_deck(deck)``'s ``reads_rule``."""
    return resolve(reads_game_for_deck(deck).reads_rule)


def reads_hold_for_deck(deck: str) -> Callable[..., dict[int, str]] | None:
    """The cards read of ``deck`` that its game's screen leaves for a tap: ``reads_game_for_deck(deck)``'s
    ``reads_hold`` (None: it records every card read)."""
    g = reads_game_for_deck(deck)
    return resolve(g.reads_hold) if g.reads_hold else None


def with_odds() -> list[GameSpec]:
    """The registered games that have an odds calculator."""
    return [g for g in games() if g.odds is not None]


def _short(v: Any) -> str:
    from companion import inputs  # a hostile value is shown shortened, control characters escaped

    return inputs.short(v)
