"""Bluffing Battles: the pure rules (explicit state, legal actions, apply, outcome, exact undo).

Two players each hold a face-up hand of three; each fight both reveal one card at once. The higher value
(2 low .. A high, suits never matter) takes every card on the table into its score pile; equal values start a
battle: both draw one, each puts hidden prizes from the top of the draw pile, both reveal again (equal again:
the battle repeats). After a fight or battle both draw one. Four variants (``VARIANTS``): one or two decks,
played through once or "until all" (score piles are reshuffled into new draw piles; a player who must reshuffle
a score pile of ``limit`` cards or fewer loses at once).

The state is an immutable value (:class:`State`); :func:`apply` returns a new state or raises
:class:`IllegalActionError` (the old state is untouched). :class:`Game` keeps the history for exact undo.

Cards are :class:`StdCard` values, or ``None`` for a card whose face is not known (the table model does not
know the order of a shuffled draw pile; the referee always knows every card). Cards of the same face from two
decks are interchangeable: the contract never tells the decks apart.

Automatic steps run inside :func:`apply`: after a decided reveal the winner takes the table, then a *draw*
step; after equal reveals a *draw* step and a *prizes* step. A step in which a player needs a card from an
empty pile either ends the game (one pass, or the limit loss) or waits in phase ``"reshuffle"`` for that
player's :class:`Reshuffle`. Decisions where the rules are silent follow the contract
(``/work/shared/contracts/bluffing-battles.md``) and are listed in docs/bluffing-battles.md.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional, Sequence, Union

from companion.decks.standard52 import RANK_NAMES, StdCard, full_deck
from companion.errors import IllegalActionError

Card = Optional[StdCard]  # None: a card whose face is not known (face down, shuffled)

REVEAL, RESHUFFLE, OVER = "reveal", "reshuffle", "over"
DRAW, PRIZES = "draw", "prizes"
HAND_SIZE = 3


@dataclass(frozen=True)
class Variant:
    id: str
    decks: int  # 2: each player a whole deck; 1: one player the red half, the other the black half
    prizes: int  # hidden prizes each player puts up per battle
    until_all: bool  # score piles are reshuffled into new draw piles
    limit: Optional[int]  # until-all: a player who must reshuffle a score pile of this many cards or fewer loses
    summary: str

    @property
    def share(self) -> int:
        return 52 if self.decks == 2 else 26

    @property
    def total(self) -> int:
        return 2 * self.share


VARIANTS: dict[str, Variant] = {
    v.id: v
    for v in (
        Variant("two-decks", 2, 2, False, None,
                "Each player a whole deck, played through once; 2 hidden prizes per battle."),
        Variant("one-deck", 1, 1, False, None,
                "One deck split red against black, played through once; 1 hidden prize per battle."),
        Variant("two-decks-until-all", 2, 3, True, 13,
                "Each player a whole deck; score piles are reshuffled; 3 hidden prizes; 13 or fewer to reshuffle loses."),
        Variant("one-deck-until-all", 1, 2, True, 7,
                "Red against black; score piles are reshuffled; 2 hidden prizes; 7 or fewer to reshuffle loses."),
    )
}


def variant_of(v: Union[str, Variant]) -> Variant:
    if isinstance(v, Variant):
        return v
    if isinstance(v, str) and v in VARIANTS:
        return VARIANTS[v]
    raise IllegalActionError(f"unknown variant {v!r} (known: {', '.join(VARIANTS)})")


def shares(variant: Union[str, Variant]) -> tuple[tuple[StdCard, ...], tuple[StdCard, ...]]:
    """The two players' shares: two whole decks, or the red half and the black half."""
    v = variant_of(variant)
    deck = full_deck()
    if v.decks == 2:
        return deck, deck
    return tuple(c for c in deck if c.is_red), tuple(c for c in deck if not c.is_red)


def all_cards(variant: Union[str, Variant]) -> Counter:
    a, b = shares(variant)
    return Counter(a) + Counter(b)


def card_text(c: Card) -> str:
    return "?" if c is None else str(c)


def rank_name(c: StdCard) -> str:
    return RANK_NAMES[c.rank]


# ------------------------------------------------------------------------------------------------ actions


@dataclass(frozen=True)
class Play:
    """Both players' revealed cards of one fight (or one reveal of a battle), ``cards[i]`` for player i."""

    cards: tuple[StdCard, StdCard]


@dataclass(frozen=True)
class Reshuffle:
    """Player ``player`` turns the score pile into a new draw pile. ``order`` (top first) must be a permutation
    of the score pile; ``None``: the order is not known (a real shuffle at the table)."""

    player: int
    order: Optional[tuple[Card, ...]] = None


Action = Union[Play, Reshuffle]


@dataclass(frozen=True)
class Fight:
    """One fight or whole battle: every reveal pair, the winner's index (None: nobody won it), cards taken."""

    reveals: tuple[tuple[StdCard, StdCard], ...]
    winner: Optional[int]
    cards_won: int
    prizes: tuple[int, ...] = ()  # hidden prizes each player put up per battle round, flattened: (p0, p1, p0, p1…)

    @property
    def is_battle(self) -> bool:
        return self.reveals[0][0].rank == self.reveals[0][1].rank


# ------------------------------------------------------------------------------------------------ state

Pair = tuple[tuple[Card, ...], tuple[Card, ...]]


@dataclass(frozen=True)
class State:
    players: tuple[str, str]
    variant: Variant
    piles: Pair  # draw piles, top first
    hands: Pair
    scores: Pair  # score piles, in the order the cards arrived
    pot: Pair  # each player's own cards on the table in the fight/battle in progress
    phase: str = REVEAL
    pending: tuple[str, ...] = ()  # automatic steps still to run (DRAW, PRIZES)
    needs: tuple[bool, bool] = (False, False)  # phase RESHUFFLE: who must still reshuffle for the pending step
    battle: tuple[tuple[StdCard, StdCard], ...] = ()  # reveals of the fight in progress (a battle)
    battle_prizes: tuple[int, ...] = ()
    fights: tuple[Fight, ...] = ()
    reshuffles: tuple[int, int] = (0, 0)
    short: tuple[bool, bool] = (False, False)  # outside until-all: a draw that found an empty pile
    winner: Union[None, int, str] = None  # 0 / 1 / "tie" once over
    reason: str = ""  # the game end (or limit loss) in words
    last: str = ""  # what the last action did, in words

    # -------------------------------------------------------------- views
    @property
    def over(self) -> bool:
        return self.phase == OVER

    @property
    def in_battle(self) -> bool:
        return bool(self.battle)

    def other(self, p: int) -> int:
        return 1 - p

    def score(self) -> tuple[int, int]:
        return len(self.scores[0]), len(self.scores[1])

    def pot_size(self) -> int:
        return len(self.pot[0]) + len(self.pot[1])

    def winner_name(self) -> Optional[str]:
        if self.winner is None:
            return None
        if self.winner == "tie":
            return "tie"
        return self.players[self.winner]

    def cards(self) -> Counter:
        """Every card of the game where it lies (unknown faces counted under None)."""
        c: Counter = Counter()
        for part in (self.piles, self.hands, self.scores, self.pot):
            for side in part:
                c.update(side)
        return c


def _set(pair: Pair, p: int, value: Sequence[Card]) -> Pair:
    value = tuple(value)
    return (value, pair[1]) if p == 0 else (pair[0], value)


def _remove(cards: tuple[Card, ...], c: Card) -> tuple[Card, ...]:
    i = cards.index(c)
    return cards[:i] + cards[i + 1:]


def new_game(players: Sequence[str], variant: Union[str, Variant],
             piles: Optional[Sequence[Sequence[Card]]] = None) -> State:
    """The start: each player takes the top three cards of the draw pile as a face-up hand. ``piles`` (top
    first) must be each player's whole share; ``None``: the faces are not known (shuffled at the table)."""
    v = variant_of(variant)
    if len(players) != 2 or players[0] == players[1]:
        raise IllegalActionError("Bluffing Battles is for exactly two players with different names")
    if piles is None:
        piles = ((None,) * v.share, (None,) * v.share)
    piles = (tuple(piles[0]), tuple(piles[1]))
    check_shares(v, piles)
    return State(
        players=(players[0], players[1]), variant=v,
        piles=(piles[0][HAND_SIZE:], piles[1][HAND_SIZE:]),
        hands=(piles[0][:HAND_SIZE], piles[1][:HAND_SIZE]),
        scores=((), ()), pot=((), ()),
        last="Both take the top three cards of their draw pile as a face-up hand.",
    )


def check_shares(v: Variant, piles: Pair) -> None:
    """Each pile must be its player's share (unknown faces are accepted; known faces must fit)."""
    for p, pile in enumerate(piles):
        if len(pile) != v.share:
            raise IllegalActionError(f"player {p + 1}'s pile has {len(pile)} cards; {v.id} gives each {v.share}")
    known = [Counter(c for c in pile if c is not None) for pile in piles]
    a, b = (Counter(s) for s in shares(v))
    if v.decks == 2:
        for p in (0, 1):
            if known[p] - a:
                c = sorted(known[p] - a)[0]
                raise IllegalActionError(f"player {p + 1}'s pile holds {c} twice; it must be one whole deck")
        return
    if not (known[0] - a or known[1] - b) or not (known[0] - b or known[1] - a):
        return
    raise IllegalActionError("one-deck: one player holds the 26 red cards and the other the 26 black cards")


# ------------------------------------------------------------------------------------------------ actions


def needs_reshuffle(s: State) -> tuple[int, ...]:
    """The players who must turn their score pile into a new draw pile before the game can go on."""
    return tuple(p for p in (0, 1) if s.phase == RESHUFFLE and s.needs[p])


def legal_actions(s: State) -> list[Action]:
    """Every legal action. Reveals: each pair of distinct faces from the two hands (an unknown card in a
    hand stands for any face, listed as None). Reshuffles: ``Reshuffle(p)`` (any permutation is legal)."""
    if s.phase == REVEAL:
        return [Play((a, b)) for a in dict.fromkeys(s.hands[0]) for b in dict.fromkeys(s.hands[1])]
    if s.phase == RESHUFFLE:
        return [Reshuffle(p) for p in needs_reshuffle(s)]
    return []


def can_reveal(s: State, p: int, c: StdCard) -> bool:
    return s.phase == REVEAL and (c in s.hands[p] or None in s.hands[p])


def apply(s: State, action: Action) -> State:
    """The state after ``action``; IllegalActionError (nothing changes) when the rules do not allow it."""
    if s.phase == OVER:
        raise IllegalActionError(f"the game is over: {s.reason}")
    if isinstance(action, Play):
        return _play(s, action)
    if isinstance(action, Reshuffle):
        return _reshuffle(s, action)
    raise IllegalActionError(f"not a Bluffing Battles action: {action!r}")


def _play(s: State, action: Play) -> State:
    if s.phase != REVEAL:
        who = " and ".join(s.players[p] for p in needs_reshuffle(s))
        raise IllegalActionError(f"{who} must first turn the score pile into a new draw pile")
    cards = action.cards
    if not (isinstance(cards, tuple) and len(cards) == 2 and all(isinstance(c, StdCard) for c in cards)):
        raise IllegalActionError("a reveal is two cards, one per player")
    hands = s.hands
    for p, c in enumerate(cards):
        hand = hands[p]
        if c in hand:
            hands = _set(hands, p, _remove(hand, c))
        elif None in hand:
            hands = _set(hands, p, _remove(hand, None))
        else:
            shown = ", ".join(card_text(x) for x in hand) or "empty"
            raise IllegalActionError(f"{c} is not in {s.players[p]}'s hand ({shown})")
    pot = (s.pot[0] + (cards[0],), s.pot[1] + (cards[1],))
    battle = s.battle + (cards,)
    a, b = cards
    if a.rank == b.rank:
        s = replace(s, hands=hands, pot=pot, battle=battle, pending=(DRAW, PRIZES),
                    last=f"{a} against {b}: equal {rank_name(a)}s, a battle!")
        return _run(s)
    w = 0 if a.rank > b.rank else 1
    won = pot[0] + pot[1]
    scores = _set(s.scores, w, s.scores[w] + won)
    fight = Fight(battle, w, len(won), s.battle_prizes)
    kind = "the battle" if len(battle) > 1 else "the fight"
    s = replace(s, hands=hands, pot=((), ()), scores=scores, battle=(), battle_prizes=(),
                fights=s.fights + (fight,), pending=(DRAW,),
                last=f"{s.players[w]}'s {cards[w]} beats {cards[1 - w]}: {s.players[w]} wins {kind} "
                     f"and takes {len(won)} cards.")
    return _run(s)


def _reshuffle(s: State, action: Reshuffle) -> State:
    p = action.player
    if p not in (0, 1) or isinstance(p, bool):
        raise IllegalActionError(f"no player {p!r}")
    if s.phase != RESHUFFLE or not s.needs[p]:
        raise IllegalActionError(f"{s.players[p]} has no reshuffle to make now")
    score = s.scores[p]
    if action.order is None:
        order: tuple[Card, ...] = (None,) * len(score)
    else:
        order = tuple(action.order)
        if len(order) != len(score) or (None not in score and Counter(order) != Counter(score)):
            raise IllegalActionError(f"not a permutation of {s.players[p]}'s score pile ({len(score)} cards: "
                                     f"{', '.join(sorted(card_text(c) for c in score))})")
    piles = _set(s.piles, p, s.piles[p] + order)
    needs = _set_flag(s.needs, p, False)
    s = replace(s, piles=piles, scores=_set(s.scores, p, ()), needs=needs,
                reshuffles=_set_count(s.reshuffles, p),
                last=f"{s.players[p]} shuffles the {len(score)}-card score pile into a new draw pile.")
    if any(needs):
        return s
    return _run(replace(s, phase=REVEAL))


def _set_flag(t: tuple[bool, bool], p: int, v: bool) -> tuple[bool, bool]:
    return (v, t[1]) if p == 0 else (t[0], v)


def _set_count(t: tuple[int, int], p: int) -> tuple[int, int]:
    return (t[0] + 1, t[1]) if p == 0 else (t[0], t[1] + 1)


def _run(s: State) -> State:
    """Run the pending automatic steps until the next reveal, a needed reshuffle, or the end."""
    v = s.variant
    while s.pending:
        step = s.pending[0]
        n = 1 if step == DRAW else v.prizes
        if v.until_all:
            short = tuple(len(s.piles[p]) < n for p in (0, 1))
            if any(short):
                cannot = tuple(short[p] and len(s.scores[p]) <= v.limit for p in (0, 1))
                if any(cannot):
                    return _limit_loss(s, cannot)
                return replace(s, phase=RESHUFFLE, needs=short)  # type: ignore[arg-type]
            want = (n, n)
        else:  # skip what cannot be done; a draw from an empty pile ends the game (after the battle)
            want = tuple(min(n, len(pile)) for pile in s.piles)  # type: ignore[assignment]
            if step == DRAW:
                s = replace(s, short=(s.short[0] or want[0] < 1, s.short[1] or want[1] < 1))
        piles, hands, pot = s.piles, s.hands, s.pot
        for p in (0, 1):
            n = want[p]
            taken, piles = piles[p][:n], _set(piles, p, piles[p][n:])
            if step == DRAW:
                hands = _set(hands, p, hands[p] + taken)
            else:
                pot = _set(pot, p, pot[p] + taken)
        s = replace(s, piles=piles, hands=hands, pot=pot, pending=s.pending[1:])
        if step == PRIZES:
            s = replace(s, battle_prizes=s.battle_prizes + tuple(want))
            put = " and ".join(f"{s.players[p]} {want[p]}" for p in (0, 1))
            s = replace(s, last=f"{s.last} Hidden prizes: {put}.")
        if step == DRAW and not v.until_all and any(s.short) and not s.in_battle:
            return _game_end(s)
    if s.in_battle and not (s.hands[0] and s.hands[1]):
        return _battle_stalls(s)
    return replace(s, phase=REVEAL, needs=(False, False))


def _limit_loss(s: State, cannot: tuple[bool, ...]) -> State:
    v = s.variant
    fights = s.fights
    if s.in_battle:
        fights = fights + (Fight(s.battle, None, 0, s.battle_prizes),)
    if all(cannot):
        winner: Union[int, str] = "tie"
        reason = (f"Both must turn a score pile of {v.limit} or fewer cards into a draw pile "
                  f"({s.players[0]} {len(s.scores[0])}, {s.players[1]} {len(s.scores[1])}): a tie.")
    else:
        loser = cannot.index(True)
        winner = 1 - loser
        reason = (f"{s.players[loser]} needs a card but the draw pile is empty and the score pile holds only "
                  f"{len(s.scores[loser])} cards ({v.limit} or fewer): {s.players[winner]} wins"
                  + (", even mid-battle." if s.in_battle else "."))
    return replace(s, phase=OVER, fights=fights, battle=(), battle_prizes=(), pending=(), needs=(False, False),
                   winner=winner, reason=reason, last=f"{s.last} {reason}".strip())


def _battle_stalls(s: State) -> State:
    """No card left to reveal: each player takes back their own cards of the battle; the game ends."""
    scores = (s.scores[0] + s.pot[0], s.scores[1] + s.pot[1])
    fights = s.fights + (Fight(s.battle, None, 0, s.battle_prizes),)
    s = replace(s, scores=scores, pot=((), ()), battle=(), battle_prizes=(), fights=fights, pending=(),
                last=f"{s.last} No card is left to reveal: each takes their own cards of the battle.")
    return _game_end(s)


def _game_end(s: State) -> State:
    """Outside until-all: a player had to draw and could not. Hands go into their own score piles."""
    scores = (s.scores[0] + s.hands[0], s.scores[1] + s.hands[1])
    a, b = len(scores[0]), len(scores[1])
    winner: Union[int, str] = "tie" if a == b else (0 if a > b else 1)
    if winner == "tie":
        result = f"both have {a} cards: a tie."
    else:
        result = f"{s.players[winner]} wins with {max(a, b)} cards to {min(a, b)}."
    reason = f"A draw pile is empty when a card must be drawn; the hands go into the score piles; {result}"
    return replace(s, scores=scores, hands=((), ()), phase=OVER, pending=(), winner=winner, reason=reason,
                   last=f"{s.last} {reason}".strip())


# ------------------------------------------------------------------------------------------------ game


@dataclass
class Game:
    """A state with its history: ``apply`` pushes, ``undo`` pops (exact)."""

    state: State
    history: list[State] = field(default_factory=list)

    @classmethod
    def start(cls, players: Sequence[str], variant: Union[str, Variant],
              piles: Optional[Sequence[Sequence[Card]]] = None) -> "Game":
        return cls(new_game(players, variant, piles))

    def apply(self, action: Action) -> State:
        new = apply(self.state, action)
        self.history.append(self.state)
        self.state = new
        return new

    def undo(self) -> State:
        if not self.history:
            raise IllegalActionError("nothing to undo")
        self.state = self.history.pop()
        return self.state

    def play(self, a: StdCard, b: StdCard) -> State:
        return self.apply(Play((a, b)))


def conserved(s: State, expected: Optional[Counter] = None) -> bool:
    """Every card of the variant is exactly once in a pile, hand, score pile or the pot."""
    have = s.cards()
    exp = expected if expected is not None else all_cards(s.variant)
    unknown = have.pop(None, 0)
    return not (have - exp) and sum(have.values()) + unknown == sum(exp.values())


def play_out(s: State, choose, shuffle) -> Iterable[State]:
    """Play a game to its end: ``choose(state, p) -> card`` picks each reveal, ``shuffle(cards) -> order``
    each reshuffle. Yields every state (for tests and the demo)."""
    while not s.over:
        if s.phase == RESHUFFLE:
            p = needs_reshuffle(s)[0]
            s = apply(s, Reshuffle(p, tuple(shuffle(list(s.scores[p])))))
        else:
            s = apply(s, Play((choose(s, 0), choose(s, 1))))
        yield s
