"""The Powderkeg referee: a pure, deterministic state machine on the Island Deck.

Modelled like python-chess / OpenSpiel: small immutable actions (``Dock``, ``Reveal``, ``Call``), one
``PowderkegRound`` with ``legal_actions`` / ``why_illegal`` / ``apply`` (raises ``IllegalActionError`` with the
reason) / ``undo`` (push/pop of immutable snapshots, so undo is exact), and an ``Outcome``. Variants and stakes
are parameters (``Options``). ``DealRotation`` is the session-level fair-dealing tracker.

Phases of a round::

    dock --Dock--> opening --Reveal x2--> calling --Call x (players in)--> reveal --Reveal--> calling ...
                      |                                                       |
                      +--(dock death / lower card)----> showing --Reveal...--> over
                                         (hand dead, 7th card, nobody left in, lower card) ^

The round ends in play when the hand dies, when the last card is turned, when nobody is left in, or when a card
lower than the one before shows the set was illegal. Then the rest of the hand is shown ("showing") so the
referee can check the set, and only then is the round settled. Every choice the rulebook leaves open is in
docs/powderkeg.md.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable, Mapping

from companion.errors import PirateTableError
from companion.games.base import DEFAULT_STACK, POT, Entry, Referee
from companion.decks.island54 import IslandCard, is_dead, island_deck

MIN_PLAYERS = 2
MAX_PLAYERS = 8
CALLS = ("live", "die", "fold")
MISDEAL_RULINGS = ("void", "dealer_pays")
DECK_SIZE = 54


# --------------------------------------------------------------------------------------------- options


def _whole(name: str, v: object, lo: int = 0) -> None:
    if isinstance(v, bool) or not isinstance(v, int) or v < lo:
        raise PirateTableError(f"{name} must be a whole number >= {lo}, got {v!r}")


@dataclass(frozen=True)
class Options:
    """Stakes and variants, all parameters of one referee (defaults: the First Alpha Rules).

    dealer_ante / ante: the dealer's and every other player's ante. bet: the coin a Live or Die call costs.
    dock_penalty: what every player pays the dealer when the hand dies on the dock.
    misdeal: "void" (default: round void, antes and bets returned) or "dealer_pays" (the same, and the dealer
    also pays every other player ``misdeal_fine`` coins).
    hand_size / opening: cards set in the hand (7) and cards turned up before the first call (2).
    """

    dealer_ante: int = 5
    ante: int = 1
    bet: int = 1
    dock_penalty: int = 5
    misdeal: str = "void"
    misdeal_fine: int = 5
    hand_size: int = 7
    opening: int = 2

    def __post_init__(self) -> None:
        for name in ("dealer_ante", "ante", "bet", "dock_penalty", "misdeal_fine"):
            _whole(name, getattr(self, name))
        _whole("opening", self.opening, 1)
        _whole("hand_size", self.hand_size, 2)
        if self.opening >= self.hand_size:
            raise PirateTableError(f"opening ({self.opening}) must be fewer than hand_size ({self.hand_size})")
        if self.hand_size + 1 > DECK_SIZE:
            raise PirateTableError(f"hand_size {self.hand_size} plus the dock does not fit in {DECK_SIZE} cards")
        if self.misdeal not in MISDEAL_RULINGS:
            raise PirateTableError(f"misdeal must be one of {', '.join(MISDEAL_RULINGS)}, got {self.misdeal!r}")

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("dealer_ante", "ante", "bet", "dock_penalty", "misdeal",
                                              "misdeal_fine", "hand_size", "opening")}


# --------------------------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class Dock:
    """The dealer docks one card face up on the deck (it is not part of the hand)."""

    card: IslandCard

    def __str__(self) -> str:
        return f"dock {self.card}"


@dataclass(frozen=True)
class Reveal:
    """The dealer turns up the next card of the set (opening cards, each card after the calls, and the rest of
    the hand once the round has ended)."""

    card: IslandCard

    def __str__(self) -> str:
        return f"reveal {self.card}"


@dataclass(frozen=True)
class Call:
    """A player's call on the next card: "live" or "die" (one coin into the pot) or "fold" (free)."""

    player: str
    call: str

    def __str__(self) -> str:
        return f"{self.player} calls {self.call}"


Action = Dock | Reveal | Call


# --------------------------------------------------------------------------------------------- results


@dataclass(frozen=True)
class CallRound:
    """The calls on one card. ``card`` is None when everyone folded (the card was then shown, not played)."""

    position: int  # 1-based position in the hand of the card called on
    calls: tuple[tuple[str, str], ...]
    card: IslandCard | None = None
    dead: bool | None = None  # the hand was dead after this card

    @property
    def right(self) -> tuple[str, ...]:
        if self.card is None:
            return ()
        want = "die" if self.dead else "live"
        return tuple(p for p, c in self.calls if c == want)


@dataclass(frozen=True)
class Outcome:
    end: str  # how play ended: "dead", "lived", "all_out", "dock_death" or "misdeal" (a lower card in play)
    ended_at: int  # how many cards were revealed in play when the round ended
    dead_at: int | None  # 1-based position of the card that kills the whole set; None if all of it lives
    dock_death: bool
    set_legal: bool
    set_problem: str | None
    misdeal: bool
    winners: tuple[str, ...]
    dealer_wins: bool
    pot: int  # coins in the pot at the end of play, before settlement
    entries: tuple[Entry, ...]


@dataclass(frozen=True)
class _State:
    phase: str  # dock | opening | calling | reveal | showing | over
    dock: IslandCard | None = None
    revealed: tuple[IslandCard, ...] = ()
    in_players: tuple[str, ...] = ()
    pending: tuple[tuple[str, str], ...] = ()
    rounds: tuple[CallRound, ...] = ()
    out: tuple[tuple[str, str], ...] = ()  # (player, why they are out)
    bets: tuple[Entry, ...] = ()
    end: str | None = None
    ended_at: int | None = None
    winners: tuple[str, ...] = ()
    outcome: Outcome | None = None


def first_descent(cards: Iterable[IslandCard]) -> str | None:
    """None if the cards are in ascending rank order (ties in any order), else what is wrong."""
    cards = list(cards)
    for i in range(1, len(cards)):
        if cards[i].order < cards[i - 1].order:
            return (f"card {i + 1} ({cards[i]}) is lower than card {i} ({cards[i - 1]}): "
                    f"the set must be in ascending rank order")
    return None


def dead_position(cards: Iterable[IslandCard]) -> int | None:
    """1-based position of the card whose reveal makes the hand dead, or None if it never dies."""
    numbers: set[str] = set()
    faces: set[str] = set()
    for i, c in enumerate(cards, start=1):
        (faces if c.is_face else numbers).add(c.suit)
        if not numbers.isdisjoint(faces):
            return i
    return None


# --------------------------------------------------------------------------------------------- the round


class PowderkegRound(Referee[Action, _State]):
    """One round of Powderkeg, from antes to settlement. ``players`` are in seat order, clockwise."""

    def __init__(
        self,
        players: Iterable[str],
        dealer: str,
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
        if not MIN_PLAYERS <= len(self.players) <= MAX_PLAYERS:
            raise PirateTableError(f"Powderkeg is for {MIN_PLAYERS}-{MAX_PLAYERS} players, got {len(self.players)}")
        if dealer not in self.players:
            raise PirateTableError(f"the dealer {dealer!r} is not one of the players")
        self.dealer = dealer
        d = self.players.index(dealer)
        # clockwise from the dealer's left: the next seats in seat order
        self.call_order: tuple[str, ...] = self.players[d + 1:] + self.players[:d]
        self.options = options or Options()
        stacks = dict(stacks) if stacks is not None else {p: DEFAULT_STACK for p in self.players}
        if set(stacks) != set(self.players):
            raise PirateTableError(f"stacks must name exactly the players {list(self.players)}")
        for p, v in stacks.items():
            if isinstance(v, bool) or not isinstance(v, int):
                raise PirateTableError(f"stack of {p} must be a whole number of coins, got {v!r}")
        _whole("pot_carry", pot_carry)
        self.stacks_before: dict[str, int] = {p: stacks[p] for p in self.players}
        self.pot_carry_before = pot_carry
        o = self.options
        antes = [(p, -(o.dealer_ante if p == dealer else o.ante)) for p in self.players]
        self.ante_entry = Entry(
            "ante", tuple(antes) + ((POT, -sum(v for _, v in antes)),),
            f"ante: dealer {dealer} {o.dealer_ante}, others {o.ante} each",
        )
        super().__init__()
        self._state = _State("dock")

    # ---------------------------------------------------------------- reading state
    @property
    def phase(self) -> str:
        return self._state.phase

    @property
    def dock(self) -> IslandCard | None:
        return self._state.dock

    @property
    def revealed(self) -> tuple[IslandCard, ...]:
        return self._state.revealed

    @property
    def in_players(self) -> tuple[str, ...]:
        """Players still in the hand, in calling order."""
        return self._state.in_players

    @property
    def pending_calls(self) -> dict[str, str]:
        return dict(self._state.pending)

    @property
    def next_to_call(self) -> str | None:
        s = self._state
        return s.in_players[len(s.pending)] if s.phase == "calling" else None

    @property
    def rounds(self) -> tuple[CallRound, ...]:
        return self._state.rounds

    @property
    def out(self) -> dict[str, str]:
        return dict(self._state.out)

    @property
    def is_dead(self) -> bool:
        return is_dead(self._state.revealed)

    @property
    def end(self) -> str | None:
        return self._state.end

    @property
    def outcome(self) -> Outcome | None:
        return self._state.outcome


    def _pending_entry(self) -> Entry | None:
        s = self._state
        if s.phase != "calling":
            return None
        payers = [p for p, c in s.pending if c != "fold"]
        if not payers or not self.options.bet:
            return None
        b = self.options.bet
        return Entry("bet", tuple((p, -b) for p in payers) + ((POT, b * len(payers)),),
                     f"card {len(s.revealed) + 1}: calls so far")

    @property
    def entries(self) -> list[Entry]:
        s = self._state
        out = [self.ante_entry, *s.bets]
        pending = self._pending_entry()
        if pending:
            out.append(pending)
        if s.outcome:
            out.extend(s.outcome.entries)
        return [e for e in out if e.moves_coins]

    @property
    def stacks(self) -> dict[str, int]:
        st = dict(self.stacks_before)
        for e in self.entries:
            for a, v in e.postings:
                if a != POT:
                    st[a] += v
        return st

    @property
    def pot(self) -> int:
        return self.pot_carry_before + sum(v for e in self.entries for a, v in e.postings if a == POT)

    # ---------------------------------------------------------------- legality
    def _ended_reason(self) -> str:
        s = self._state
        n = s.ended_at
        card = s.revealed[n - 1] if n else None
        why = {
            "dead": f"the hand died at card {n} ({card})",
            "lived": f"the hand lived to the last card ({card})",
            "all_out": f"nobody was left in after card {n}" if n else "nobody was left in",
            "dock_death": f"the hand died on the dock ({', '.join(map(str, s.revealed[:n]))})",
            "misdeal": f"card {n} ({card}) was lower than the card before it: a misdeal",
        }[s.end]
        return f"the round is over: {why}"

    def why_illegal(self, action: Action) -> str | None:
        """None if the action is legal now, else the reason in one sentence."""
        s = self._state
        if s.phase == "over":
            return self._ended_reason()
        if isinstance(action, Dock):
            if not isinstance(action.card, IslandCard):
                return f"a docked card must be an IslandCard, got {action.card!r}"
            if s.phase != "dock":
                return f"the dock is already set ({s.dock})"
            return None
        if isinstance(action, Reveal):
            c = action.card
            if not isinstance(c, IslandCard):
                return f"a revealed card must be an IslandCard, got {c!r}"
            if s.phase == "dock":
                return "the dealer must dock a card before turning up the hand"
            if s.phase == "calling":
                return f"the calls are not finished: waiting for {self.next_to_call}"
            if c == s.dock:
                return f"{c} is the docked card"
            if c in s.revealed:
                return f"{c} is already revealed as card {s.revealed.index(c) + 1}"
            return None
        if isinstance(action, Call):
            p = action.player
            if p not in self.players:
                return f"{p!r} is not at this table"
            if p == self.dealer:
                return f"{p} is the dealer: the dealer plays the hand and does not call"
            if action.call not in CALLS:
                return f"a call is live, die or fold, got {action.call!r}"
            if s.phase == "showing":
                return self._ended_reason().replace("the round is over", "no more calls")
            if s.phase == "dock":
                return "the dealer has not docked a card yet"
            if s.phase == "opening":
                return f"the first {self.options.opening} cards are not all turned up yet"
            if p not in s.in_players:
                return f"{p} is out of the hand ({dict(s.out).get(p, 'not in')})"
            if s.phase == "reveal":
                return f"all calls are in: the dealer turns up card {len(s.revealed) + 1} next"
            if p in dict(s.pending):
                return f"{p} has already called {dict(s.pending)[p]} on card {len(s.revealed) + 1}"
            nxt = self.next_to_call
            if p != nxt:
                return f"it is {nxt}'s turn to call (calls go clockwise from the dealer's left)"
            return None
        return f"unknown action {action!r}"

    def legal_actions(self) -> list[Action]:
        s = self._state
        if s.phase == "dock":
            return [Dock(c) for c in island_deck()]
        if s.phase in ("opening", "reveal", "showing"):
            seen = set(s.revealed) | {s.dock}
            return [Reveal(c) for c in island_deck() if c not in seen]
        if s.phase == "calling":
            return [Call(self.next_to_call, c) for c in CALLS]
        return []

    # ---------------------------------------------------------------- apply / undo
    def _finish_play(self, s: _State, end: str, winners: tuple[str, ...] = ()) -> _State:
        s = replace(s, end=end, ended_at=len(s.revealed), winners=winners, in_players=(), pending=())
        return self._maybe_settle(s)

    def _maybe_settle(self, s: _State) -> _State:
        if len(s.revealed) < self.options.hand_size:
            return replace(s, phase="showing")
        return replace(s, phase="over", outcome=self._settle(s))

    def _next(self, a: Action) -> _State:
        s = self._state
        o = self.options
        if isinstance(a, Dock):
            return replace(s, phase="opening", dock=a.card)
        if isinstance(a, Call):
            pending = s.pending + ((a.player, a.call),)
            if len(pending) < len(s.in_players):
                return replace(s, pending=pending)
            position = len(s.revealed) + 1
            payers = [p for p, c in pending if c != "fold"]
            bets = s.bets
            if payers and o.bet:
                calls_txt = "; ".join(f"{c.capitalize()}: {', '.join(p for p, x in pending if x == c)}"
                                      for c in ("live", "die") if any(x == c for _, x in pending))
                bets += (Entry("bet", tuple((p, -o.bet) for p in payers) + ((POT, o.bet * len(payers)),),
                               f"card {position}: {calls_txt}"),)
            out = s.out + tuple((p, f"folded on card {position}") for p, c in pending if c == "fold")
            s = replace(s, pending=pending, bets=bets, out=out)
            if not payers:
                rounds = s.rounds + (CallRound(position, pending),)
                return self._finish_play(replace(s, rounds=rounds), "all_out")
            return replace(s, phase="reveal")
        # Reveal
        revealed = s.revealed + (a.card,)
        lower = len(revealed) > 1 and a.card.order < revealed[-2].order
        if s.phase == "showing":
            return self._maybe_settle(replace(s, revealed=revealed))
        if s.phase == "opening":
            s = replace(s, revealed=revealed)
            if lower:
                return self._finish_play(s, "misdeal")
            if len(revealed) < o.opening:
                return s
            if is_dead(revealed):
                return self._finish_play(s, "dock_death")
            return replace(s, phase="calling", in_players=self.call_order)
        # phase "reveal": settle the calls on this card
        position = len(revealed)
        dead = is_dead(revealed)
        rnd = CallRound(position, s.pending, a.card, dead)
        s = replace(s, revealed=revealed, rounds=s.rounds + (rnd,))
        if lower:
            return self._finish_play(s, "misdeal")
        right = rnd.right
        wrong = tuple((p, f"called {c} on card {position} ({a.card})") for p, c in s.pending
                      if c != "fold" and p not in right)
        s = replace(s, out=s.out + wrong)
        if dead:
            return self._finish_play(s, "dead", right)
        if position == o.hand_size:
            return self._finish_play(s, "lived", right)
        if not right:
            return self._finish_play(s, "all_out")
        return replace(s, phase="calling", in_players=right, pending=())

    # ---------------------------------------------------------------- settlement
    def _settle(self, s: _State) -> Outcome:
        o = self.options
        cards = s.revealed
        problem = first_descent(cards)
        legal = problem is None
        dead_at = dead_position(cards)
        pot = self.pot_carry_before + sum(v for e in (self.ante_entry, *s.bets) for a, v in e.postings if a == POT)
        others = [p for p in self.players if p != self.dealer]
        entries: list[Entry] = []
        winners: tuple[str, ...] = ()
        dealer_wins = False
        if not legal:
            paid = {p: 0 for p in self.players}
            for e in (self.ante_entry, *s.bets):
                for acct, v in e.postings:
                    if acct != POT:
                        paid[acct] -= v
            back = sum(paid.values())
            entries.append(Entry("refund", tuple((p, paid[p]) for p in self.players if paid[p]) + ((POT, -back),),
                                 f"misdeal ({problem}): round void, antes and bets returned"))
            if o.misdeal == "dealer_pays" and o.misdeal_fine:
                entries.append(Entry("penalty", ((self.dealer, -o.misdeal_fine * len(others)),)
                                     + tuple((p, o.misdeal_fine) for p in others),
                                     f"misdeal: dealer {self.dealer} pays {o.misdeal_fine} to every player"))
        elif s.end == "dock_death":
            dealer_wins = True
            entries.append(Entry("pot_award", ((POT, -pot), (self.dealer, pot)),
                                 f"died on the dock: pot of {pot} to the dealer {self.dealer}"))
            entries.append(Entry("dock_penalty", tuple((p, -o.dock_penalty) for p in others)
                                 + ((self.dealer, o.dock_penalty * len(others)),),
                                 f"died on the dock: {o.dock_penalty} from every player to the dealer {self.dealer}"))
        elif s.winners:
            winners = s.winners
            share = pot // len(winners)
            left = pot - share * len(winners)
            entries.append(Entry("pot_award", ((POT, -share * len(winners)),) + tuple((p, share) for p in winners),
                                 f"pot of {pot} split by {', '.join(winners)}: {share} each"
                                 + (f", {left} left in the pot" if left else "")))
        else:
            dealer_wins = True
            entries.append(Entry("pot_award", ((POT, -pot), (self.dealer, pot)),
                                 f"nobody called it right: pot of {pot} to the dealer {self.dealer}"))
        return Outcome(
            end=s.end, ended_at=s.ended_at, dead_at=dead_at, dock_death=s.end == "dock_death", set_legal=legal,
            set_problem=problem, misdeal=not legal, winners=winners, dealer_wins=dealer_wins, pot=pot,
            entries=tuple(entries),
        )


# --------------------------------------------------------------------------------------------- fair dealing


class DealRotation:
    """Session-level fair dealing: the deal passes to the left (the next seat in seat order) after every
    round; a player who joins or leaves before every seated player has dealt since the table last changed gets
    a warning (the rules: "the deal should go once to every player before anyone is allowed to enter or
    leave"). Warnings are returned, never raised: people do get up from real tables.
    """

    def __init__(self, players: Iterable[str], dealer: str | None = None) -> None:
        self.seats: list[str] = list(players)
        if len(set(self.seats)) != len(self.seats) or not self.seats:
            raise PirateTableError(f"players must be distinct and at least one: {self.seats}")
        if len(self.seats) > MAX_PLAYERS:
            raise PirateTableError(f"Powderkeg seats at most {MAX_PLAYERS} players")
        self.dealer: str = self.seats[0] if dealer is None else dealer
        if self.dealer not in self.seats:
            raise PirateTableError(f"the dealer {self.dealer!r} is not seated")
        self.dealt: list[str] = []  # who has dealt since the table last changed
        self.history: list[str] = []  # every deal of the session, in order

    def left_of(self, player: str) -> str:
        i = self.seats.index(player)
        return self.seats[(i + 1) % len(self.seats)]

    @property
    def next_dealer(self) -> str:
        return self.left_of(self.dealer)

    @property
    def gone_around(self) -> bool:
        return all(p in self.dealt for p in self.seats)

    @property
    def still_to_deal(self) -> list[str]:
        """Seated players who have not dealt since the table last changed, in the order they will deal."""
        i = self.seats.index(self.dealer)
        order = self.seats[i:] + self.seats[:i]
        return [p for p in order if p not in self.dealt]

    def deal_done(self) -> str:
        """The current dealer has dealt a round; the deal passes left. Returns the new dealer."""
        self.dealt.append(self.dealer)
        self.history.append(self.dealer)
        self.dealer = self.next_dealer
        return self.dealer

    def check_leave(self, player: str) -> list[str]:
        if player not in self.seats:
            raise PirateTableError(f"{player!r} is not seated")
        warnings = []
        if not self.gone_around:
            warnings.append(f"{player} leaves before the deal has gone once around "
                            f"(still to deal: {', '.join(self.still_to_deal)})")
        if len(self.seats) - 1 < MIN_PLAYERS:
            warnings.append(f"fewer than {MIN_PLAYERS} players left: no round can be dealt")
        return warnings

    def check_join(self, player: str) -> list[str]:
        if player in self.seats:
            raise PirateTableError(f"{player!r} is already seated")
        if len(self.seats) >= MAX_PLAYERS:
            raise PirateTableError(f"the table is full ({MAX_PLAYERS} players)")
        if not self.gone_around:
            return [f"{player} joins before the deal has gone once around "
                    f"(still to deal: {', '.join(self.still_to_deal)})"]
        return []

    def leave(self, player: str) -> list[str]:
        """Unseat a player; returns the fair-dealing warnings. A leaving dealer passes the deal to the left.
        The count for going once around starts again for the new table."""
        warnings = self.check_leave(player)
        if player == self.dealer:
            self.dealer = self.left_of(player) if len(self.seats) > 1 else player
        self.seats.remove(player)
        self.dealt = []
        return warnings

    def join(self, player: str, seat: int | None = None) -> list[str]:
        """Seat a player at index ``seat`` of the seat order (default: at the dealer's right, so they deal
        last in the new orbit); returns the fair-dealing warnings. The count starts again."""
        warnings = self.check_join(player)
        if seat is None:
            seat = self.seats.index(self.dealer)  # just before the dealer = the dealer's right
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= len(self.seats):
            raise PirateTableError(f"seat must be 0-{len(self.seats)}, got {seat!r}")
        self.seats.insert(seat, player)
        self.dealt = []
        return warnings
