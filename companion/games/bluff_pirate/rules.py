"""Bluff Pirate rules: a pure, deterministic state machine (python-chess / OpenSpiel style).

The players hold real cards; the rules track what the table can know: every counter's position, how many cards
each hand, the pile and the board hold, and the cards that are named when they are played. The 90 cards are
conserved: ``pile + board + sum(hands) == cards`` after every action.

A turn::

    start --Draw--> drawn --LaySet | Discard | Keep--> (next player's) start
      |                       \\--> land --Land--> start | over      (table mode: a counter reached the islands)
      +--Board--> (next player's) start

``State`` is an immutable value; ``apply(state, action)`` returns the next state or raises
``IllegalActionError`` (the state is never changed); ``Game`` keeps the states it went through, so ``undo`` is
exact. Every choice the rulebook leaves open is in docs/bluff-pirate.md and the contract's "where the rules are
silent" section:

- *In the lead* is the highest position, ties included; a joint leader cannot board; the target is strictly ahead.
- Drawing is card by card; an empty pile first takes in every card on the board (a reshuffle).
- A discard only with 5+ cards after drawing; a draw-only turn (``Keep``) only with fewer than 5.
- Boarding plays the pirate card first (a one-card hand can board), then takes min(3, target's hand).
- Positions never go below the start (0) and never past the islands (``track``).

Islands (``Options.islands``): the referee of records (``islands=False``) only stops counters at ``track``.
At the table (``islands=True``) the first counter to reach ``track`` lands on an island chosen by its player
(``Land``; the table model, which holds the secret treasure, says whether it was found). Treasure: that player
wins. Empty: the race goes on for the other island; the next forward move that ends on the islands (a counter
reaching ``track``, or one already on the empty island moving on) reaches it and wins.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Iterable

from companion.errors import IllegalActionError

MIN_PLAYERS = 2
MAX_PLAYERS = 5
CARDS = 90            # the cards in play: conserved across pile, hands and board (see docs/bluff-pirate.md)
HAND = 5              # cards dealt to each player; also the "exactly five" threshold
DEFAULT_TRACK = 30    # squares from the start to the treasure islands (configurable)
MAX_TRACK = 1000
DRAW = 2
TAKE = 3              # cards a boarder takes
BACK = 2              # squares a wrong accuser moves back
SET_SIZES = (3, 4, 5)
VISIBLE = (1, 2)
PIRATE = "pirate"
BLUFFING = "bluffing"
NOT_BLUFFING = "not bluffing"
VOTES = (BLUFFING, NOT_BLUFFING)
TRUSTED, WRONGLY_ACCUSED, CAUGHT = "trusted", "wrongly_accused", "caught"
ISLANDS = 2
UNKNOWN, EMPTY, TREASURE = "unknown", "empty", "treasure"
MAX_NAME = 40


def name_problem(v: object, what: str = "name") -> str | None:
    """Why ``v`` is not an acceptable player or card name (None when it is)."""
    if not isinstance(v, str):
        kind = {type(None): "null", bool: "true/false", int: "a number", float: "a number", list: "a list",
                dict: "an object"}.get(type(v), type(v).__name__)
        return f"a {what} is a string, got {kind}"
    if not v.strip():
        return f"a {what} cannot be empty"
    if v != v.strip():
        return f"{what} {v!r} has leading or trailing spaces"
    if len(v) > MAX_NAME:
        return f"{what} {v[:20]!r}... is longer than {MAX_NAME} characters"
    if any(not c.isprintable() for c in v):
        return f"{what} {v!r} holds a control or invisible character"
    return None


# ------------------------------------------------------------------------------------------------ actions


@dataclass(frozen=True)
class Draw:
    """Draw two cards, card by card (an empty pile first takes in the board)."""


@dataclass(frozen=True)
class LaySet:
    """Lay a set (1-2 visible of one name, the rest hidden), voted on; ``voter``'s ``vote`` decides."""

    visible: tuple[str, ...]
    hidden: tuple[str, ...]
    voter: str
    vote: str

    @property
    def size(self) -> int:
        return len(self.visible) + len(self.hidden)

    @property
    def claim(self) -> str:
        return self.visible[0] if self.visible else ""

    @property
    def bluff(self) -> bool:
        return any(c != self.claim for c in self.hidden)

    @property
    def outcome(self) -> str:
        if self.vote == NOT_BLUFFING:
            return TRUSTED
        return CAUGHT if self.bluff else WRONGLY_ACCUSED


@dataclass(frozen=True)
class Discard:
    """Lay one card face up on the board (only with 5+ cards after drawing)."""

    card: str


@dataclass(frozen=True)
class Keep:
    """Keep the two cards drawn and end the turn (only with fewer than 5 cards after drawing)."""


@dataclass(frozen=True)
class Board:
    """"All aboard!": play a pirate card, take min(3, hand) cards from ``target`` (strictly ahead)."""

    target: str


@dataclass(frozen=True)
class Land:
    """The player whose counter reached the islands lands on ``island`` (0 or 1); ``treasure`` says what the
    token there hides (only the table model, which holds the secret, can say)."""

    island: int
    treasure: bool


Action = Draw | LaySet | Discard | Keep | Board | Land


# ------------------------------------------------------------------------------------------------- state


@dataclass(frozen=True)
class Options:
    track: int = DEFAULT_TRACK
    cards: int = CARDS
    hand: int = HAND
    islands: bool = True   # False: the referee of records (counters stop at the islands, no landing)

    def check(self, n_players: int) -> None:
        for k in ("track", "cards", "hand"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int):
                raise IllegalActionError(f"{k}: expected a whole number, got {v!r}")
        if not 1 <= self.track <= MAX_TRACK:
            raise IllegalActionError(f"track: must be 1-{MAX_TRACK} squares, got {self.track}")
        if not 1 <= self.hand <= 10:
            raise IllegalActionError(f"hand: must be 1-10 cards, got {self.hand}")
        if not n_players * self.hand <= self.cards <= 1000:
            raise IllegalActionError(f"cards: {self.cards} cards cannot deal {self.hand} to {n_players} players")


@dataclass(frozen=True)
class State:
    players: tuple[str, ...]
    options: Options
    positions: tuple[int, ...]
    hands: tuple[int, ...]
    pile: int
    board: int
    turn: int = 0                 # turns completed
    phase: str = "start"          # start | drawn | land | over
    drawn: int = 0                # cards drawn in the current turn
    reshuffles: int = 0
    islands: tuple[str, ...] = (UNKNOWN, UNKNOWN)
    lander: int | None = None     # who must land (phase "land")
    winner: str | None = None
    arrivals: tuple[str, ...] = ()  # who reached the islands, in order (first time each)

    # -------------------------------------------------------------- views
    @property
    def n(self) -> int:
        return len(self.players)

    @property
    def current(self) -> str:
        return self.players[self.turn % self.n]

    def index(self, player: str) -> int:
        try:
            return self.players.index(player)
        except ValueError:
            raise IllegalActionError(f"unknown player {player!r} (players: {', '.join(self.players)})") from None

    def position(self, player: str) -> int:
        return self.positions[self.index(player)]

    def hand(self, player: str) -> int:
        return self.hands[self.index(player)]

    def positions_map(self) -> dict[str, int]:
        return dict(zip(self.players, self.positions))

    def hands_map(self) -> dict[str, int]:
        return dict(zip(self.players, self.hands))

    def leaders(self) -> list[str]:
        top = max(self.positions)
        return [p for p, x in zip(self.players, self.positions) if x == top]

    @property
    def total(self) -> int:
        return self.pile + self.board + sum(self.hands)

    @property
    def over(self) -> bool:
        return self.phase == "over"


def new_game(players: Iterable[str], options: Options | None = None) -> State:
    """Everyone on the start square with ``options.hand`` cards; the rest is the pile."""
    players = tuple(players)
    options = options or Options()
    if not MIN_PLAYERS <= len(players) <= MAX_PLAYERS:
        raise IllegalActionError(f"players: Bluff Pirate is for {MIN_PLAYERS}-{MAX_PLAYERS} players, "
                                 f"got {len(players)}")
    for p in players:
        why = name_problem(p, "player name")
        if why:
            raise IllegalActionError(f"players: {why}")
    if len(set(players)) != len(players):
        raise IllegalActionError("players: names must be distinct")
    options.check(len(players))
    n = len(players)
    return State(players, options, (0,) * n, (options.hand,) * n, options.cards - n * options.hand, 0)


# --------------------------------------------------------------------------------------------- legality


def board_targets(state: State, boarder: str | None = None) -> dict[str, str | None]:
    """Every other player -> None when ``boarder`` may board them now, else the reason not."""
    boarder = boarder or state.current
    me = state.position(boarder)
    out: dict[str, str | None] = {}
    for p, x in zip(state.players, state.positions):
        if p == boarder:
            continue
        out[p] = None if x > me else (f"{p} is not ahead of {boarder} ({x} vs {me})" if x < me
                                      else f"{p} is level with {boarder} (both on {me})")
    return out


def why_cannot_board(state: State, boarder: str | None = None) -> str | None:
    """Why ``boarder`` (the current player) cannot board at all now; None when some target is legal."""
    boarder = boarder or state.current
    if state.phase != "start":
        return "boarding replaces the whole turn: it is only possible before drawing"
    if state.hand(boarder) < 1:
        return f"{boarder} has no cards, so no pirate card to play"
    if boarder in state.leaders():
        if len(state.leaders()) == state.n:
            return "nobody is ahead: every counter is level"
        return f"{boarder} is in the lead (on {state.position(boarder)}); the leader cannot board"
    return None


def why_illegal(state: State, action: Action) -> str | None:
    """None when ``action`` may be applied to ``state``; otherwise what is wrong, in words."""
    me = state.current
    if state.phase == "over":
        return f"the game is over: {state.winner} found the treasure"
    if isinstance(action, Land):
        if state.phase != "land":
            return "nobody is landing on an island now"
        if isinstance(action.island, bool) or action.island not in range(ISLANDS):
            return f"island must be 0 or 1, got {action.island!r}"
        if not isinstance(action.treasure, bool):
            return "treasure must be true or false"
        if state.islands[action.island] != UNKNOWN:
            return f"island {action.island + 1} was already turned over"
        return None
    if state.phase == "land":
        return f"{state.players[state.lander]} must first land on an island"
    if isinstance(action, Draw):
        return None if state.phase == "start" else f"{me} has already drawn this turn"
    if isinstance(action, Board):
        why = why_cannot_board(state, me)
        if why:
            return why
        if action.target == me:
            return f"{me} cannot board their own ship"
        if action.target not in state.players:
            return f"unknown player {action.target!r} (players: {', '.join(state.players)})"
        return board_targets(state, me)[action.target]
    if state.phase != "drawn":
        return f"{me} must draw two cards first (or board a ship)"
    hand = state.hand(me)
    if isinstance(action, Keep):
        if hand >= state.options.hand:
            return (f"{me} holds {hand} cards after drawing: with {state.options.hand} or more, "
                    f"lay a set or discard one")
        return None
    if isinstance(action, Discard):
        why = name_problem(action.card, "card name")
        if why:
            return why
        if hand < state.options.hand:
            return (f"{me} holds {hand} cards after drawing: a discard needs {state.options.hand} or more "
                    f"(keep the cards instead)")
        return None
    if isinstance(action, LaySet):
        return _why_not_set(state, action)
    return f"not a Bluff Pirate action: {action!r}"


def _why_not_set(state: State, s: LaySet) -> str | None:
    me = state.current
    if not isinstance(s.visible, tuple) or not isinstance(s.hidden, tuple):
        return "a set's visible and hidden cards are lists"
    for c in s.visible + s.hidden:
        why = name_problem(c, "card name")
        if why:
            return why
    if len(s.visible) not in VISIBLE:
        return f"a set shows 1 or 2 cards face up, not {len(s.visible)}"
    if len(set(s.visible)) != 1:
        return f"the visible cards must all be the same: {', '.join(s.visible)}"
    if s.size not in SET_SIZES:
        return f"a set is 3, 4 or 5 cards, not {s.size}"
    if s.size > state.hand(me):
        return f"a set of {s.size} is more than the {state.hand(me)} cards in {me}'s hand"
    if s.voter == me:
        return f"{me} laid the set and cannot be the voter"
    if s.voter not in state.players:
        return f"unknown voter {s.voter!r} (players: {', '.join(state.players)})"
    if s.vote not in VOTES:
        return f"a vote is 'bluffing' or 'not bluffing', got {s.vote!r}"
    return None


def legal_kinds(state: State) -> list[str]:
    """The kinds of action open now: draw, board, set, discard, keep, land (none when over)."""
    if state.phase == "over":
        return []
    if state.phase == "land":
        return ["land"]
    if state.phase == "start":
        return ["draw"] + ([] if why_cannot_board(state) else ["board"])
    hand = state.hand(state.current)
    kinds = ["set"] if hand >= min(SET_SIZES) else []
    kinds.append("discard" if hand >= state.options.hand else "keep")
    return kinds


# ------------------------------------------------------------------------------------------------ apply


def apply(state: State, action: Action) -> State:
    """The state after ``action``; IllegalActionError (nothing changed) when it is not allowed."""
    why = why_illegal(state, action)
    if why is not None:
        raise IllegalActionError(why)
    if isinstance(action, Draw):
        return _draw(state)
    if isinstance(action, Land):
        return _land(state, action)
    i = state.index(state.current)
    hands = list(state.hands)
    positions = list(state.positions)
    board = state.board
    if isinstance(action, Keep):
        return _end_turn(state)
    if isinstance(action, Discard):
        hands[i] -= 1
        return _end_turn(replace(state, hands=tuple(hands), board=board + 1))
    if isinstance(action, Board):
        t = state.index(action.target)
        hands[i] -= 1                       # the pirate card goes to the board first
        board += 1
        k = min(TAKE, hands[t])
        hands[t] -= k
        hands[i] += k
        return _end_turn(replace(state, hands=tuple(hands), board=board))
    assert isinstance(action, LaySet)
    v = state.index(action.voter)
    outcome = action.outcome
    mover = i
    if outcome == CAUGHT:
        mover = v                           # the set goes back to the hand; the caller moves
    else:
        hands[i] -= action.size
        board += action.size
        if outcome == WRONGLY_ACCUSED:
            positions[v] = max(0, positions[v] - BACK)
    s = replace(state, hands=tuple(hands), positions=tuple(positions), board=board)
    return _advance(s, mover, action.size)


def _draw(state: State) -> State:
    i = state.index(state.current)
    pile, board, reshuffles, got = state.pile, state.board, state.reshuffles, 0
    for _ in range(DRAW):
        if pile == 0:
            if board == 0:
                break
            pile, board, reshuffles = board, 0, reshuffles + 1
        pile -= 1
        got += 1
    hands = list(state.hands)
    hands[i] += got
    return replace(state, pile=pile, board=board, reshuffles=reshuffles, hands=tuple(hands), phase="drawn",
                   drawn=got)


def _advance(state: State, who: int, steps: int) -> State:
    track = state.options.track
    before = state.positions[who]
    after = min(track, before + steps)
    positions = list(state.positions)
    positions[who] = after
    name = state.players[who]
    arrivals = state.arrivals
    if after == track and name not in arrivals:
        arrivals = arrivals + (name,)
    state = replace(state, positions=tuple(positions), arrivals=arrivals)
    if not state.options.islands or after < track or steps <= 0:
        return _end_turn(state)
    if EMPTY in state.islands:              # the other island holds the treasure: this move reaches it
        islands = tuple(TREASURE if x == UNKNOWN else x for x in state.islands)
        return replace(state, islands=islands, winner=name, phase="over", drawn=0)
    return replace(state, phase="land", lander=who)


def _land(state: State, action: Land) -> State:
    islands = list(state.islands)
    islands[action.island] = TREASURE if action.treasure else EMPTY
    name = state.players[state.lander]
    if action.treasure:
        return replace(state, islands=tuple(islands), winner=name, phase="over", lander=None, drawn=0)
    return _end_turn(replace(state, islands=tuple(islands), lander=None))


def _end_turn(state: State) -> State:
    return replace(state, turn=state.turn + 1, phase="start", drawn=0)


# ------------------------------------------------------------------------------------------ game + undo


@dataclass
class Game:
    """A state with exact undo: every state it went through is kept (they are immutable values)."""

    state: State
    _past: list[State] = field(default_factory=list, repr=False)

    @classmethod
    def start(cls, players: Iterable[str], options: Options | None = None) -> "Game":
        return cls(new_game(players, options))

    def apply(self, action: Action) -> State:
        nxt = apply(self.state, action)
        self._past.append(self.state)
        self.state = nxt
        return nxt

    def undo(self) -> State:
        if not self._past:
            raise IllegalActionError("nothing to undo")
        self.state = self._past.pop()
        return self.state

    @property
    def can_undo(self) -> bool:
        return bool(self._past)


@dataclass(frozen=True)
class Outcome:
    over: bool
    winner: str | None
    positions: dict[str, int]
    islands: tuple[str, ...]


def outcome(state: State) -> Outcome:
    return Outcome(state.over, state.winner, state.positions_map(), state.islands)


# ------------------------------------------------------------------------------------ random playouts


def random_action(state: State, rng: random.Random, names: tuple[str, ...] = ("hat", "sword", PIRATE)
                  ) -> Action:
    """A uniformly chosen kind of legal action, with random details (for playouts and demo mode)."""
    kinds = legal_kinds(state)
    if not kinds:
        raise IllegalActionError("the game is over")
    kind = rng.choice(kinds)
    me = state.current
    if kind == "land":
        free = [k for k in range(ISLANDS) if state.islands[k] == UNKNOWN]
        return Land(rng.choice(free), rng.random() < 0.5)
    if kind == "draw":
        return Draw()
    if kind == "board":
        return Board(rng.choice([p for p, why in board_targets(state, me).items() if why is None]))
    if kind == "keep":
        return Keep()
    if kind == "discard":
        return Discard(rng.choice(names))
    size = rng.choice([k for k in SET_SIZES if k <= state.hand(me)])
    nvis = rng.choice(VISIBLE)
    claim = rng.choice(names)
    hidden = tuple(claim if rng.random() < 0.6 else rng.choice(names) for _ in range(size - nvis))
    voter = rng.choice([p for p in state.players if p != me])
    return LaySet((claim,) * nvis, hidden, voter, rng.choice(VOTES))
