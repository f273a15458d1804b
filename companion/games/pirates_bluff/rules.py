"""The Pirate's Bluff referee: a pure, deterministic state machine.

Modelled like python-chess / OpenSpiel: small immutable actions, one ``PiratesBluffHand`` with ``apply`` /
``undo`` (push/pop of immutable snapshots, so undo is exact), ``why_illegal`` / ``legal_bids``, and an
``Outcome``. Time comes in with the events (``t_ms``), never from a clock.

Phases of a hand::

    starting  --RevealStarting-->  bidding  --Call-->  called  --Showdown-->  over
                                      |                  ^ (more calls inside the window join)
                                      +--Countdown(dead)------------------------------> over

Money: antes are posted when the hand is created; the outcome adds balanced entries (postings sum to zero)
over the accounts ``<player>`` and ``"pot"``. See docs/pirates-bluff.md for every choice the rulebook leaves
open (window, ties, rounding, negative stacks).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Iterable, Mapping

from companion.decks.pirates72 import LETTERS, NATURAL_RANKS, WILD, PBCard, rank_name
from companion.errors import PirateTableError
from companion.games.base import DEFAULT_STACK, POT, Entry, Referee

MIN_PLAYERS = 3
MAX_PLAYERS = 8
COPIES_PER_RANK = len(LETTERS)  # 8 naturals of each rank, and 8 wilds


def hand_size(n_players: int) -> int:
    """Seven cards, six with seven players, five with eight."""
    if not MIN_PLAYERS <= n_players <= MAX_PLAYERS:
        raise PirateTableError(f"Pirate's Bluff is for 3-8 players, got {n_players}")
    return {7: 6, 8: 5}.get(n_players, 7)


def bid_name(quantity: int, rank: int) -> str:
    return f"{quantity} {rank_name(rank, plural=quantity != 1)}"


def hand_count(naturals: int, wilds: int, super_wilds: bool) -> int:
    """How many of the called rank one hand counts for.

    A wild counts only in a hand holding at least one natural of the rank; under Super Wilds each wild counts
    as many as that hand's naturals (W-W-7-7-7 counts 3 + 2*3 = 9).
    """
    if naturals <= 0:
        return 0
    return naturals + wilds * (naturals if super_wilds else 1)


@lru_cache(maxsize=None)
def theoretical_max(n_players: int, super_wilds: bool = False) -> int:
    """The highest count of one rank that any deal can put in play (16 normally; more under Super Wilds).

    Exact: a small DP over hands choosing (naturals, wilds) per hand within the hand size and the 8 + 8 cards.
    """
    h = hand_size(n_players)
    neg = -1
    best = [[neg] * (COPIES_PER_RANK + 1) for _ in range(COPIES_PER_RANK + 1)]
    best[0][0] = 0
    for _ in range(n_players):
        nxt = [row[:] for row in best]
        for n_used in range(COPIES_PER_RANK + 1):
            for w_used in range(COPIES_PER_RANK + 1):
                if best[n_used][w_used] < 0:
                    continue
                for n in range(0, min(h, COPIES_PER_RANK - n_used) + 1):
                    for w in range(0, min(h - n, COPIES_PER_RANK - w_used) + 1):
                        v = best[n_used][w_used] + hand_count(n, w, super_wilds)
                        if v > nxt[n_used + n][w_used + w]:
                            nxt[n_used + n][w_used + w] = v
        best = nxt
    return max(max(row) for row in best)


# --------------------------------------------------------------------------------------------- options


@dataclass(frozen=True)
class Options:
    """Variants and table settings, all parameters of one referee.

    window_ms: calls (and identical bids) within this many ms of the first are simultaneous (default 10 ms).
    cyclone: None, "left" or "right": after the deal each player passes two cards that way (recorded and
    announced; the referee cannot see the pass).
    """

    super_wilds: bool = False
    window_ms: float = 10.0
    ante: int = 1
    cyclone: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.super_wilds, bool):
            raise PirateTableError(f"super_wilds must be true or false, got {self.super_wilds!r}")
        if isinstance(self.window_ms, bool) or not isinstance(self.window_ms, (int, float)) or self.window_ms < 0:
            raise PirateTableError(f"window_ms must be a number >= 0, got {self.window_ms!r}")
        if isinstance(self.ante, bool) or not isinstance(self.ante, int) or self.ante < 0:
            raise PirateTableError(f"ante must be a whole number of coins >= 0, got {self.ante!r}")
        if self.cyclone not in (None, "left", "right"):
            raise PirateTableError(f"cyclone must be null, 'left' or 'right', got {self.cyclone!r}")

    def announcements(self) -> list[str]:
        out = []
        if self.cyclone:
            out.append(f"Cyclone: right after the deal, each player passes two cards to the player on their "
                       f"{self.cyclone}.")
        if self.super_wilds:
            out.append("Super Wilds: each wild counts as many of the called rank as the naturals in its hand.")
        return out


# --------------------------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class RevealStarting:
    """The face-up starting cards, one per player (a chance node: the deal)."""

    cards: tuple[tuple[str, PBCard], ...]

    @classmethod
    def of(cls, cards: Mapping[str, PBCard]) -> "RevealStarting":
        return cls(tuple(cards.items()))


@dataclass(frozen=True)
class Bid:
    player: str
    quantity: int
    rank: int
    t_ms: float = 0.0

    def __str__(self) -> str:
        return f"{self.player} bids {bid_name(self.quantity, self.rank)}"


@dataclass(frozen=True)
class Call:
    player: str
    t_ms: float = 0.0

    def __str__(self) -> str:
        return f"{self.player} calls"


@dataclass(frozen=True)
class Countdown:
    """The bidder's "going, going, going, dead, dead, dead".

    complete=False: the countdown begins (first "going"); complete=True: the last "dead" was said with no
    reply, and the bidder wins. Any legal bid or call in between cancels a begun countdown.
    """

    player: str
    t_ms: float = 0.0
    complete: bool = True

    def __str__(self) -> str:
        return f"{self.player} {'completes' if self.complete else 'begins'} the countdown"


@dataclass(frozen=True)
class Showdown:
    """Hands shown. Either full hands (starting card first) or, for the called rank, each player's
    (naturals, wilds) as counted by hand at the table."""

    hands: tuple[tuple[str, tuple[PBCard, ...]], ...] | None = None
    counts: tuple[tuple[str, int, int], ...] | None = None

    @classmethod
    def of_hands(cls, hands: Mapping[str, Iterable[PBCard]]) -> "Showdown":
        return cls(hands=tuple((p, tuple(cs)) for p, cs in hands.items()))

    @classmethod
    def of_counts(cls, counts: Mapping[str, tuple[int, int]]) -> "Showdown":
        return cls(counts=tuple((p, n, w) for p, (n, w) in counts.items()))


Action = RevealStarting | Bid | Call | Countdown | Showdown


# --------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Outcome:
    end: str  # "showdown" or "countdown"
    quantity: int
    rank: int
    bidders: tuple[str, ...]
    callers: tuple[str, ...]
    winners: tuple[str, ...]
    losers: tuple[str, ...]
    count: int | None  # None after a countdown (no showdown)
    counts: tuple[tuple[str, int], ...]
    bid_holds: bool | None
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class _State:
    phase: str  # starting | bidding | called | over
    starting: tuple[tuple[str, PBCard], ...] = ()
    first_bidder: str | None = None
    quantity: int | None = None
    rank: int | None = None
    bidders: tuple[str, ...] = ()
    bid_t: float | None = None
    callers: tuple[str, ...] = ()
    call_t: float | None = None
    countdown_by: str | None = None
    last_t: float | None = None
    flags: tuple[str, ...] = ()
    outcome: Outcome | None = None


# --------------------------------------------------------------------------------------------- the hand


class PiratesBluffHand(Referee[Action, _State]):
    """One hand of Pirate's Bluff, from antes to settlement."""

    def __init__(
        self,
        players: Iterable[str],
        stacks: Mapping[str, int] | None = None,
        pot_carry: int = 0,
        options: Options | None = None,
    ) -> None:
        self.players: tuple[str, ...] = tuple(players)
        if len(set(self.players)) != len(self.players):
            raise PirateTableError(f"players must be distinct: {list(self.players)}")
        for p in self.players:
            if not isinstance(p, str) or not p.strip() or p == POT:
                raise PirateTableError(f"bad player name {p!r}")
        self.hand_size = hand_size(len(self.players))
        self.options = options or Options()
        stacks = dict(stacks) if stacks is not None else {p: DEFAULT_STACK for p in self.players}
        if set(stacks) != set(self.players):
            raise PirateTableError(f"stacks must name exactly the players {list(self.players)}")
        for p, v in stacks.items():
            if isinstance(v, bool) or not isinstance(v, int):
                raise PirateTableError(f"stack of {p} must be a whole number of coins, got {v!r}")
        if isinstance(pot_carry, bool) or not isinstance(pot_carry, int) or pot_carry < 0:
            raise PirateTableError(f"pot_carry must be a whole number >= 0, got {pot_carry!r}")
        self.stacks_before: dict[str, int] = {p: stacks[p] for p in self.players}
        self.pot_carry_before = pot_carry
        ante = self.options.ante
        self.ante_entry = Entry(
            "ante",
            tuple((p, -ante) for p in self.players) + ((POT, ante * len(self.players)),),
            f"ante {ante} each",
        )
        self.max_quantity = theoretical_max(len(self.players), self.options.super_wilds)
        super().__init__()
        self._state = _State("starting")

    # ---------------------------------------------------------------- reading state
    @property
    def phase(self) -> str:
        return self._state.phase

    @property
    def first_bidder(self) -> str | None:
        return self._state.first_bidder

    @property
    def starting_cards(self) -> dict[str, PBCard]:
        return dict(self._state.starting)

    @property
    def standing_bid(self) -> tuple[int, int] | None:
        s = self._state
        return None if s.quantity is None else (s.quantity, s.rank)

    @property
    def bidders(self) -> tuple[str, ...]:
        return self._state.bidders

    @property
    def callers(self) -> tuple[str, ...]:
        return self._state.callers

    @property
    def countdown_by(self) -> str | None:
        return self._state.countdown_by

    @property
    def flags(self) -> tuple[str, ...]:
        return self._state.flags

    @property
    def outcome(self) -> Outcome | None:
        return self._state.outcome

    @property
    def pot(self) -> int:
        """Coins in the pot now (carry + antes until settlement; what is left for the next hand after)."""
        return self.pot_carry_before + sum(v for e in self.entries for a, v in e.postings if a == POT)

    @property
    def entries(self) -> list[Entry]:
        out = [self.ante_entry]
        if self._state.outcome:
            out.extend(self._state.outcome.entries)
        return out

    @property
    def stacks(self) -> dict[str, int]:
        st = dict(self.stacks_before)
        for e in self.entries:
            for a, v in e.postings:
                if a != POT:
                    st[a] += v
        return st

    # ---------------------------------------------------------------- legality
    def why_illegal(self, action: Action) -> str | None:
        """None if the action is legal now, else the reason in one sentence."""
        s = self._state
        if s.phase == "over":
            return "the hand is over"
        if isinstance(action, RevealStarting):
            return self._why_reveal(action)
        if isinstance(action, Showdown):
            return self._why_showdown(action)
        if not isinstance(action, (Bid, Call, Countdown)):
            return f"unknown action {action!r}"
        if action.player not in self.players:
            return f"{action.player!r} is not at this table"
        if s.phase == "starting":
            return "the starting cards are not revealed yet"
        if isinstance(action.t_ms, bool) or not isinstance(action.t_ms, (int, float)):
            return f"t_ms must be a number, got {action.t_ms!r}"
        if s.last_t is not None and action.t_ms < s.last_t:
            return f"out of time order: t_ms {action.t_ms} is before the previous event at {s.last_t}"
        if isinstance(action, Bid):
            return self._why_bid(action)
        if isinstance(action, Call):
            return self._why_call(action)
        return self._why_countdown(action)

    def _why_reveal(self, a: RevealStarting) -> str | None:
        if self._state.phase != "starting":
            return "the starting cards are already revealed"
        players = [p for p, _ in a.cards]
        if sorted(players) != sorted(self.players) or len(players) != len(self.players):
            return f"need exactly one starting card for each of {list(self.players)}"
        cards = [c for _, c in a.cards]
        if not all(isinstance(c, PBCard) for c in cards):
            return "starting cards must be PBCard values"
        if len(set(cards)) != len(cards):
            dup = next(str(c) for c in cards if cards.count(c) > 1)
            return f"card {dup} is dealt twice"
        return None

    def _is_simultaneous_bid(self, a: Bid) -> bool:
        s = self._state
        return (
            s.quantity == a.quantity
            and s.rank == a.rank
            and a.player not in s.bidders
            and s.bid_t is not None
            and a.t_ms - s.bid_t <= self.options.window_ms
        )

    def _why_bid(self, a: Bid) -> str | None:
        s = self._state
        if s.phase == "called":
            return f"the bid was already called by {', '.join(s.callers)} at {s.call_t} ms"
        for name, v in (("quantity", a.quantity), ("rank", a.rank)):
            if isinstance(v, bool) or not isinstance(v, int):
                return f"bid {name} must be a whole number, got {v!r}"
        if a.quantity < 1:
            return f"bid quantity must be at least 1, got {a.quantity}"
        if a.rank not in NATURAL_RANKS:
            return f"bid rank must be 1-8 (wilds are not a rank to bid), got {a.rank}"
        if s.quantity is None:
            if a.player != s.first_bidder:
                return f"the opening bid belongs to {s.first_bidder}"
            return None
        if self._is_simultaneous_bid(a):
            return None
        if len(s.bidders) == 1 and a.player in s.bidders:
            return f"{a.player} made the last bid and cannot act twice in a row"
        if a.quantity > s.quantity or (a.quantity == s.quantity and a.rank > s.rank):
            return None
        return (f"{bid_name(a.quantity, a.rank)} does not beat {bid_name(s.quantity, s.rank)}: raise the "
                f"quantity, or keep it and raise the rank")

    def _why_call(self, a: Call) -> str | None:
        s = self._state
        if s.quantity is None:
            return "there is no bid to call yet"
        if a.player in s.bidders:
            return f"{a.player} cannot call their own bid"
        if s.phase == "called":
            if a.player in s.callers:
                return f"{a.player} has already called"
            if a.t_ms - s.call_t > self.options.window_ms:
                return (f"the bid was already called by {', '.join(s.callers)} at {s.call_t} ms "
                        f"(outside the {self.options.window_ms:g} ms window)")
        return None

    def _why_countdown(self, a: Countdown) -> str | None:
        s = self._state
        if s.phase == "called":
            return f"the bid was already called by {', '.join(s.callers)} at {s.call_t} ms"
        if s.quantity is None:
            return "there is no bid to count down"
        if a.player not in s.bidders:
            return f"only the bidder ({', '.join(s.bidders)}) can count down"
        if not a.complete and s.countdown_by is not None:
            return f"{s.countdown_by} is already counting down"
        return None

    def _why_showdown(self, a: Showdown) -> str | None:
        s = self._state
        if s.phase != "called":
            return "a showdown needs a called bid"
        if (a.hands is None) == (a.counts is None):
            return "a showdown gives either the hands or the counts"
        if a.hands is not None:
            hands = dict(a.hands)
            if len(hands) != len(a.hands) or set(hands) != set(self.players):
                return f"the showdown needs exactly one hand for each of {list(self.players)}"
            seen: set[PBCard] = set()
            start = dict(s.starting)
            for p in self.players:
                cards = hands[p]
                if len(cards) != self.hand_size:
                    return f"{p}'s hand has {len(cards)} cards; hands are {self.hand_size} cards"
                if cards[0] != start[p]:
                    return f"{p}'s hand must begin with the starting card {start[p]}, not {cards[0]}"
                for c in cards:
                    if c in seen:
                        return f"card {c} is in two places"
                    seen.add(c)
            return None
        counts = {p: (n, w) for p, n, w in a.counts}
        if len(counts) != len(a.counts) or set(counts) != set(self.players):
            return f"the showdown needs counts for each of {list(self.players)}"
        tot_n = tot_w = 0
        for p, (n, w) in counts.items():
            if any(isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in (n, w)):
                return f"{p}'s counts must be whole numbers >= 0"
            if n + w > self.hand_size:
                return f"{p} cannot hold {n} naturals and {w} wilds in a {self.hand_size}-card hand"
            tot_n += n
            tot_w += w
        if tot_n > COPIES_PER_RANK or tot_w > COPIES_PER_RANK:
            return f"the deck has only {COPIES_PER_RANK} naturals of a rank and {COPIES_PER_RANK} wilds"
        return None

    def legal_bids(self, player: str, up_to: int | None = None) -> list[tuple[int, int]]:
        """Every legal bid (quantity, rank) for player now, up to quantity ``up_to`` (default: the
        theoretical maximum). Simultaneous identical bids are not offered: they happen, not get chosen."""
        s = self._state
        top = self.max_quantity if up_to is None else up_to
        if s.phase != "bidding":
            return []
        out = []
        for q in range(1, top + 1):
            for r in NATURAL_RANKS:
                a = Bid(player, q, r, s.last_t or 0.0)
                if self.is_legal(a) and not self._is_simultaneous_bid(a):
                    out.append((q, r))
        return out

    def can_call(self, player: str, t_ms: float | None = None) -> bool:
        t = self._state.last_t or 0.0 if t_ms is None else t_ms
        return self.is_legal(Call(player, t))

    # ---------------------------------------------------------------- transitions
    def _next(self, a: Action) -> _State:
        s = self._state
        if isinstance(a, RevealStarting):
            first = min(a.cards, key=lambda pc: pc[1])[0]
            return replace(s, phase="bidding", starting=a.cards, first_bidder=first)
        if isinstance(a, Showdown):
            return replace(s, phase="over", outcome=self._showdown(a))
        t = a.t_ms
        if isinstance(a, Bid):
            flags = s.flags
            if a.quantity > self.max_quantity:
                flags += (f"{a.player}'s bid of {bid_name(a.quantity, a.rank)} is above the theoretical "
                          f"maximum of {self.max_quantity}",)
            if s.countdown_by is not None:
                flags += (f"{a.player}'s bid cancelled {s.countdown_by}'s countdown",)
            if s.quantity is not None and self._is_simultaneous_bid(a):
                flags += (f"{a.player} made the same bid as {', '.join(s.bidders)} within "
                          f"{self.options.window_ms:g} ms: a tie, shared by both",)
                return replace(s, bidders=s.bidders + (a.player,), last_t=t, countdown_by=None, flags=flags)
            return replace(s, quantity=a.quantity, rank=a.rank, bidders=(a.player,), bid_t=t,
                           countdown_by=None, last_t=t, flags=flags)
        if isinstance(a, Call):
            flags = s.flags
            if s.countdown_by is not None:
                flags += (f"{a.player}'s call cancelled {s.countdown_by}'s countdown",)
            if s.phase == "called":
                flags += (f"{a.player} called {t - s.call_t:g} ms after {s.callers[0]}: a simultaneous call",)
                return replace(s, callers=s.callers + (a.player,), last_t=t, flags=flags)
            return replace(s, phase="called", callers=(a.player,), call_t=t, countdown_by=None, last_t=t,
                           flags=flags)
        # Countdown
        if not a.complete:
            return replace(s, countdown_by=a.player, last_t=t)
        return replace(s, phase="over", countdown_by=None, last_t=t, outcome=self._countdown_outcome())

    # ---------------------------------------------------------------- settlement
    def _pot_now(self) -> int:
        return self.pot_carry_before + self.options.ante * len(self.players)

    def _settle(self, winners: tuple[str, ...], payments: dict[str, int], kind: str, memo: str) -> tuple[Entry, ...]:
        """Losers pay ``payments``; winners share that pool and the pot as equally as possible; odd coins
        stay in the pot. Returns the penalty entry and the pot-award entry."""
        w = len(winners)
        pool = sum(payments.values())
        share, rest = divmod(pool, w)
        entries = []
        if pool:
            postings = [(p, -v) for p, v in payments.items()] + [(p, share) for p in winners]
            if rest:
                postings.append((POT, rest))
            entries.append(Entry(kind, tuple(postings), memo))
        pot_total = self._pot_now() + rest
        award = pot_total // w
        if award:
            entries.append(Entry("pot_award", ((POT, -award * w),) + tuple((p, award) for p in winners),
                                 f"pot of {pot_total} to {', '.join(winners)}"
                                 + (f", {pot_total - award * w} left in the pot" if pot_total % w else "")))
        return tuple(entries)

    def _countdown_outcome(self) -> Outcome:
        s = self._state
        winners = s.bidders
        others = tuple(p for p in self.players if p not in winners)
        entries = self._settle(winners, {p: 1 for p in others}, "countdown_coin",
                               f"countdown completed: 1 coin from each other player to {', '.join(winners)}")
        return Outcome("countdown", s.quantity, s.rank, s.bidders, (), winners, others, None, (), None, entries)

    def _showdown(self, a: Showdown) -> Outcome:
        s = self._state
        rank, q = s.rank, s.quantity
        if a.hands is not None:
            per = {p: (sum(c.rank == rank for c in cs), sum(c.rank == WILD for c in cs)) for p, cs in a.hands}
        else:
            per = {p: (n, w) for p, n, w in a.counts}
        counts = tuple((p, hand_count(*per[p], self.options.super_wilds)) for p in self.players)
        count = sum(c for _, c in counts)
        holds = count >= q
        winners, losers = (s.bidders, s.callers) if holds else (s.callers, s.bidders)
        each = -(-q // len(losers))  # each loser pays their share rounded up
        memo = (f"{bid_name(q, rank)} {'holds' if holds else 'fails'} ({count} in play): "
                f"{', '.join(losers)} pay{'s' if len(losers) == 1 else ''} {each}"
                f"{' each' if len(losers) > 1 else ''} to {', '.join(winners)}")
        entries = self._settle(winners, {p: each for p in losers}, "penalty", memo)
        return Outcome("showdown", q, rank, s.bidders, s.callers, winners, losers, count, counts, holds, entries)
