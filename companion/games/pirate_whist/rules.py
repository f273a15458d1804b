"""Pirate Whist (Oh Hell with spades always trump), as a pure library.

Explicit immutable state, legal actions, ``apply`` that raises :class:`IllegalActionError` and changes nothing,
an outcome, exact undo (:class:`WhistGame` keeps the states it passed through). Variants are parameters
(``hook``: the dealer bids last, in the open, and may not make the bids total the cards).

The rulebook: /work/shared/rules/pirate-whist.md; the record contract: docs/pirate-whist.md.

A round goes: bids (all players, any order; with ``hook`` the dealer last) -> play. Play is one of
- ``Counts``: the tricks each player won, as counted at the table (the whole round at once);
- trick by trick: each trick either as the cards played (``PlayCard``, clockwise from the leader; follow suit is
  checked exactly when the hands were dealt with ``Deal``, otherwise a player who failed to follow a suit and
  later plays it has revoked), or as just its winner (``TakeTrick``, when nobody entered the cards).

    >>> s = initial(Setup(("Ann", "Ben"), 1, "Ann"))
    >>> for a in (Bid("Ann", 1), Bid("Ben", 0), PlayCard("Ben", card("5H")), PlayCard("Ann", card("2S"))):
    ...     s = apply(s, a)
    >>> outcome(s).totals, outcome(s).winners
    ({'Ann': 11, 'Ben': 10}, ('Ann',))
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping, Union

from companion.decks.standard52 import SUIT_NAMES, StdCard, full_deck
from companion.errors import CardError, IllegalActionError

MIN_PLAYERS = 2
MAX_PLAYERS = 10
DECK_SIZE = 52
TRUMP = "S"


def card(text: Any) -> StdCard:
    """A card from its text (``"10H"``, ``"th"``, ``"AS"``); CardError otherwise. Surrounding spaces are refused."""
    if isinstance(text, StdCard):
        return text
    if not isinstance(text, str) or text != text.strip():
        raise CardError(f"not a standard card: {text!r} (expected rank 2-10/T/J/Q/K/A then suit S/H/D/C)")
    return StdCard.parse(text)


def max_cards_limit(n_players: int) -> int:
    """The largest hand size everyone can be dealt: floor(52 / players)."""
    return DECK_SIZE // n_players


def round_plan(max_cards: int) -> tuple[int, ...]:
    """Hand sizes max, max-1, ..., 1, 2, ..., max (2*max - 1 rounds)."""
    return tuple(range(max_cards, 0, -1)) + tuple(range(2, max_cards + 1))


def score(bid: int, won: int) -> int:
    """bid = won: 10 + won; otherwise minus the difference."""
    return 10 + won if bid == won else -abs(bid - won)


def beats(challenger: StdCard, best: StdCard, led: str) -> bool:
    """Does ``challenger`` beat the card now winning a trick led in suit ``led``?"""
    if challenger.suit == best.suit:
        return challenger.rank > best.rank
    if challenger.suit == TRUMP:
        return True
    return False  # off-suit, non-trump: never wins (best is either led suit or trump)


def trick_winner(plays: Iterable[tuple[str, StdCard]]) -> str:
    """The player whose card takes the trick: the highest spade, else the highest card of the led suit."""
    plays = list(plays)
    if not plays:
        raise IllegalActionError("a trick needs at least one card")
    led = plays[0][1].suit
    best_player, best = plays[0]
    for p, c in plays[1:]:
        if beats(c, best, led):
            best_player, best = p, c
    return best_player


# ------------------------------------------------------------------------------------------------ set-up


@dataclass(frozen=True)
class Setup:
    """The table's agreement before the first deal. Raises IllegalActionError when impossible."""

    players: tuple[str, ...]
    max_cards: int
    first_dealer: str
    hook: bool = False  # variant: the dealer bids last, in the open, and may not make the bids total the cards

    def __post_init__(self) -> None:
        object.__setattr__(self, "players", tuple(self.players))
        ps = self.players
        if not MIN_PLAYERS <= len(ps) <= MAX_PLAYERS:
            raise IllegalActionError(f"Pirate Whist is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {len(ps)}")
        for p in ps:
            why = name_problem(p)
            if why:
                raise IllegalActionError(f"player {p!r}: {why}")
        if len(set(ps)) != len(ps):
            raise IllegalActionError("player names must be distinct")
        m = self.max_cards
        limit = max_cards_limit(len(ps))
        if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= limit:
            raise IllegalActionError(f"maximum hand size must be 1 to {limit} for {len(ps)} players, got {m!r}")
        if self.first_dealer not in ps:
            raise IllegalActionError(f"first dealer {self.first_dealer!r} is not one of the players")
        if not isinstance(self.hook, bool):
            raise IllegalActionError(f"hook must be true or false, got {self.hook!r}")

    @property
    def plan(self) -> tuple[int, ...]:
        return round_plan(self.max_cards)

    @property
    def n_rounds(self) -> int:
        return 2 * self.max_cards - 1

    def left_of(self, player: str, steps: int = 1) -> str:
        i = self.players.index(player)
        return self.players[(i + steps) % len(self.players)]

    def dealer(self, k: int) -> str:
        """Dealer of round ``k`` (0-based): the deal passes to the left each round."""
        return self.left_of(self.first_dealer, k)

    def leader(self, k: int) -> str:
        """The player to the dealer's left leads the first trick."""
        return self.left_of(self.first_dealer, k + 1)

    def cards(self, k: int) -> int:
        return self.plan[k]

    def clockwise_from(self, player: str) -> tuple[str, ...]:
        i = self.players.index(player)
        return self.players[i:] + self.players[:i]


def name_problem(name: Any) -> str | None:
    """Why ``name`` cannot be a player's name (None when it can): non-empty printable text, no outer spaces."""
    if not isinstance(name, str):
        return f"a name is text, got {type(name).__name__}"
    if not name.strip():
        return "a name cannot be empty"
    if not name.isprintable():
        return "a name cannot hold control or non-printable characters"
    if name != name.strip():
        return "a name cannot start or end with a space"
    return None


# ------------------------------------------------------------------------------------------------ actions


@dataclass(frozen=True)
class Bid:
    player: str
    bid: int


@dataclass(frozen=True)
class Deal:
    """Each player's dealt hand (optional; then follow suit is checked exactly). Before the first play."""

    hands: tuple[tuple[str, tuple[StdCard, ...]], ...]

    @classmethod
    def of(cls, hands: Mapping[str, Iterable[Any]]) -> "Deal":
        return cls(tuple((p, tuple(card(c) for c in cs)) for p, cs in hands.items()))


@dataclass(frozen=True)
class PlayCard:
    player: str
    card: StdCard


@dataclass(frozen=True)
class TakeTrick:
    """A whole trick recorded by its winner only (no cards entered)."""

    winner: str


@dataclass(frozen=True)
class Counts:
    """The whole round's tricks won per player, as counted at the table."""

    won: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, won: Mapping[str, int]) -> "Counts":
        return cls(tuple(won.items()))


@dataclass(frozen=True)
class EditRound:
    """Replay a finished round ``index`` (0-based) from scratch with ``actions`` (a correction at the table)."""

    index: int
    actions: tuple[Any, ...]


Action = Union[Bid, Deal, PlayCard, TakeTrick, Counts, EditRound]


# ------------------------------------------------------------------------------------------------ state


@dataclass(frozen=True)
class Trick:
    leader: str
    plays: tuple[tuple[str, StdCard], ...]  # empty when only the winner was recorded
    winner: str


@dataclass(frozen=True)
class RoundState:
    """One round: its place in the plan, the bids, optional hands, the tricks so far (or the counted result)."""

    index: int  # 0-based
    cards: int
    dealer: str
    leader: str
    bids: tuple[tuple[str, int], ...] = ()
    hands: tuple[tuple[str, tuple[StdCard, ...]], ...] | None = None
    tricks: tuple[Trick, ...] = ()
    current: tuple[tuple[str, StdCard], ...] = ()  # cards of the trick in progress
    counted: tuple[tuple[str, int], ...] | None = None
    # suits each player has shown void in (failed to follow), for revoke detection without hands
    voids: tuple[tuple[str, str], ...] = ()

    @property
    def bid_map(self) -> dict[str, int]:
        return dict(self.bids)

    @property
    def hand_map(self) -> dict[str, tuple[StdCard, ...]] | None:
        return None if self.hands is None else dict(self.hands)

    @property
    def finished(self) -> bool:
        return self.counted is not None or len(self.tricks) == self.cards

    def won(self) -> dict[str, int]:
        """Tricks won so far per player (seat order of the bids' players)."""
        if self.counted is not None:
            return dict(self.counted)
        out: dict[str, int] = {}
        for t in self.tricks:
            out[t.winner] = out.get(t.winner, 0) + 1
        return out

    def played_cards(self) -> list[StdCard]:
        return [c for t in self.tricks for _, c in t.plays] + [c for _, c in self.current]

    def next_leader(self) -> str:
        return self.tricks[-1].winner if self.tricks else self.leader

    @property
    def all_tricks_carded(self) -> bool:
        return self.counted is None and all(t.plays for t in self.tricks)


@dataclass(frozen=True)
class RoundResult:
    """A finished round, as the score sheet and the record see it."""

    index: int
    cards: int
    dealer: str
    leader: str
    bids: dict[str, int]
    won: dict[str, int]
    scores: dict[str, int]
    trick_winners: tuple[str, ...] | None  # when every trick was recorded (with cards or winner only)
    tricks: tuple[Trick, ...] | None  # when every trick was recorded
    hands: dict[str, tuple[StdCard, ...]] | None


@dataclass(frozen=True)
class State:
    setup: Setup
    done: tuple[RoundState, ...] = ()
    round: RoundState | None = None  # None once the game is over

    @property
    def over(self) -> bool:
        return self.round is None


def _new_round(setup: Setup, k: int) -> RoundState:
    return RoundState(index=k, cards=setup.cards(k), dealer=setup.dealer(k), leader=setup.leader(k))


def initial(setup: Setup) -> State:
    return State(setup=setup, done=(), round=_new_round(setup, 0))


def after(setup: Setup, done: Iterable[RoundState]) -> State:
    """The state once the finished rounds ``done`` (rounds 1..k of the plan, in order) have been played."""
    done = tuple(done)
    if len(done) > setup.n_rounds:
        raise IllegalActionError(f"{len(done)} rounds, but the plan has {setup.n_rounds}")
    for k, r in enumerate(done):
        if r.index != k or not r.finished or (r.cards, r.dealer, r.leader) != \
                (setup.cards(k), setup.dealer(k), setup.leader(k)):
            raise IllegalActionError(f"round {k + 1} does not fit the plan")
    k = len(done)
    return State(setup=setup, done=done, round=_new_round(setup, k) if k < setup.n_rounds else None)


@dataclass(frozen=True)
class Outcome:
    totals: dict[str, int]
    complete: bool
    winners: tuple[str, ...]  # the Captain(s): only when complete


def results(state: State) -> list[RoundResult]:
    out = []
    for r in state.done:
        won = {p: r.won().get(p, 0) for p in state.setup.players}
        bids = r.bid_map
        full = r.counted is None
        out.append(RoundResult(
            index=r.index, cards=r.cards, dealer=r.dealer, leader=r.leader, bids=bids, won=won,
            scores={p: score(bids[p], won[p]) for p in state.setup.players},
            trick_winners=tuple(t.winner for t in r.tricks) if full else None,
            tricks=r.tricks if full else None,
            hands=r.hand_map,
        ))
    return out


def outcome(state: State) -> Outcome:
    totals = {p: 0 for p in state.setup.players}
    for res in results(state):
        for p, s in res.scores.items():
            totals[p] += s
    complete = state.over
    winners: tuple[str, ...] = ()
    if complete:
        top = max(totals.values())
        winners = tuple(p for p in state.setup.players if totals[p] == top)
    return Outcome(totals=totals, complete=complete, winners=winners)


# ------------------------------------------------------------------------------------------------ whose turn


def phase(state: State) -> str:
    """``"over"``, ``"bid"`` or ``"play"``."""
    if state.round is None:
        return "over"
    return "bid" if len(state.round.bids) < len(state.setup.players) else "play"


def to_bid(state: State) -> tuple[str, ...]:
    """Players who may bid now (any order; with ``hook`` the dealer only once everyone else has)."""
    r = state.round
    if r is None:
        return ()
    have = r.bid_map
    missing = tuple(p for p in state.setup.clockwise_from(r.leader) if p not in have)
    if state.setup.hook and len(missing) > 1:
        missing = tuple(p for p in missing if p != r.dealer)
    return missing


def hook_forbidden(state: State) -> int | None:
    """With ``hook``, the one bid the dealer may not make (the one that makes the bids total the cards)."""
    r = state.round
    if r is None or not state.setup.hook or to_bid(state) != (r.dealer,):
        return None
    f = r.cards - sum(r.bid_map.values())
    return f if 0 <= f <= r.cards else None


def to_play(state: State) -> str | None:
    """Who plays the next card (None outside play)."""
    if phase(state) != "play":
        return None
    r = state.round
    assert r is not None
    order = state.setup.clockwise_from(r.next_leader())
    return order[len(r.current)]


def void_suits(r: RoundState, player: str) -> set[str]:
    return {s for p, s in r.voids if p == player}


# ------------------------------------------------------------------------------------------------ apply


def why_not(state: State, action: Action) -> str | None:
    """Why ``action`` is illegal now (None when legal)."""
    try:
        apply(state, action)
    except IllegalActionError as exc:
        return str(exc)
    return None


def _whole(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise IllegalActionError(f"{what} must be a whole number, got {v!r}")
    return v


def apply(state: State, action: Action) -> State:
    """The state after ``action``; IllegalActionError (and ``state`` unchanged; it is immutable) otherwise."""
    r = state.round
    if r is None and not isinstance(action, EditRound):
        raise IllegalActionError("the game is over: every round of the plan has been played")
    players = state.setup.players
    if isinstance(action, EditRound):
        if isinstance(action.index, bool) or not isinstance(action.index, int) \
                or not 0 <= action.index < len(state.done):
            raise IllegalActionError(f"round {action.index!r} has not been played")
        return with_round(state, play_round(state.setup, action.index, action.actions))
    assert r is not None
    if isinstance(action, Bid):
        return _apply_bid(state, r, action)
    if isinstance(action, Deal):
        return _apply_deal(state, r, action)
    if phase(state) == "bid":
        raise IllegalActionError(f"round {r.index + 1}: still waiting for bids from {', '.join(to_bid(state))}")
    if isinstance(action, Counts):
        return _apply_counts(state, r, action)
    if isinstance(action, TakeTrick):
        if action.winner not in players:
            raise IllegalActionError(f"unknown player {action.winner!r}")
        if r.hands is not None:
            raise IllegalActionError("the hands were dealt: enter the cards of each trick")
        if r.current:
            raise IllegalActionError(f"trick {len(r.tricks) + 1} has cards entered: finish it card by card")
        t = Trick(leader=r.next_leader(), plays=(), winner=action.winner)
        return _finish(state, replace(r, tricks=r.tricks + (t,)))
    if isinstance(action, PlayCard):
        return _apply_play(state, r, action)
    raise IllegalActionError(f"not a Pirate Whist action: {action!r}")


def _apply_bid(state: State, r: RoundState, a: Bid) -> State:
    if a.player not in state.setup.players:
        raise IllegalActionError(f"unknown player {a.player!r}")
    if a.player in r.bid_map:
        raise IllegalActionError(f"{a.player} has already bid {r.bid_map[a.player]} this round")
    b = _whole(a.bid, f"{a.player}'s bid")
    if not 0 <= b <= r.cards:
        more = f"more than the {r.cards} card{'s' if r.cards != 1 else ''} dealt" if b > 0 else "negative"
        raise IllegalActionError(f"bid {b} is {more}")
    if a.player not in to_bid(state):
        raise IllegalActionError(f"{a.player} is the dealer and bids last (hook rule)")
    forbidden = hook_forbidden(state)
    if forbidden is not None and b == forbidden:
        raise IllegalActionError(f"hook rule: the dealer may not bid {b}, the bids would total the "
                                 f"{r.cards} tricks")
    order = {p: i for i, p in enumerate(state.setup.players)}
    bids = tuple(sorted(r.bids + ((a.player, b),), key=lambda pb: order[pb[0]]))
    return replace(state, round=replace(r, bids=bids))


def _apply_deal(state: State, r: RoundState, a: Deal) -> State:
    players = state.setup.players
    if r.hands is not None:
        raise IllegalActionError(f"round {r.index + 1}: the hands were already dealt")
    if r.tricks or r.current or r.counted is not None:
        raise IllegalActionError(f"round {r.index + 1}: play has started; the hands come before it")
    seen: dict[StdCard, str] = {}
    got = dict(a.hands)
    if len(got) != len(a.hands):
        raise IllegalActionError("a player's hand is given twice")
    for p in got:
        if p not in players:
            raise IllegalActionError(f"unknown player {p!r}")
    for p in players:
        if p not in got:
            raise IllegalActionError(f"no hand for {p}")
        cs = got[p]
        if len(cs) != r.cards:
            raise IllegalActionError(f"{p} holds {len(cs)} cards, but {r.cards} were dealt")
        for c in cs:
            if c in seen:
                raise IllegalActionError(f"card {c} appears twice (hands of {seen[c]} and {p})")
            seen[c] = p
    hands = tuple((p, tuple(got[p])) for p in players)
    return replace(state, round=replace(r, hands=hands))


def _apply_counts(state: State, r: RoundState, a: Counts) -> State:
    players = state.setup.players
    if r.hands is not None:
        raise IllegalActionError("the hands were dealt: enter the cards of each trick")
    if r.tricks or r.current:
        raise IllegalActionError("tricks are already entered one by one this round (undo them to give counts)")
    got = dict(a.won)
    if len(got) != len(a.won):
        raise IllegalActionError("a player's count is given twice")
    for p in got:
        if p not in players:
            raise IllegalActionError(f"unknown player {p!r}")
    for p in players:
        if p not in got:
            raise IllegalActionError(f"no count for {p}")
        w = _whole(got[p], f"{p}'s tricks won")
        if not 0 <= w <= r.cards:
            raise IllegalActionError(f"{p} cannot win {w} of {r.cards} tricks")
    total = sum(got.values())
    if total != r.cards:
        raise IllegalActionError(f"tricks won add up to {total}, but {r.cards} were played")
    return _finish(state, replace(r, counted=tuple((p, got[p]) for p in players)))


def _apply_play(state: State, r: RoundState, a: PlayCard) -> State:
    players = state.setup.players
    if a.player not in players:
        raise IllegalActionError(f"unknown player {a.player!r}")
    if not isinstance(a.card, StdCard):
        raise IllegalActionError(f"not a card: {a.card!r}")
    turn = to_play(state)
    if a.player != turn:
        raise IllegalActionError(f"{a.player} plays out of turn: it is {turn}'s turn in trick {len(r.tricks) + 1}")
    c = a.card
    if c in r.played_cards():
        raise IllegalActionError(f"{c} was already played this round")
    hands = r.hand_map
    if hands is not None:
        if c not in hands[a.player]:
            raise IllegalActionError(f"{a.player} does not hold {c}")
    if r.current:
        led = r.current[0][1].suit
        if c.suit != led:
            if hands is not None:
                left = _hand_left(r, a.player)
                if any(x.suit == led for x in left):
                    raise IllegalActionError(f"revoke: {a.player} must follow {SUIT_NAMES[led]} "
                                             f"(holds {', '.join(str(x) for x in left if x.suit == led)})")
    if c.suit in void_suits(r, a.player):
        raise IllegalActionError(f"revoke: {a.player} failed to follow {SUIT_NAMES[c.suit]} earlier this "
                                 f"round and now plays {c}")
    voids = r.voids
    if r.current and c.suit != r.current[0][1].suit and (a.player, r.current[0][1].suit) not in voids:
        voids = voids + ((a.player, r.current[0][1].suit),)
    current = r.current + ((a.player, c),)
    if len(current) < len(players):
        return replace(state, round=replace(r, current=current, voids=voids))
    t = Trick(leader=current[0][0], plays=current, winner=trick_winner(current))
    return _finish(state, replace(r, current=(), voids=voids, tricks=r.tricks + (t,)))


def _hand_left(r: RoundState, player: str) -> list[StdCard]:
    hands = r.hand_map or {}
    played = {c for t in r.tricks for p, c in t.plays if p == player} | {c for p, c in r.current if p == player}
    return [c for c in hands.get(player, ()) if c not in played]


def _finish(state: State, r: RoundState) -> State:
    """Store the round; when it is finished, move to the next one (or end the game)."""
    if not r.finished:
        return replace(state, round=r)
    done = state.done + (r,)
    k = r.index + 1
    nxt = _new_round(state.setup, k) if k < state.setup.n_rounds else None
    return replace(state, done=done, round=nxt)


# ------------------------------------------------------------------------------------------------ legal actions


def legal_actions(state: State) -> list[Action]:
    """Every legal action now, except ``Deal`` and ``Counts`` (families too large to list: check them with
    ``why_not``). Bids: each player who may bid, each allowed number. Play: the cards the next player may play
    (all unseen cards that are not a revoke, when the hands are unknown) and, without hands and with no card
    in the current trick, ``TakeTrick`` for each player."""
    r = state.round
    if r is None:
        return []
    if phase(state) == "bid":
        forbidden = hook_forbidden(state)
        return [Bid(p, b) for p in to_bid(state) for b in range(r.cards + 1) if b != forbidden]
    p = to_play(state)
    assert p is not None
    played = set(r.played_cards())
    if r.hands is not None:
        left = _hand_left(r, p)
        if r.current:
            led = r.current[0][1].suit
            follow = [c for c in left if c.suit == led]
            if follow:
                left = follow
        return [PlayCard(p, c) for c in left]
    voids = void_suits(r, p)
    acts: list[Action] = [PlayCard(p, c) for c in full_deck() if c not in played and c.suit not in voids]
    if not r.current:
        acts += [TakeTrick(w) for w in state.setup.players]
    return acts


# ------------------------------------------------------------------------------------------------ exact undo


@dataclass
class WhistGame:
    """A game in progress: ``apply`` pushes, ``undo`` pops back exactly to the state before."""

    setup: Setup
    _states: list[State] = field(default_factory=list, repr=False)
    _actions: list[Action] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if not self._states:
            self._states = [initial(self.setup)]

    @property
    def state(self) -> State:
        return self._states[-1]

    @property
    def actions(self) -> tuple[Action, ...]:
        return tuple(self._actions)

    def apply(self, action: Action) -> State:
        new = apply(self.state, action)
        self._states.append(new)
        self._actions.append(action)
        return new

    def undo(self) -> Action:
        if not self._actions:
            raise IllegalActionError("nothing to undo")
        self._states.pop()
        return self._actions.pop()

    def legal_actions(self) -> list[Action]:
        return legal_actions(self.state)

    def outcome(self) -> Outcome:
        return outcome(self.state)


# ------------------------------------------------------------------------------------------------ one round


def play_round(setup: Setup, k: int, actions: Iterable[Action]) -> RoundState:
    """Round ``k`` (0-based) played from scratch by ``actions``; IllegalActionError unless they are legal and
    finish it. Used to edit a past round (the other rounds do not depend on it)."""
    if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < setup.n_rounds:
        raise IllegalActionError(f"there is no round {k!r} in a plan of {setup.n_rounds}")
    s = State(setup=setup, done=(), round=_new_round(setup, k))
    for a in actions:
        if s.done:
            raise IllegalActionError(f"round {k + 1} is already finished before {a!r}")
        s = apply(s, a)
    if not s.done:
        raise IllegalActionError(f"round {k + 1} is not finished")
    return s.done[-1]


def with_round(state: State, r: RoundState) -> State:
    """``state`` with its finished round ``r.index`` replaced by ``r`` (totals follow from the rounds)."""
    if not r.finished:
        raise IllegalActionError(f"round {r.index + 1} is not finished")
    if not 0 <= r.index < len(state.done):
        raise IllegalActionError(f"round {r.index + 1} has not been played yet")
    done = state.done[:r.index] + (r,) + state.done[r.index + 1:]
    return replace(state, done=done)


def round_actions(r: RoundState, setup: Setup) -> list[Action]:
    """Actions that replay round ``r`` exactly (bids clockwise from the leader, so the hook dealer is last)."""
    bids = r.bid_map
    acts: list[Action] = [Bid(p, bids[p]) for p in setup.clockwise_from(r.leader) if p in bids]
    if r.hands is not None:
        acts.append(Deal(r.hands))
    if r.counted is not None:
        acts.append(Counts(r.counted))
        return acts
    for t in r.tricks:
        if t.plays:
            acts += [PlayCard(p, c) for p, c in t.plays]
        else:
            acts.append(TakeTrick(t.winner))
    acts += [PlayCard(p, c) for p, c in r.current]
    return acts
