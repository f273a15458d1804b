"""The Pirate Whist table model for the app: pure (no Kivy), one truth for the rules (everything is ruled by
:mod:`.rules`), event-sourced (undo drops the last event and replays; ``to_json`` / ``from_json`` resume after
the app is killed, undo history included).

What the screens get from it:
- set-up: players (2-10, seat order), maximum hand size with its limit floor(52 / players), a cut for the deal
  (lowest card deals, ties cut again) or a chosen dealer, the hook option, counts or trick-by-trick play;
- the round plan (round k of n, cards, dealer, leader), always;
- secret bids through :class:`companion.secrets.SecretRound`, one player at a time, revealed at once; nothing
  of a bid is visible before the reveal (``bid_status`` shows who is still to bid, never what anyone bid);
  with ``hook`` the dealer bids last, in the open, and may not make the bids total the cards;
- "bids vs cards" after the reveal; tricks as counts or trick by trick (the winner only, or every card with a
  revoke warning from the rules);
- the score sheet (bids beside scores, running totals), editing any past round, undo, the Captain(s), points
  over rounds for the plot, CSV export, and the referee record of the game.
"""

from __future__ import annotations

import csv
import io
import random
from typing import Any

from companion.decks.standard52 import RANK_NAMES, SUIT_NAMES, StdCard, full_deck
from companion.errors import IllegalActionError, RecordError
from companion.games.pirate_whist import record as records
from companion.games.pirate_whist import rules
from companion.games.pirate_whist.rules import Bid, Counts, PlayCard, Setup, TakeTrick
from companion.secrets import SecretRound

MODES = ("counts", "tricks")
NAME_MAX = 24
SAVE_VERSION = 1


def cut_for_deal(players: tuple[str, ...] | list[str], rng: random.Random) -> tuple[list[list[tuple[str, StdCard]]], str]:
    """Everyone cuts a card; the lowest card deals (ace high); players tied for lowest cut again.
    Returns every cut (round by round) and the dealer."""
    deck = list(full_deck())
    rng.shuffle(deck)
    cutting = list(players)
    rounds: list[list[tuple[str, StdCard]]] = []
    while True:
        if len(deck) < len(cutting):
            deck = [c for c in full_deck()]
            rng.shuffle(deck)
        draws = [(p, deck.pop()) for p in cutting]
        rounds.append(draws)
        low = min(c.rank for _, c in draws)
        cutting = [p for p, c in draws if c.rank == low]
        if len(cutting) == 1:
            return rounds, cutting[0]


def check_name(name: Any) -> str:
    why = rules.name_problem(name)
    if why:
        raise IllegalActionError(f"player name {name!r}: {why}")
    if len(name) > NAME_MAX:
        raise IllegalActionError(f"player name {name[:NAME_MAX]!r}...: at most {NAME_MAX} characters")
    return name


class WhistTable:
    """One game of Pirate Whist at the table."""

    def __init__(self, setup: Setup, mode: str = "counts",
                 cut: list[list[tuple[str, StdCard]]] | None = None,
                 base: tuple[rules.RoundState, ...] = ()) -> None:
        if mode not in MODES:
            raise IllegalActionError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        for p in setup.players:
            check_name(p)
        self.setup = setup
        self.mode = mode
        self.cut = cut or []
        # Rounds finished before this table's events (the session's history, when the app runs the game).
        self._base = tuple(base)
        rules.after(setup, self._base)  # refuses rounds that do not fit the plan
        self._events: list[dict[str, Any]] = []
        self._rebuild()

    @classmethod
    def new(cls, players: list[str], max_cards: int, dealer: str | None = None, *, hook: bool = False,
            mode: str = "counts", seed: int | None = None) -> "WhistTable":
        """Set up a table; with no ``dealer``, cut for the deal (``seed`` makes the cut repeatable)."""
        players = [check_name(p) for p in players]
        cut: list[list[tuple[str, StdCard]]] = []
        if dealer is None:
            if not rules.MIN_PLAYERS <= len(players) <= rules.MAX_PLAYERS:
                raise IllegalActionError(f"Pirate Whist is for {rules.MIN_PLAYERS}-{rules.MAX_PLAYERS} players")
            cut, dealer = cut_for_deal(players, random.Random(seed))
        return cls(Setup(tuple(players), max_cards, dealer, hook=hook), mode=mode, cut=cut)

    def __repr__(self) -> str:  # never a secret
        return f"WhistTable(players={self.setup.players!r}, round={self.round_number}, events={len(self._events)})"

    # -------------------------------------------------------------------------------- replay (one truth)

    def _rebuild(self) -> None:
        self._game = rules.WhistGame(self.setup, [rules.after(self.setup, self._base)])
        self._secret: SecretRound | None = None
        self._start_round()
        for i, ev in enumerate(self._events):
            try:
                self._do(ev)
            except (IllegalActionError, KeyError, TypeError, ValueError) as exc:
                raise RecordError(f"session.events[{i}]: {exc}") from None

    def _start_round(self) -> None:
        st = self._game.state
        if st.round is None:
            self._secret = None
            return
        r = st.round
        seats = self.setup.clockwise_from(r.leader)
        if self.setup.hook:
            seats = tuple(p for p in seats if p != r.dealer)
        self._secret = SecretRound("bid", seats, validate=self._bid_problem)

    def _bid_problem(self, seat: str, value: Any) -> str | None:
        r = self._game.state.round
        if r is None:
            return "the game is over"
        if isinstance(value, bool) or not isinstance(value, int):
            return f"a bid is a whole number, got {value!r}"
        if not 0 <= value <= r.cards:
            return f"a bid is 0 to {r.cards} this round, got {value}"
        return None

    def _apply(self, action: rules.Action) -> None:
        before = len(self._game.state.done)
        self._game.apply(action)
        if len(self._game.state.done) != before:
            self._start_round()

    def _do(self, ev: dict[str, Any]) -> None:
        kind = ev["e"]
        if kind == "bid":
            if self._secret is not None and not self._secret.revealed:
                self._secret.submit(ev["player"], ev["bid"])
            else:  # the hook dealer, in the open
                self._apply(Bid(ev["player"], ev["bid"]))
        elif kind == "withdraw":
            if self._secret is None:
                raise IllegalActionError("no bids to take back")
            self._secret.withdraw(ev["player"])
        elif kind == "reveal":
            if self._secret is None or self._game.state.round is None:
                raise IllegalActionError("no bids to reveal")
            if self._secret.revealed:
                raise IllegalActionError("the bids are already revealed")
            answers = self._secret.reveal()
            for p, b in answers.items():
                self._apply(Bid(p, b))
        elif kind == "counts":
            self._apply(Counts.of(ev["won"]))
        elif kind == "trick":
            self._apply(TakeTrick(ev["winner"]))
        elif kind == "play":
            self._apply(PlayCard(ev["player"], rules.card(ev["card"])))
        elif kind == "edit":
            self._do_edit(ev["round"], ev["bids"], ev["won"])
        else:
            raise IllegalActionError(f"unknown event {kind!r}")

    def _do_edit(self, k: Any, bids: dict[str, Any], won: dict[str, Any]) -> None:
        st = self._game.state
        if isinstance(k, bool) or not isinstance(k, int) or not 0 <= k < len(st.done):
            raise IllegalActionError(f"round {k!r} has not been played")
        old = st.done[k]
        if not isinstance(bids, dict) or not isinstance(won, dict):
            raise IllegalActionError("an edit gives bids and won per player")
        acts: list[rules.Action] = [Bid(p, bids[p]) for p in self.setup.clockwise_from(old.leader) if p in bids]
        old_won = {p: old.won().get(p, 0) for p in self.setup.players}
        if old.counted is None and dict(won) == old_won:
            acts += [a for a in rules.round_actions(old, self.setup) if not isinstance(a, Bid)]
        else:
            acts.append(Counts.of(won))
        self._game.apply(rules.EditRound(k, tuple(acts)))

    def _event(self, ev: dict[str, Any]) -> None:
        """Apply a new event; IllegalActionError and nothing changed when the rules refuse it."""
        events = self._events
        try:
            self._events = events + [ev]
            self._do(ev)
        except (IllegalActionError, KeyError, TypeError):
            self._events = events
            self._rebuild()
            raise

    # -------------------------------------------------------------------------------- set-up and plan

    @property
    def players(self) -> tuple[str, ...]:
        return self.setup.players

    @property
    def state(self) -> rules.State:
        return self._game.state

    @property
    def over(self) -> bool:
        return self.state.over

    @property
    def round_number(self) -> int:
        """1-based number of the round being played (the last one once the game is over)."""
        st = self.state
        return st.round.index + 1 if st.round is not None else self.setup.n_rounds

    def plan(self) -> list[dict[str, Any]]:
        """Every round of the plan: number, cards, dealer, leader, and whether it is played / current."""
        cur = self.state.round.index if self.state.round is not None else None
        return [{"round": k + 1, "cards": self.setup.cards(k), "dealer": self.setup.dealer(k),
                 "leader": self.setup.leader(k),
                 "status": "played" if k < len(self.state.done) else ("now" if k == cur else "to come")}
                for k in range(self.setup.n_rounds)]

    def now(self) -> dict[str, Any]:
        """The current round for the always-visible header: round k of n, cards, dealer, leader, phase."""
        st = self.state
        if st.round is None:
            return {"round": self.setup.n_rounds, "of": self.setup.n_rounds, "phase": "over", "cards": None,
                    "dealer": None, "leader": None}
        r = st.round
        return {"round": r.index + 1, "of": self.setup.n_rounds, "cards": r.cards, "dealer": r.dealer,
                "leader": r.leader, "phase": self.phase}

    def header(self) -> str:
        n = self.now()
        if n["phase"] == "over":
            return f"Game over after {n['of']} rounds"
        c = n["cards"]
        return (f"Round {n['round']} of {n['of']}  \u2022  {c} card{'s' if c != 1 else ''}  \u2022  "
                f"{n['dealer']} deals  \u2022  {n['leader']} leads")

    @property
    def phase(self) -> str:
        """``"bid"`` (secret bids), ``"reveal"`` (all in, not shown), ``"dealer-bid"`` (hook dealer, in the open),
        ``"play"``, ``"over"``."""
        st = self.state
        if st.round is None:
            return "over"
        if rules.phase(st) == "play":
            return "play"
        assert self._secret is not None
        if not self._secret.revealed:
            return "reveal" if self._secret.complete else "bid"
        return "dealer-bid"

    # -------------------------------------------------------------------------------- bids

    def bid_status(self) -> dict[str, Any]:
        """What any screen may show while bids are secret: who is still to bid (never a value)."""
        if self._secret is None:
            return {"kind": "bid", "seats": [], "waiting": [], "revealed": True}
        v = self._secret.public_view()
        v.pop("answers", None)
        return v

    def next_bidder(self) -> str | None:
        """Who takes the tablet next (clockwise from the leader), while secret bids are missing."""
        if self.phase != "bid":
            return None
        assert self._secret is not None
        return self._secret.waiting()[0]

    def bid_choices(self, player: str) -> list[int]:
        r = self.state.round
        if r is None:
            return []
        forbidden = rules.hook_forbidden(self.state) if self.phase == "dealer-bid" else None
        return [b for b in range(r.cards + 1) if b != forbidden]

    def submit_bid(self, player: str, bid: int) -> None:
        """A secret bid on the passed tablet (or the hook dealer's open bid after the reveal)."""
        if self.phase == "bid":
            assert self._secret is not None
            why = self._secret.why_not(player, bid)
            if why:
                raise IllegalActionError(why)
        elif self.phase == "dealer-bid":
            why = rules.why_not(self.state, Bid(player, bid))
            if why:
                raise IllegalActionError(why)
        else:
            raise IllegalActionError(f"no bids are being taken now ({self.phase})")
        self._event({"e": "bid", "player": player, "bid": bid})

    def take_back_bid(self, player: str) -> None:
        """Before the reveal: a player takes their own bid back (they bid again)."""
        self._event({"e": "withdraw", "player": player})

    def reveal(self) -> dict[str, int]:
        """All secret bids at once (and, in the hook game, the dealer bids next, in the open)."""
        if self.phase != "reveal":
            raise IllegalActionError("the bids cannot be revealed yet: still waiting for "
                                     + ", ".join(self.bid_status()["waiting"]))
        self._event({"e": "reveal"})
        return self.bids()

    def bids(self) -> dict[str, int]:
        """The current round's bids, once revealed (IllegalActionError before)."""
        st = self.state
        if st.round is None:
            raise IllegalActionError("the game is over")
        if self._secret is not None and not self._secret.revealed:
            raise IllegalActionError("the bids are secret until everyone has bid and they are revealed")
        return st.round.bid_map

    def bids_vs_cards(self) -> dict[str, Any]:
        """After the reveal: the bids' total against the tricks there are."""
        r = self.state.round
        total = sum(self.bids().values())
        assert r is not None
        diff = total - r.cards
        word = "even" if diff == 0 else f"{abs(diff)} {'over' if diff > 0 else 'under'}"
        text = f"{word}: {total} bid for {r.cards} trick{'s' if r.cards != 1 else ''}"
        return {"bids": total, "cards": r.cards, "diff": diff, "text": text}

    def hook_forbidden(self) -> int | None:
        return rules.hook_forbidden(self.state) if self.phase == "dealer-bid" else None

    # -------------------------------------------------------------------------------- play

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise IllegalActionError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode

    def enter_counts(self, won: dict[str, int]) -> None:
        self._event({"e": "counts", "won": dict(won)})

    def take_trick(self, winner: str) -> None:
        """Trick by trick, without cards: who won this trick."""
        self._event({"e": "trick", "winner": winner})

    def play_warning(self, player: str, card_text: Any) -> str | None:
        """Why this card cannot be entered (a revoke, a card seen before, out of turn), or None."""
        try:
            c = rules.card(card_text)
        except ValueError as exc:
            return str(exc)
        return rules.why_not(self.state, PlayCard(player, c))

    def play_card(self, player: str, card_text: Any) -> None:
        """Trick by trick, with cards: the next card played. A revoke is refused with the rules' warning."""
        c = rules.card(card_text)
        self._event({"e": "play", "player": player, "card": str(c)})

    def trick_view(self) -> dict[str, Any]:
        """The trick in progress: number, leader, cards so far, who plays next, tricks won so far."""
        r = self.state.round
        if r is None or rules.phase(self.state) != "play":
            return {"trick": None}
        return {"trick": len(r.tricks) + 1, "of": r.cards, "leader": r.next_leader(),
                "cards": [(p, str(c)) for p, c in r.current], "to_play": rules.to_play(self.state),
                "won": {p: r.won().get(p, 0) for p in self.players}}

    # -------------------------------------------------------------------------------- score sheet

    def results(self) -> list[rules.RoundResult]:
        return rules.results(self.state)

    def sheet(self) -> list[dict[str, Any]]:
        """One row per round of the plan: bids beside won and scores, running totals (blank rounds to come)."""
        rows = []
        totals = {p: 0 for p in self.players}
        res = self.results()
        for k in range(self.setup.n_rounds):
            row: dict[str, Any] = {"round": k + 1, "cards": self.setup.cards(k), "dealer": self.setup.dealer(k)}
            if k < len(res):
                for p in self.players:
                    totals[p] += res[k].scores[p]
                row.update(bids=res[k].bids, won=res[k].won, scores=res[k].scores, totals=dict(totals),
                           played=True)
            else:
                row.update(played=False)
            rows.append(row)
        return rows

    def totals(self) -> dict[str, int]:
        return rules.outcome(self.state).totals

    def captains(self) -> list[str]:
        """The winner(s) once every round is played; [] before."""
        return list(rules.outcome(self.state).winners)

    def points_over_rounds(self) -> dict[str, list[int]]:
        """Running total after each played round, per player (starting from 0 before round 1)."""
        out = {p: [0] for p in self.players}
        for r in self.results():
            for p in self.players:
                out[p].append(out[p][-1] + r.scores[p])
        return out

    def edit_round(self, number: int, bids: dict[str, int], won: dict[str, int]) -> None:
        """Correct a played round (1-based ``number``): its bids and tricks won; totals follow."""
        if isinstance(number, bool) or not isinstance(number, int):
            raise IllegalActionError(f"round number must be a whole number, got {number!r}")
        self._event({"e": "edit", "round": number - 1, "bids": dict(bids), "won": dict(won)})

    def csv(self) -> str:
        """The score sheet as CSV: one row per played round, bids beside scores, then the totals."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        head = ["round", "cards", "dealer"]
        for p in self.players:
            name = _cell(p)
            head += [f"{name} bid", f"{name} won", f"{name} score", f"{name} total"]
        w.writerow(head)
        for row in self.sheet():
            if not row["played"]:
                continue
            line = [row["round"], row["cards"], _cell(row["dealer"])]
            for p in self.players:
                line += [row["bids"][p], row["won"][p], row["scores"][p], row["totals"][p]]
            w.writerow(line)
        tot = self.totals()
        w.writerow(["total", "", ""] + [x for p in self.players for x in ("", "", "", tot[p])])
        caps = self.captains()
        if caps:
            w.writerow(["captain", "", " & ".join(_cell(c) for c in caps)])
        return buf.getvalue()

    def record(self) -> dict[str, Any]:
        """The referee record of the played rounds (``pirate-table referee`` rules it to the same totals)."""
        return records.to_record(self.state)

    # -------------------------------------------------------------------------------- undo and resume

    def can_undo(self) -> bool:
        return bool(self._events)

    @property
    def events(self) -> list[dict[str, Any]]:
        """The steps taken on top of the earlier rounds (copies; secret bid values included: never show them)."""
        return [dict(e) for e in self._events]

    def replay(self, events: Any) -> None:
        """Replace the steps by ``events`` (a saved round), replayed through the rules; RecordError naming the
        place when one is not legal (the table is then unchanged)."""
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise RecordError("session.events: expected a list of events")
        old = self._events
        self._events = [dict(e) for e in events]
        try:
            self._rebuild()
        except RecordError:
            self._events = old
            self._rebuild()
            raise

    @property
    def base_rounds(self) -> int:
        return len(self._base)

    def undo(self) -> str:
        """Take back the last step (a bid, the reveal, a trick, a card, counts, an edit). Returns what it was."""
        if not self._events:
            raise IllegalActionError("nothing to undo")
        ev = self._events.pop()
        self._rebuild()
        return _describe(ev)

    def to_json(self) -> dict[str, Any]:
        """Everything needed to resume after the app is killed (the secret bids of an unrevealed round
        included: a saved session may hold them; screens, logs and exports never do)."""
        return {"game": records.GAME_ID, "version": SAVE_VERSION,
                "setup": {"players": list(self.players), "max_cards": self.setup.max_cards,
                          "first_dealer": self.setup.first_dealer, "hook": self.setup.hook},
                "mode": self.mode,
                "cut": [[[p, str(c)] for p, c in draws] for draws in self.cut],
                "events": [dict(e) for e in self._events]}

    @classmethod
    def from_json(cls, data: Any) -> "WhistTable":
        """Resume a saved table; RecordError naming the place when the save is damaged."""
        if not isinstance(data, dict) or data.get("game") != records.GAME_ID:
            raise RecordError("session: not a saved Pirate Whist table")
        if data.get("version") != SAVE_VERSION:
            raise RecordError(f"session.version: expected {SAVE_VERSION}, got {data.get('version')!r}")
        s = data.get("setup")
        if not isinstance(s, dict):
            raise RecordError("session.setup: missing")
        try:
            setup = Setup(tuple(s["players"]), s["max_cards"], s["first_dealer"], hook=s.get("hook", False))
            cut = [[(p, rules.card(c)) for p, c in draws] for draws in data.get("cut", [])]
            t = cls(setup, mode=data.get("mode", "counts"), cut=cut)
        except (IllegalActionError, KeyError, TypeError, ValueError) as exc:
            raise RecordError(f"session.setup: {exc}") from None
        events = data.get("events")
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            raise RecordError("session.events: expected a list of events")
        t.replay(events)
        return t


def _cell(text: str) -> str:
    """A CSV cell a spreadsheet will not run as a formula."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _describe(ev: dict[str, Any]) -> str:
    kind = ev.get("e")
    if kind == "bid":
        return f"{ev['player']}'s bid"
    if kind == "withdraw":
        return f"{ev['player']} taking back a bid"
    if kind == "reveal":
        return "the reveal"
    if kind == "counts":
        return "the tricks won"
    if kind == "trick":
        return f"a trick to {ev['winner']}"
    if kind == "play":
        c = rules.card(ev["card"])
        return f"{ev['player']}'s {RANK_NAMES[c.rank]} of {SUIT_NAMES[c.suit]}"
    if kind == "edit":
        return f"the edit of round {ev['round'] + 1}"
    return str(kind)


# ------------------------------------------------------------------------------------------------ the app's model

from companion.games.registry import RoundStart, TableModel  # noqa: E402  (pure: no Kivy)

DEFAULT_MAX_CARDS = 7
OPTION_KEYS = ("max_cards", "first_dealer", "hook", "mode", "cut", "seed")


def options_of(players: tuple[str, ...], options: Any) -> dict[str, Any]:
    """The game's options (from the set-up screen or a saved session), checked; defaults filled in.
    No ``first_dealer``: the table cuts for the deal (``seed`` makes the cut repeatable)."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise IllegalActionError(f"Pirate Whist options: expected an object, got {type(options).__name__}")
    for k in options:
        if k not in OPTION_KEYS:
            raise IllegalActionError(f"Pirate Whist options: unknown option {k!r}")
    n = len(players)
    limit = rules.max_cards_limit(n) if n else 1
    m = options.get("max_cards", min(DEFAULT_MAX_CARDS, limit))
    hook = options.get("hook", False)
    mode = options.get("mode", "counts")
    if mode not in MODES:
        raise IllegalActionError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
    cut: list[list[tuple[str, StdCard]]] = []
    dealer = options.get("first_dealer")
    if options.get("cut"):
        try:
            cut = [[(p, rules.card(c)) for p, c in draws] for draws in options["cut"]]
        except (TypeError, ValueError) as exc:
            raise IllegalActionError(f"Pirate Whist options: cut: {exc}") from None
    if dealer is None:
        seed = options.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise IllegalActionError(f"Pirate Whist options: seed must be a whole number, got {seed!r}")
        cut, dealer = cut_for_deal(players, random.Random(seed))
    setup = Setup(tuple(players), m, dealer, hook=hook)
    return {"setup": setup, "mode": mode, "cut": cut}


def round_ruling(state: rules.State, k: int) -> dict[str, Any]:
    """The ruling of finished round ``k`` (0-based) as the session keeps it: the contract's round keys,
    ``points`` (this round's scores) and ``record`` (the round in record form, to rebuild it on resume)."""
    r = state.done[k]
    res = rules.results(rules.State(state.setup, state.done[: k + 1], None))[k]
    out: dict[str, Any] = {"game": records.GAME_ID, "round": k + 1, "cards": res.cards, "dealer": res.dealer,
                           "leader": res.leader, "bids": res.bids, "won": res.won, "scores": res.scores,
                           "points": dict(res.scores)}
    if res.trick_winners is not None:
        out["trick_winners"] = list(res.trick_winners)
    out["record"] = records.round_record(r, state.setup.players)
    return out


class WhistModel(TableModel):
    """Pirate Whist in the app: the session keeps the finished rounds (their rulings: ``points`` for the score
    sheet, ``record`` to rebuild them); this model runs the round in play as a :class:`WhistTable` on top of
    them. Actions are the table's events: ``{"e": "bid", "player": p, "bid": n}``, ``{"e": "reveal"}``,
    ``{"e": "counts", "won": {...}}``, ``{"e": "trick", "winner": p}``, ``{"e": "play", "player": p,
    "card": "10H"}``."""

    spec_id = records.GAME_ID

    def __init__(self, players: Any, options: Any = None) -> None:
        super().__init__(players, options)
        o = options_of(self.players, options)
        self.setup: Setup = o["setup"]
        self.mode: str = o["mode"]
        self.cut = o["cut"]
        self.round: WhistTable | None = None
        self.played = 0  # finished rounds the session holds

    @property
    def options(self) -> dict[str, Any]:
        return self.options_json()

    def options_json(self) -> dict[str, Any]:
        return {"max_cards": self.setup.max_cards, "first_dealer": self.setup.first_dealer,
                "hook": self.setup.hook, "mode": self.mode,
                "cut": [[[p, str(c)] for p, c in draws] for draws in self.cut]}

    # ---- rounds
    def _table(self, history: Any) -> WhistTable:
        recs = []
        for i, h in enumerate(history):
            if not isinstance(h, dict) or not isinstance(h.get("record"), dict):
                raise RecordError(f"history[{i}]: not a Pirate Whist round")
            recs.append(h["record"])
        try:
            base = records.rounds_of(self.setup, recs)
        except RecordError as exc:
            raise RecordError(f"history: {exc}") from None
        return WhistTable(self.setup, mode=self.mode, cut=self.cut, base=base)

    def new_round(self, start: RoundStart) -> None:
        if len(start.history) >= self.setup.n_rounds:
            raise IllegalActionError("the game is over: every round of the plan has been played")
        self.round = self._table(start.history)
        self.played = len(start.history)

    def sheet_table(self, history: Any) -> WhistTable:
        """A table of the finished rounds (and the round in play), for the score sheet, CSV, plot and end."""
        if self.round is not None:
            return self.round
        return self._table(history)

    def round_over(self) -> bool:
        t = self.round
        return t is not None and len(t.state.done) > t.base_rounds

    def rule_round(self) -> dict[str, Any]:
        if not self.round_over():
            raise IllegalActionError("the round is not over")
        assert self.round is not None
        return round_ruling(self.round.state, self.round.base_rounds)

    def round_committed(self, ruling: dict[str, Any]) -> None:
        self.played += 1

    def game_over(self, history: Any) -> bool:
        return len(history) >= self.setup.n_rounds

    def apply(self, action: Any) -> None:
        t = self.round
        if t is None:
            raise IllegalActionError("no round in play")
        if self.round_over():
            raise IllegalActionError("the round is over: go on to the next round")
        if not isinstance(action, dict):
            raise IllegalActionError(f"not a Pirate Whist action: {action!r}")
        kind = action.get("e")
        if kind == "bid":
            t.submit_bid(action.get("player"), action.get("bid"))
        elif kind == "reveal":
            t.reveal()
        elif kind == "counts":
            won = action.get("won")
            if not isinstance(won, dict):
                raise IllegalActionError("counts: expected tricks won per player")
            t.enter_counts(won)
        elif kind == "trick":
            t.take_trick(action.get("winner"))
        elif kind == "play":
            t.play_card(action.get("player"), action.get("card"))
        else:
            raise IllegalActionError(f"not a Pirate Whist action: {kind!r}")

    def undo(self) -> Any:
        t = self.round
        if t is None or not t.can_undo():
            raise IllegalActionError("nothing to undo in this round")
        last = t.events[-1]
        t.undo()
        return last

    def can_undo(self) -> bool:
        return self.round is not None and self.round.can_undo()

    @property
    def moves(self) -> list[Any]:
        return self.round.events if self.round is not None else []

    @property
    def phase(self) -> str:
        if self.round is None:
            return ""
        return "over" if self.round_over() else self.round.phase

    def edit(self, history: Any, index: int, bids: dict[str, int], won: dict[str, int]) -> dict[str, Any]:
        """The corrected ruling of finished round ``index`` (0-based), ruled through the rules (IllegalActionError
        and nothing changed when it is not legal); the caller gives it to ``session.edit_round``, then calls
        ``history_changed``."""
        t = self._table(history)
        t.edit_round(index + 1, bids, won)
        return round_ruling(t.state, index)

    def history_changed(self, history: Any) -> None:
        """The session's history was edited: rebuild the round in play on top of it (same steps)."""
        if self.round is not None:
            events = self.round.events
            t = self._table(history)
            t.replay(events)
            self.round = t

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise IllegalActionError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        if self.round is not None:
            self.round.set_mode(mode)

    # ---- the app
    def screen(self) -> str:
        if self.round is None:
            return "whist_end" if self.played >= self.setup.n_rounds else "whist_sheet"
        ph = self.phase
        return {"bid": "whist_bids", "reveal": "whist_reveal", "dealer-bid": "whist_reveal"}.get(ph, "whist_play")

    def describe(self, action: Any) -> str:
        """The status line after an action; a bid's value never (it is secret until the reveal)."""
        if not isinstance(action, dict):
            return ""
        kind = action.get("e")
        if kind == "bid":
            if self.round is not None and self.round.phase in ("play",) and self.setup.hook:
                return f"{action.get('player')} (dealer) bids {action.get('bid')} in the open."
            return f"{action.get('player')}'s bid (kept secret)."
        if kind == "reveal":
            return "The bids are revealed."
        if kind == "counts":
            return "Tricks counted."
        if kind == "trick":
            return f"Trick to {action.get('winner')}."
        if kind == "play":
            return f"{action.get('player')} plays {action.get('card')}."
        return ""

    def round_intro(self, number: int) -> str:
        k = number - 1
        if not 0 <= k < self.setup.n_rounds:
            return f"Round {number}."
        c = self.setup.cards(k)
        return (f"Round {number} of {self.setup.n_rounds}: {c} card{'s' if c != 1 else ''}, "
                f"{self.setup.dealer(k)} deals, {self.setup.leader(k)} leads.")

    def history_line(self, ruling: dict[str, Any]) -> str:
        try:
            parts = [f"{p} {ruling['bids'][p]}/{ruling['won'][p]} {ruling['scores'][p]:+d}" for p in self.players]
            return (f"#{ruling['round']}: {ruling['cards']} card{'s' if ruling['cards'] != 1 else ''}, "
                    f"{ruling['dealer']} dealt.  " + ", ".join(parts))
        except (KeyError, TypeError):
            return super().history_line(ruling)

    # ---- resume
    def round_json(self) -> dict[str, Any] | None:
        # The secret bids of an unrevealed round are in here: the saved file is the tablet's own, never shown.
        return None if self.round is None else {"events": self.round.events}

    def load_round(self, data: Any, start: RoundStart) -> None:
        self.played = len(start.history)
        if data is None:
            self.round = None
            return
        if not isinstance(data, dict):
            raise RecordError("session.table.round: expected an object")
        t = self._table(start.history)
        t.replay(data.get("events"))
        self.round = t
