"""Exact odds that a Pirate's Bluff bid holds.

Given the face-up starting cards (one per player, in seat order), optionally one player's own full hand, and a
bid (quantity, rank), compute the distribution of the number of cards of that rank *in play* (naturals, plus
wilds in hands that hold a natural of the rank; under Super Wilds each wild counts as many as its hand's
naturals) under a uniformly random deal of the unseen cards, and from it P(count >= quantity).

Method (exact, integer arithmetic): the unseen hands are dealt one after another from the pool of unseen cards.
Only four numbers matter along the way: naturals of the bid rank left in the pool, wilds left, other cards left
(implied by the pool size) and the running count. A hand with ``m`` unseen slots that draws ``a`` naturals and
``b`` wilds out of a pool holding ``n`` naturals, ``w`` wilds and ``o`` others does so in
``C(n,a) C(w,b) C(o,m-a-b)`` ways (the hypergeometric numerators). The DP keeps, for each (n, w), the number
of ways to reach every running count, packed into one Python integer (a polynomial in the count evaluated at
2**B, B wide enough that no coefficient overflows its slot), so a transition is one multiply, one shift and
one add whatever the spread of counts. The result is the exact number of deals giving each count, over the
exact number of deals; probabilities are exact fractions and floats correctly rounded from them.

A Monte Carlo estimator (numpy, vectorised) deals real random hands as a check.

Modelling assumption (as the issue states): the unseen cards are a uniformly random deal. At the table a
starting card is *chosen* by its player, so real hands may differ from that; the Cyclone pass too.

Pure library: imports nothing from kivy, cv2, serial or torch (numpy only inside :func:`monte_carlo`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from math import comb
from typing import Iterable

from companion.decks.pirates72 import LETTERS, WILD, PBCard, rank_name
from companion.errors import PirateTableError
from companion.games.pirates_bluff.rules import MAX_PLAYERS, MIN_PLAYERS, hand_count
from companion.games.pirates_bluff.rules import hand_size as rules_hand_size

__all__ = [
    "Deck",
    "STANDARD_DECK",
    "OddsResult",
    "MonteCarloResult",
    "bid_odds",
    "count_distribution",
    "rank_table",
    "monte_carlo",
    "parse_bid",
    "parse_card_list",
]


# --------------------------------------------------------------------------------------------- the deck


@dataclass(frozen=True)
class Deck:
    """A Pirate's Bluff-like deck: natural ranks 1..ranks with ``copies`` each, plus ``wilds`` wilds (rank 0).

    The real deck is ``Deck(8, 8, 8)``. Smaller decks (fewer ranks, fewer copies) exist for brute-force checks;
    their cards are the real cards with the earliest letters (copies=3: letters A-C).
    """

    ranks: int = 8
    copies: int = 8
    wilds: int = 8

    def __post_init__(self) -> None:
        for name, v, lo, hi in (("ranks", self.ranks, 1, 8), ("copies", self.copies, 1, 8), ("wilds", self.wilds, 0, 8)):
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise PirateTableError(f"deck {name} must be {lo}-{hi}, got {v!r}")

    @property
    def size(self) -> int:
        return self.ranks * self.copies + self.wilds

    def __contains__(self, card: object) -> bool:
        if not isinstance(card, PBCard):
            return False
        i = LETTERS.index(card.letter)
        if card.rank == WILD:
            return i < self.wilds
        return card.rank <= self.ranks and i < self.copies

    def cards(self) -> tuple[PBCard, ...]:
        wild = tuple(PBCard(WILD, LETTERS[i]) for i in range(self.wilds))
        nat = tuple(PBCard(r, LETTERS[i]) for r in range(1, self.ranks + 1) for i in range(self.copies))
        return wild + nat


STANDARD_DECK = Deck()


# --------------------------------------------------------------------------------------------- input


_BID_RE = re.compile(r"^\s*([0-9]{1,9})\s*[xX×]\s*([0-9]{1,9})\s*$")  # ASCII digits only


def parse_bid(bid: object) -> tuple[int, int]:
    """``"7x7"`` (seven Sevens) or a (quantity, rank) pair -> (quantity, rank). Ranges are checked later."""
    if isinstance(bid, str):
        m = _BID_RE.match(bid)
        if not m:
            raise PirateTableError(f"a bid is QUANTITYxRANK like 7x7 (seven Sevens), got {bid!r}")
        return int(m.group(1)), int(m.group(2))
    if isinstance(bid, (tuple, list)) and len(bid) == 2 and all(isinstance(v, int) and not isinstance(v, bool) for v in bid):
        return int(bid[0]), int(bid[1])
    raise PirateTableError(f"a bid is QUANTITYxRANK like 7x7 or a (quantity, rank) pair, got {bid!r}")


def parse_card_list(cards: object, what: str) -> list[PBCard]:
    """A comma/space separated string or an iterable of cards (PBCard or text) -> list of PBCard."""
    if isinstance(cards, str):
        items: Iterable[object] = [t for t in re.split(r"[,\s]+", cards) if t]
    else:
        try:
            items = list(cards)  # type: ignore[arg-type]
        except TypeError:
            raise PirateTableError(f"{what}: expected a list of cards like 2C,7E, got {cards!r}") from None
    out = []
    for item in items:
        if isinstance(item, PBCard):
            out.append(item)
        elif isinstance(item, str):
            try:
                out.append(PBCard.parse(item))
            except PirateTableError as exc:
                raise PirateTableError(f"{what}: {exc}") from None
        else:
            raise PirateTableError(f"{what}: a card is text like '7C', got {item!r}")
    return out


@dataclass(frozen=True)
class _Problem:
    """A validated query, reduced to what the count depends on."""

    players: int
    hand_size: int
    rank: int
    super_wilds: bool
    seat: int | None  # the seat (0-based) whose full hand is known, if any
    pool_naturals: int
    pool_wilds: int
    pool_others: int
    hands: tuple[tuple[int, int, int], ...]  # unseen hands: (unseen slots, starting naturals 0/1, starting wilds 0/1)
    known_count: int  # what the fully known hand counts for (0 without one)


def _prepare(
    starting: object,
    rank: int,
    *,
    hand: object = None,
    seat: int | None = None,
    super_wilds: bool = False,
    hand_size: int | None = None,
    deck: Deck = STANDARD_DECK,
    players: int | None = None,
) -> _Problem:
    if not isinstance(deck, Deck):
        raise PirateTableError(f"deck must be a Deck, got {deck!r}")
    if not isinstance(super_wilds, bool):
        raise PirateTableError(f"super_wilds must be true or false, got {super_wilds!r}")
    start = parse_card_list(starting, "starting cards")
    if players is None:
        players = len(start)
    if not isinstance(players, int) or isinstance(players, bool) or players < 1:
        raise PirateTableError(f"players must be a positive whole number, got {players!r}")
    if hand_size is None:
        if not MIN_PLAYERS <= players <= MAX_PLAYERS:
            raise PirateTableError(f"Pirate's Bluff is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {players}")
        hand_size = rules_hand_size(players)
    elif not isinstance(hand_size, int) or isinstance(hand_size, bool) or hand_size < 1:
        raise PirateTableError(f"hand size must be a positive whole number, got {hand_size!r}")
    if len(start) != players:
        raise PirateTableError(f"expected {players} starting cards (one per player, in seat order), got {len(start)}")
    if players * hand_size > deck.size:
        raise PirateTableError(f"{players} hands of {hand_size} need {players * hand_size} cards; the deck has {deck.size}")
    seen: set[PBCard] = set()
    for c in start:
        if c not in deck:
            raise PirateTableError(f"starting card {c} is not in the deck")
        if c in seen:
            raise PirateTableError(f"starting card {c} appears twice")
        seen.add(c)
    if not isinstance(rank, int) or isinstance(rank, bool) or not 1 <= rank <= deck.ranks:
        raise PirateTableError(f"a bid names a rank 1-{deck.ranks} (wilds are not a rank to bid), got {rank!r}")

    known: list[PBCard] | None = None
    if hand is not None:
        known = parse_card_list(hand, "hand")
        if len(known) != hand_size:
            raise PirateTableError(f"a hand holds {hand_size} cards with {players} players, got {len(known)}")
        in_hand: set[PBCard] = set()
        for c in known:
            if c not in deck:
                raise PirateTableError(f"hand card {c} is not in the deck")
            if c in in_hand:
                raise PirateTableError(f"hand card {c} appears twice")
            in_hand.add(c)
        holds = [i for i, c in enumerate(start) if c in in_hand]
        if seat is not None:
            if not isinstance(seat, int) or isinstance(seat, bool) or not 0 <= seat < players:
                raise PirateTableError(f"seat must be 1-{players}, got {seat + 1 if isinstance(seat, int) else seat!r}")
            if seat not in holds:
                raise PirateTableError(f"the hand does not hold seat {seat + 1}'s starting card {start[seat]}")
        if len(holds) == 0:
            raise PirateTableError("the hand holds none of the starting cards (a player's starting card is part of their hand)")
        if len(holds) > 1:
            which = ", ".join(f"{start[i]} (seat {i + 1})" for i in holds)
            raise PirateTableError(f"the hand holds more than one player's starting card: {which}")
        seat = holds[0]
    elif seat is not None:
        raise PirateTableError("a seat is given without that player's hand")

    visible = set(start) | (set(known) if known else set())
    pool_n = sum(1 for c in deck.cards() if c.rank == rank and c not in visible)
    pool_w = sum(1 for c in deck.cards() if c.rank == WILD and c not in visible)
    pool_size = deck.size - len(visible)
    hands = tuple(
        (hand_size - 1, int(c.rank == rank), int(c.rank == WILD)) for i, c in enumerate(start) if i != seat
    )
    known_count = 0
    if known:
        known_count = hand_count(
            sum(c.rank == rank for c in known), sum(c.rank == WILD for c in known), super_wilds
        )
    return _Problem(
        players=players,
        hand_size=hand_size,
        rank=rank,
        super_wilds=super_wilds,
        seat=seat,
        pool_naturals=pool_n,
        pool_wilds=pool_w,
        pool_others=pool_size - pool_n - pool_w,
        hands=hands,
        known_count=known_count,
    )


# --------------------------------------------------------------------------------------------- exact DP


def _count_ways(p: _Problem) -> tuple[list[int], int]:
    """Number of deals of the unseen cards giving each count (index = count), and the number of deals."""
    n0, w0, o0 = p.pool_naturals, p.pool_wilds, p.pool_others
    total = 1
    left = n0 + w0 + o0
    for m, _, _ in p.hands:
        total *= comb(left, m)
        left -= m
    # Every coefficient of every packed polynomial is at most `total`, so B bits per count never overflow.
    B = total.bit_length() + 1
    states: dict[tuple[int, int], int] = {(n0, w0): 1 << (B * p.known_count)}
    left = n0 + w0 + o0
    last = len(p.hands) - 1
    sw = p.super_wilds
    inc_cache: dict[tuple[int, int, int], int] = {}
    for h, (m, k0, j0) in enumerate(p.hands):
        new: dict[tuple[int, int], int] = {}
        acc = 0
        for (n, w), poly in states.items():
            o = left - n - w
            for a in range(min(n, m) + 1):
                ca = comb(n, a)
                for b in range(min(w, m - a) + 1):
                    r = m - a - b
                    if r > o:
                        continue
                    weight = ca * comb(w, b) * comb(o, r)
                    key = (k0 + a, j0 + b, sw)
                    inc = inc_cache.get(key)
                    if inc is None:
                        inc = inc_cache[key] = B * hand_count(k0 + a, j0 + b, sw)
                    term = (poly * weight) << inc
                    if h == last:
                        acc += term
                    else:
                        k = (n - a, w - b)
                        new[k] = new.get(k, 0) + term
        left -= m
        if h == last:
            states = {(0, 0): acc}
        else:
            states = new
    poly = sum(states.values())
    mask = (1 << B) - 1
    ways = []
    while poly:
        ways.append(poly & mask)
        poly >>= B
    assert sum(ways) == total, "DP lost deals"  # an invariant of the method, not input checking
    return ways, total


# --------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class OddsResult:
    """The exact distribution of the count of ``rank`` in play, and the chance that ``quantity`` holds.

    ``ways[c]`` is the number of deals of the unseen cards in which the count is exactly ``c``; ``total`` is the
    number of deals. ``distribution[c]`` = ways[c] / total as a float (correctly rounded), and
    ``distribution_exact[c]`` as a Fraction.
    """

    players: int
    hand_size: int
    quantity: int
    rank: int
    super_wilds: bool
    seat: int | None
    ways: tuple[int, ...]
    total: int
    _tail: tuple[int, ...] = field(repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        tail = [0] * (len(self.ways) + 1)
        for c in range(len(self.ways) - 1, -1, -1):
            tail[c] = tail[c + 1] + self.ways[c]
        object.__setattr__(self, "_tail", tuple(tail))

    @property
    def distribution(self) -> tuple[float, ...]:
        return tuple(w / self.total for w in self.ways)

    @property
    def distribution_exact(self) -> tuple[Fraction, ...]:
        return tuple(Fraction(w, self.total) for w in self.ways)

    def at_least_exact(self, quantity: int) -> Fraction:
        q = max(0, quantity)
        return Fraction(self._tail[q] if q < len(self._tail) else 0, self.total)

    def at_least(self, quantity: int) -> float:
        q = max(0, quantity)
        return (self._tail[q] if q < len(self._tail) else 0) / self.total

    @property
    def probability(self) -> float:
        """P(count >= quantity): the chance that the bid holds."""
        return self.at_least(self.quantity)

    @property
    def probability_exact(self) -> Fraction:
        return self.at_least_exact(self.quantity)

    @property
    def mean(self) -> float:
        return sum(c * w for c, w in enumerate(self.ways)) / self.total

    @property
    def max_count(self) -> int:
        return len(self.ways) - 1

    def as_dict(self) -> dict:
        return {
            "players": self.players,
            "hand_size": self.hand_size,
            "bid": {"quantity": self.quantity, "rank": self.rank},
            "super_wilds": self.super_wilds,
            "seat": None if self.seat is None else self.seat + 1,
            "probability": self.probability,
            "probability_exact": str(self.probability_exact),
            "mean": self.mean,
            "deals": str(self.total),  # exact integers can exceed 2**53: strings, not JSON numbers
            "distribution": [
                {"count": c, "p": w / self.total, "p_at_least": self.at_least(c), "ways": str(w)}
                for c, w in enumerate(self.ways)
            ],
        }


def count_distribution(
    starting: object,
    rank: int,
    *,
    hand: object = None,
    seat: int | None = None,
    super_wilds: bool = False,
    hand_size: int | None = None,
    deck: Deck = STANDARD_DECK,
    players: int | None = None,
    quantity: int = 1,
) -> OddsResult:
    """Exact distribution of the count of ``rank`` in play (``seat`` is 0-based). See :func:`bid_odds`."""
    p = _prepare(starting, rank, hand=hand, seat=seat, super_wilds=super_wilds, hand_size=hand_size, deck=deck, players=players)
    ways, total = _count_ways(p)
    return OddsResult(
        players=p.players,
        hand_size=p.hand_size,
        quantity=quantity,
        rank=rank,
        super_wilds=super_wilds,
        seat=p.seat,
        ways=tuple(ways),
        total=total,
    )


def bid_odds(
    players: int,
    starting: object,
    bid: object,
    hand: object = None,
    super_wilds: bool = False,
    *,
    seat: int | None = None,
    hand_size: int | None = None,
    deck: Deck = STANDARD_DECK,
) -> OddsResult:
    """The exact chance that ``bid`` holds, and the whole distribution of the count.

    players: 3-8 (sets the hand size: 7, or 6 with 7 players, 5 with 8) unless ``hand_size`` is given.
    starting: the face-up starting cards, one per player in seat order ("2C,2D,3A" or a list of cards).
    bid: "7x7" or (quantity, rank); rank 1-8.
    hand: optionally one player's full hand (including their starting card); the player is the one whose
    starting card it holds, or ``seat`` (0-based) which must agree.
    super_wilds: each wild counts as many as its hand's naturals.

    Raises PirateTableError (one line) on bad input: unknown or duplicate cards, the wrong number of starting
    cards or hand cards, a hand holding no or several starting cards, a bad bid.
    """
    quantity, rank = parse_bid(bid)
    if quantity < 1:
        raise PirateTableError(f"a bid's quantity is at least 1, got {quantity}")
    return count_distribution(
        starting, rank, hand=hand, seat=seat, super_wilds=super_wilds, hand_size=hand_size, deck=deck,
        players=players, quantity=quantity,
    )


def rank_table(
    players: int,
    starting: object,
    hand: object = None,
    super_wilds: bool = False,
    *,
    seat: int | None = None,
) -> dict[int, OddsResult]:
    """The count distribution of every rank 1-8 (for a coach view: any bid's chance is ``table[r].at_least(q)``)."""
    return {
        r: bid_odds(players, starting, (1, r), hand=hand, super_wilds=super_wilds, seat=seat) for r in range(1, 9)
    }


# --------------------------------------------------------------------------------------------- Monte Carlo


@dataclass(frozen=True)
class MonteCarloResult:
    """Counts of simulated deals by count of the rank in play."""

    quantity: int
    histogram: tuple[int, ...]
    samples: int

    def at_least(self, quantity: int) -> float:
        q = max(0, quantity)
        return sum(self.histogram[q:]) / self.samples

    def stderr(self, quantity: int) -> float:
        p = self.at_least(quantity)
        return (p * (1 - p) / self.samples) ** 0.5

    @property
    def probability(self) -> float:
        return self.at_least(self.quantity)

    @property
    def distribution(self) -> tuple[float, ...]:
        return tuple(h / self.samples for h in self.histogram)


def _mc_counts(p: _Problem, samples: int, rng) -> "object":
    """Counts for ``samples`` random deals of the unseen cards (numpy int array)."""
    import numpy as np

    pool = np.array([1] * p.pool_naturals + [2] * p.pool_wilds + [0] * p.pool_others, dtype=np.int8)
    out = np.full(samples, p.known_count, dtype=np.int64)
    if not p.hands or p.hands[0][0] == 0:
        for _, k0, j0 in p.hands:
            out += hand_count(k0, j0, p.super_wilds)
        return out
    m = p.hands[0][0]
    dealt = m * len(p.hands)
    k0 = np.array([h[1] for h in p.hands], dtype=np.int64)
    j0 = np.array([h[2] for h in p.hands], dtype=np.int64)
    chunk = max(1, min(samples, 1 << 16))
    for start in range(0, samples, chunk):
        size = min(chunk, samples - start)
        # A uniformly random deal: the first `dealt` cards of a random permutation of the pool, hand by hand.
        # (argsort of i.i.d. uniform keys is a uniform permutation; argpartition alone would not order the
        # dealt cards randomly between hands.)
        idx = np.argsort(rng.random((size, pool.size)), axis=1)[:, :dealt]
        cards = pool[idx].reshape(size, len(p.hands), m)
        k = (cards == 1).sum(axis=2) + k0
        j = (cards == 2).sum(axis=2) + j0
        if p.super_wilds:
            c = k * (1 + j)
        else:
            c = np.where(k > 0, k + j, 0)
        out[start:start + size] += c.sum(axis=1)
    return out


def monte_carlo(
    players: int,
    starting: object,
    bid: object,
    hand: object = None,
    super_wilds: bool = False,
    *,
    samples: int = 200_000,
    seed: int | None = None,
    seat: int | None = None,
    hand_size: int | None = None,
    deck: Deck = STANDARD_DECK,
) -> MonteCarloResult:
    """Estimate the same quantities as :func:`bid_odds` by dealing ``samples`` random deals (numpy)."""
    import numpy as np

    quantity, rank = parse_bid(bid)
    if quantity < 1:
        raise PirateTableError(f"a bid's quantity is at least 1, got {quantity}")
    if not isinstance(samples, int) or samples < 1:
        raise PirateTableError(f"samples must be a positive whole number, got {samples!r}")
    p = _prepare(starting, rank, hand=hand, seat=seat, super_wilds=super_wilds, hand_size=hand_size, deck=deck, players=players)
    counts = _mc_counts(p, samples, np.random.default_rng(seed))
    hist = np.bincount(counts)
    return MonteCarloResult(quantity=quantity, histogram=tuple(int(v) for v in hist), samples=samples)


def describe_bid(quantity: int, rank: int) -> str:
    return f"{quantity} {rank_name(rank, plural=quantity != 1)}"
