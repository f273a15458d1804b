"""The Bluff Pirate table model: what the app drives (pure: no Kivy). The rules decide (rules.py, one truth).

The app *is* the treasure tokens: at set-up it hides the treasure on one of the two islands (``seed`` fixes the
choice in tests) and keeps it to itself until a counter first lands on an island. Secrets live only here:

- the treasure island (``_treasure``), until it is turned over;
- each voter's vote (one :class:`companion.secrets.SecretRound` per voter, so that only the vote the setter picks
  is ever revealed; the passed tablet and, later, phones both call ``submit`` on them);
- the set's hidden cards (a SecretRound of the setter), until the pick.

``public_view()``, ``history``, ``log lines`` and ``export_record()`` never hold a secret before its reveal;
``to_json()`` (the saved session, for resume) does.

A turn, as one guided flow::

    draw() -> keep() | discard(card) | lay_set(visible, hidden) -> vote(seat, v)... -> pick(voter) [-> land(i)]
    board(target)  (instead of drawing)

Every refusal is an IllegalActionError with a clear message, and changes nothing.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from companion.errors import IllegalActionError
from companion.games.bluff_pirate import rules as R
from companion.games.bluff_pirate.deck import KINDS
from companion.secrets import SecretRound

SAVE_VERSION = 1


@dataclass(frozen=True)
class Reveal:
    """What the pick revealed and what it did, for the screen's animation and words."""

    setter: str
    voter: str
    vote: str
    visible: tuple[str, ...]
    hidden: tuple[str, ...]
    bluff: bool
    outcome: str
    moves: dict[str, tuple[int, int]]   # player -> (from, to), only those who moved
    words: str


@dataclass
class PendingSet:
    setter: str
    visible: tuple[str, ...]
    hidden_count: int
    hidden: SecretRound                 # the setter's hidden cards
    votes: dict[str, SecretRound]       # voter -> their vote

    def waiting(self) -> list[str]:
        return [v for v, r in self.votes.items() if not r.complete]


def _action_json(a: R.Action) -> dict[str, Any]:
    if isinstance(a, R.Draw):
        return {"draw": True}
    if isinstance(a, R.Keep):
        return {"keep": True}
    if isinstance(a, R.Discard):
        return {"discard": a.card}
    if isinstance(a, R.Board):
        return {"board": a.target}
    if isinstance(a, R.Land):
        return {"land": a.island, "treasure": a.treasure}
    assert isinstance(a, R.LaySet)
    return {"set": {"visible": list(a.visible), "hidden": list(a.hidden)}, "voter": a.voter, "vote": a.vote}


def _action_from(d: dict[str, Any]) -> R.Action:
    if "draw" in d:
        return R.Draw()
    if "keep" in d:
        return R.Keep()
    if "discard" in d:
        return R.Discard(d["discard"])
    if "board" in d:
        return R.Board(d["board"])
    if "land" in d:
        return R.Land(d["land"], d["treasure"])
    if "set" in d:
        return R.LaySet(tuple(d["set"]["visible"]), tuple(d["set"]["hidden"]), d["voter"], d["vote"])
    raise IllegalActionError(f"saved session: unknown action {d!r}")


class BluffPirateTable:
    """One game at the table. ``seed`` fixes the treasure island (tests); None draws it from the system."""

    def __init__(self, players: list[str] | tuple[str, ...], track: int = R.DEFAULT_TRACK, seed: int | None = None,
                 cards: int = R.CARDS) -> None:
        self.options = R.Options(track=track, cards=cards, islands=True)
        self._start = R.new_game(players, self.options)   # validates players and options
        rng = random.Random(seed) if seed is not None else random.SystemRandom()
        self._treasure: int = rng.randrange(R.ISLANDS)
        self._state = self._start
        self._turns: list[list[R.Action]] = []             # completed turns
        self._current: list[R.Action] = []                 # the turn in progress
        self._lines: list[list[str]] = []                  # public history, one list per completed turn
        self._current_lines: list[str] = []
        self.pending: PendingSet | None = None
        self.last_reveal: Reveal | None = None

    def __repr__(self) -> str:  # never a secret
        return f"BluffPirateTable(players={list(self.players)!r}, turn={self._state.turn}, phase={self.step!r})"

    # ----------------------------------------------------------------------------------------- views
    @property
    def state(self) -> R.State:
        return self._state

    @property
    def players(self) -> tuple[str, ...]:
        return self._state.players

    @property
    def current(self) -> str:
        s = self._state
        return s.players[s.lander] if s.phase == "land" else s.current

    @property
    def step(self) -> str:
        """draw | choose | votes | pick | land | over (what the guided flow asks for now)."""
        s = self._state
        if s.phase == "over":
            return "over"
        if s.phase == "land":
            return "land"
        if self.pending is not None:
            return "votes" if self.pending.waiting() else "pick"
        return "draw" if s.phase == "start" else "choose"

    @property
    def phase(self) -> str:
        """The same as ``step`` (the session and the app read ``phase``)."""
        return self.step

    @property
    def history(self) -> list[str]:
        return [line for turn in self._lines for line in turn] + list(self._current_lines)

    def voters(self) -> list[str]:
        """The other players, in turn order from the setter's left."""
        s = self._state
        i = s.index(s.current)
        return [s.players[(i + k) % s.n] for k in range(1, s.n)]

    def next_voter(self) -> str | None:
        if self.pending is None:
            return None
        waiting = self.pending.waiting()
        return waiting[0] if waiting else None

    def secret_rounds(self, seat: str) -> list[SecretRound]:
        """The open secret rounds that ``seat`` answers (phones and the passed tablet submit through these)."""
        if self.pending is None:
            return []
        out = [r for r in self.pending.votes.values() if seat in r.seats and not r.complete]
        return out

    def board_options(self) -> dict[str, str | None]:
        """For "All aboard!": every other player -> None (a legal target) or why not."""
        s = self._state
        why = R.why_cannot_board(s) if s.phase == "start" else "boarding is only possible before drawing"
        if why:
            return {p: why for p in s.players if p != s.current}
        return R.board_targets(s)

    def islands_view(self) -> list[str]:
        """'unknown' | 'empty' | 'treasure' per island, as turned over so far."""
        return list(self._state.islands)

    def public_view(self) -> dict[str, Any]:
        """Everything any screen may show. No unrevealed vote, hidden card or treasure island."""
        s = self._state
        view: dict[str, Any] = {
            "game": "bluff-pirate",
            "players": list(s.players),
            "track": s.options.track,
            "positions": s.positions_map(),
            "hand_sizes": s.hands_map(),
            "pile": s.pile,
            "board": s.board,
            "reshuffles": s.reshuffles,
            "turn": s.turn + 1,
            "current": self.current,
            "step": self.step,
            "leaders": s.leaders(),
            "islands": self.islands_view(),
            "winner": s.winner,
            "drawn": s.drawn,
            "can_undo": self.can_undo,
            "history": self.history,
        }
        if self.pending is not None:
            p = self.pending
            view["set"] = {"setter": p.setter, "visible": list(p.visible), "hidden_count": p.hidden_count,
                           "size": len(p.visible) + p.hidden_count, "waiting": p.waiting(),
                           "voters": list(p.votes)}
        if s.phase == "start":
            view["board_options"] = self.board_options()
        return view

    # --------------------------------------------------------------------------------------- intents
    def _apply(self, action: R.Action) -> R.State:
        before = self._state
        after = R.apply(before, action)          # raises, nothing changed
        self._state = after
        self._current.append(action)
        return after

    def _end_turn_if_done(self) -> None:
        if self._state.phase in ("start", "over") and self._current:
            self._turns.append(self._current)
            self._lines.append(self._current_lines)
            self._current, self._current_lines = [], []

    def _say(self, line: str) -> None:
        self._current_lines.append(line)

    def draw(self) -> int:
        """Draw two (counted, card by card; an empty pile takes in the board first). Returns cards drawn."""
        self._no_pending("draw")
        before = self._state
        after = self._apply(R.Draw())
        me = before.current
        if after.reshuffles > before.reshuffles:
            self._say(f"The pile ran out: {before.board} cards from the board were shuffled into a new pile "
                      f"(reshuffle {after.reshuffles}).")
        self._say(f"{me} draws {after.drawn} (hand {after.hand(me)}, pile {after.pile}).")
        return after.drawn

    def keep(self) -> None:
        self._no_pending("keep the cards")
        me = self._state.current
        self._apply(R.Keep())
        self._say(f"{me} keeps the cards ({self._state.hand(me)} in hand).")
        self._end_turn_if_done()

    def discard(self, card: str) -> None:
        self._no_pending("discard")
        me = self._state.current
        self._apply(R.Discard(card))
        self._say(f"{me} discards a {card} ({self._state.hand(me)} in hand).")
        self._end_turn_if_done()

    def board(self, target: str) -> None:
        """"All aboard!" at ``target`` (strictly ahead); the pirate card goes to the board first."""
        self._no_pending("board a ship")
        me = self._state.current
        before = self._state.hand(target) if target in self._state.players else 0
        self._apply(R.Board(target))
        took = min(R.TAKE, before)
        self._say(f"All aboard! {me} plays a pirate and takes {took} card{'s' if took != 1 else ''} from "
                  f"{target} ({me} {self._state.hand(me)}, {target} {self._state.hand(target)}).")
        self._end_turn_if_done()

    def lay_set(self, visible: list[str] | tuple[str, ...], hidden: list[str] | tuple[str, ...]) -> None:
        """The setter lays a set: ``visible`` (1-2 of one name) face up, ``hidden`` face down (secret)."""
        self._no_pending("lay another set")
        s = self._state
        visible, hidden = tuple(visible), tuple(hidden)
        me = s.current
        probe = R.LaySet(visible, hidden, self.voters()[0], R.NOT_BLUFFING)
        why = R.why_illegal(s, probe)
        if why:
            raise IllegalActionError(why)
        hidden_round = SecretRound("hidden cards", (me,))
        hidden_round.submit(me, list(hidden))   # JSON-shaped, so a resumed session is equal
        votes = {v: SecretRound("vote", (v,), choices=R.VOTES) for v in self.voters()}
        self.pending = PendingSet(me, visible, len(hidden), hidden_round, votes)
        n = len(visible) + len(hidden)
        self._say(f"{me} lays a set of {n}: {len(visible)} {visible[0]} face up, {len(hidden)} face down.")

    def vote(self, seat: str, value: str) -> bool:
        """A secret vote. True when every voter is in (the setter may pick)."""
        p = self.pending
        if p is None:
            raise IllegalActionError("there is no set to vote on")
        if seat == p.setter:
            raise IllegalActionError(f"{seat} laid the set and does not vote")
        if seat not in p.votes:
            raise IllegalActionError(f"unknown player {seat!r} (players: {', '.join(self.players)})")
        p.votes[seat].submit(seat, value)
        return not p.waiting()

    def pick(self, voter: str) -> Reveal:
        """The setter picks ``voter``: only that vote and the hidden cards are revealed; the set is ruled."""
        p = self.pending
        if p is None:
            raise IllegalActionError("there is no set to pick a voter for")
        if voter == p.setter:
            raise IllegalActionError(f"{voter} laid the set and cannot be picked as the voter")
        if voter not in p.votes:
            raise IllegalActionError(f"unknown player {voter!r} (players: {', '.join(self.players)})")
        if p.waiting():
            raise IllegalActionError(f"still waiting for the votes of {', '.join(p.waiting())}")
        vote = p.votes[voter].reveal()[voter]
        hidden = tuple(p.hidden.reveal()[p.setter])
        action = R.LaySet(p.visible, hidden, voter, vote)
        before = self._state
        after = self._apply(action)
        self.pending = None
        moves = {q: (a, b) for q, a, b in zip(before.players, before.positions, after.positions) if a != b}
        words = _reveal_words(action, p.setter, moves)
        self.last_reveal = Reveal(p.setter, voter, vote, p.visible, hidden, action.bluff, action.outcome, moves,
                                  words)
        self._say(words)
        if after.phase == "over":
            self._say(f"{after.winner} reaches the other island and finds the treasure! {after.winner} wins.")
        elif after.phase == "land":
            self._say(f"{after.players[after.lander]} reaches the treasure islands.")
        self._end_turn_if_done()
        return self.last_reveal

    def land(self, island: int) -> bool:
        """The player who reached the islands lands on ``island`` (0 or 1); the token is turned over.
        Returns True when it held the treasure."""
        s = self._state
        if s.phase != "land":
            raise IllegalActionError("nobody is landing on an island now")
        if isinstance(island, bool) or island not in range(R.ISLANDS):
            raise IllegalActionError(f"island must be 1 or 2, got {island!r}")
        who = s.players[s.lander]
        found = island == self._treasure
        self._apply(R.Land(island, found))
        if found:
            self._say(f"{who} lands on island {island + 1} and turns the token: the treasure! {who} wins.")
        else:
            self._say(f"{who} lands on island {island + 1} and turns the token: empty! The treasure is on "
                      f"island {2 - island}; the race goes on.")
        self._end_turn_if_done()
        return found

    # ---------------------------------------------------------------------------------------- undo
    @property
    def can_undo(self) -> bool:
        return self.why_no_undo() is None

    def why_no_undo(self) -> str | None:
        turn = self._current if (self._current or self.pending) else (self._turns[-1] if self._turns else None)
        if turn is None:
            return "nothing to undo"
        if any(isinstance(a, R.Land) for a in turn):
            return "an island token was turned over in that turn; it cannot be hidden again"
        return None

    def undo(self) -> None:
        """Undo the turn in progress (back to its start) or, between turns, the last turn. Exact."""
        why = self.why_no_undo()
        if why:
            raise IllegalActionError(why)
        if self._current or self.pending is not None:
            self._current, self._current_lines, self.pending = [], [], None
        else:
            self._turns.pop()
            self._lines.pop()
        self._state = self._replay(self._turns)
        self.last_reveal = None

    def _replay(self, turns: list[list[R.Action]]) -> R.State:
        s = self._start
        for turn in turns:
            for a in turn:
                s = R.apply(s, a)
        return s

    def _no_pending(self, what: str) -> None:
        if self.pending is not None:
            raise IllegalActionError(f"cannot {what}: the set on the table is still being voted on")

    # ----------------------------------------------------------------------------------- records, save
    def export_record(self) -> dict[str, Any]:
        """The completed turns as a contract record (``pirate-table referee`` rules it). Public: only picked
        votes and revealed hidden cards appear; islands and the treasure do not."""
        turns: list[dict[str, Any]] = []
        for k, turn in enumerate(self._turns):
            entry: dict[str, Any] = {"player": self.players[k % len(self.players)]}
            for a in turn:
                if isinstance(a, (R.Board, R.Discard, R.LaySet)):
                    entry.update(_action_json(a))
            turns.append(entry)
        return {"game": "bluff-pirate", "players": list(self.players), "track": self.options.track,
                "turns": turns}

    def to_json(self) -> dict[str, Any]:
        """The saved session (for resume after a kill). Holds the secrets; never shown or exported."""
        p = self.pending
        return {
            "version": SAVE_VERSION,
            "game": "bluff-pirate",
            "players": list(self.players),
            "track": self.options.track,
            "cards": self.options.cards,
            "treasure": self._treasure,
            "turns": [[_action_json(a) for a in t] for t in self._turns],
            "current": [_action_json(a) for a in self._current],
            "lines": [list(x) for x in self._lines],          # copies: the saved dict never changes later
            "current_lines": list(self._current_lines),
            "pending": None if p is None else {
                "setter": p.setter, "visible": list(p.visible), "hidden_count": p.hidden_count,
                "hidden": p.hidden.to_json(), "votes": {v: r.to_json() for v, r in p.votes.items()}},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "BluffPirateTable":
        """Resume a saved session; IllegalActionError when it does not replay."""
        try:
            if data.get("version") != SAVE_VERSION or data.get("game") != "bluff-pirate":
                raise IllegalActionError("saved session: not a Bluff Pirate session of this version")
            t = cls(data["players"], data["track"], seed=0, cards=data["cards"])
            treasure = data["treasure"]
            if isinstance(treasure, bool) or treasure not in range(R.ISLANDS):
                raise IllegalActionError("saved session: bad treasure island")
            t._treasure = treasure
            t._turns = [[_action_from(a) for a in turn] for turn in data["turns"]]
            t._current = [_action_from(a) for a in data["current"]]
            t._state = t._replay(t._turns + [t._current])
            t._lines = [list(x) for x in data["lines"]]
            t._current_lines = list(data["current_lines"])
            p = data.get("pending")
            if p is not None:
                votes = {v: SecretRound.from_json(r) for v, r in p["votes"].items()}
                t.pending = PendingSet(p["setter"], tuple(p["visible"]), int(p["hidden_count"]),
                                       SecretRound.from_json(p["hidden"]), votes)
            return t
        except (KeyError, TypeError, AttributeError) as exc:
            raise IllegalActionError(f"saved session: malformed ({exc!r})") from None


def _reveal_words(a: R.LaySet, setter: str, moves: dict[str, tuple[int, int]]) -> str:
    shown = ", ".join(a.hidden)
    truth = f"{setter} was bluffing (hidden: {shown})" if a.bluff else f"{setter} was honest (hidden: {shown})"
    n = a.size
    if a.outcome == R.TRUSTED:
        a0, a1 = moves.get(setter, (None, None))
        tail = f"{setter} moves {a1 - a0} to square {a1}." if a0 is not None else f"{setter} sails on from the islands."
        return f"{a.voter} voted not bluffing. {truth}. Trusted: {tail}"
    if a.outcome == R.WRONGLY_ACCUSED:
        a0, a1 = moves.get(setter, (0, 0))
        v = moves.get(a.voter)
        back = f"{a.voter} goes back {v[0] - v[1]} to square {v[1]}." if v else f"{a.voter} stays on the start."
        return (f"{a.voter} voted bluffing. {truth}. Wrongly accused: {setter} moves {a1 - a0} to square {a1}; "
                f"{back}")
    v0, v1 = moves.get(a.voter, (0, 0))
    return (f"{a.voter} voted bluffing. {truth}. Caught: the {n} cards go back to {setter}'s hand; "
            f"{a.voter} moves {v1 - v0} to square {v1}.")


def demo_intent(table: BluffPirateTable, rng: random.Random) -> tuple[str, tuple[Any, ...]]:
    """The next thing a demo player does: (method name, args). Plays a whole game with random legal choices,
    biased towards sets so that a demo ends in a few dozen turns."""
    step = table.step
    s = table.state
    if step == "over":
        raise IllegalActionError("the game is over")
    if step == "land":
        free = [k for k in range(R.ISLANDS) if s.islands[k] == R.UNKNOWN]
        return "land", (rng.choice(free),)
    if step == "votes":
        return "vote", (table.next_voter(), rng.choice(R.VOTES))
    if step == "pick":
        return "pick", (rng.choice(list(table.pending.votes)),)
    if step == "draw":
        targets = [p for p, why in table.board_options().items() if why is None]
        if targets and rng.random() < 0.15:
            return "board", (rng.choice(targets),)
        return "draw", ()
    hand = s.hand(s.current)
    names = [k for k in KINDS]
    if hand >= 3 and rng.random() < 0.75:
        size = rng.choice([k for k in R.SET_SIZES if k <= hand])
        nvis = rng.choice(R.VISIBLE)
        claim = rng.choice(names)
        hidden = tuple(claim if rng.random() < 0.7 else rng.choice(names) for _ in range(size - nvis))
        return "lay_set", ((claim,) * nvis, hidden)
    if hand >= s.options.hand:
        return "discard", (rng.choice(names),)
    return "keep", ()


def play_demo_step(table: BluffPirateTable, rng: random.Random) -> str:
    name, args = demo_intent(table, rng)
    getattr(table, name)(*args)
    return name
