"""The table model of Bluffing Battles for the app (no Kivy): what the screens show and the inputs they send.

Every input goes through one door, :meth:`BattleTable.reveal` (``player``, ``card``): a tap on the card picker
and, later, the camera's read of a revealed card both call it. When both players' cards of a fight are in, the
model rules the fight through :mod:`rules` (one truth) and says in words what happened: who won the fight, or
that a battle starts and how many hidden prizes each puts up, and after a battle who took how many cards. A
needed reshuffle (until-all variants) is a prompt that :meth:`reshuffle` confirms; the limit loss and the game
end are explained in words. :meth:`undo` takes back the last input exactly; :meth:`to_json` /
:meth:`from_json` save and resume (the inputs are replayed through the rules).

At a real table the app does not know the order of the shuffled draw piles: their cards are unknown (``None``
in :mod:`rules`) until revealed. The model still refuses a card that cannot be in that player's hand: a card
of the other colour in the one-deck variants, a card that player already revealed, a card already out of
play (in a score pile or the battle). It keeps, per player, the faces that may still be behind that player's
unknown cards. When the piles are known (demo mode, tests) the rules check the hands exactly.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

from companion.decks.standard52 import StdCard
from companion.errors import CardError, IllegalActionError, PirateTableError, RecordError
from companion.games.bluffing_battles import rules
from companion.games.bluffing_battles.rules import OVER, RESHUFFLE, REVEAL, Play, Reshuffle, State
from companion.games.registry import TableModel

FORMAT = "bluffing-battles-table/1"


@dataclass(frozen=True)
class Event:
    """What the last input did: ``kind`` is one of waiting, fight, battle, battle-won, battle-void, reshuffle,
    reshuffled, over; ``text`` says it in words."""

    kind: str
    text: str


@dataclass(frozen=True)
class _Snap:
    state: State
    pending: tuple[Optional[StdCard], Optional[StdCard]]
    pools: tuple[tuple[tuple[StdCard, int], ...], tuple[tuple[StdCard, int], ...]]
    open: tuple[bool, bool]
    event: Event


@dataclass(frozen=True)
class FightLine:
    number: int
    reveals: tuple[tuple[str, str], ...]
    winner: Optional[str]
    cards_won: int
    prizes: tuple[tuple[int, int], ...]
    text: str


class BattleTable:
    """One game at the table. ``players`` in the order shown (the first is shown first, left/top);
    ``red``: in the one-deck variants, the index of the player holding the red half. ``piles`` (top first),
    when known (demo mode), lets the rules check every hand exactly."""

    def __init__(self, players: Sequence[str], variant: str, red: int = 0,
                 piles: Optional[Sequence[Sequence[Any]]] = None, seed: Optional[int] = None):
        names = [_name(p, f"players[{i}]") for i, p in enumerate(players)] if isinstance(players, (list, tuple)) \
            else []
        if len(names) != 2:
            raise IllegalActionError("Bluffing Battles is for exactly two players")
        if names[0] == names[1]:
            raise IllegalActionError("the two players need different names")
        if variant not in rules.VARIANTS:
            raise IllegalActionError(f"unknown variant {variant!r} (known: {', '.join(rules.VARIANTS)})")
        if isinstance(red, bool) or red not in (0, 1):
            raise IllegalActionError("red: 0 (the first player holds the red half) or 1")
        self.players: tuple[str, str] = (names[0], names[1])
        self.variant = rules.VARIANTS[variant]
        self.red = red
        self.known_piles: Optional[tuple[tuple[StdCard, ...], tuple[StdCard, ...]]] = None
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
            raise IllegalActionError(f"seed: a whole number 0 <= seed < 2**63, got {seed!r}")
        self.seed = seed
        if seed is not None:  # demo mode: the app shuffles the piles itself (and every reshuffle)
            from companion.games.bluffing_battles.demo import deal

            piles = deal(variant, random.Random(seed), red_first=red == 0)
        if piles is not None:
            self.known_piles = (tuple(_card(c) for c in piles[0]), tuple(_card(c) for c in piles[1]))
        state = rules.new_game(self.players, self.variant, self.known_piles)
        share = rules.shares(self.variant)
        if self.variant.decks == 1 and red == 1:
            share = (share[1], share[0])
        self._inputs: list[list[Any]] = []
        self._snaps: list[_Snap] = [_Snap(
            state, (None, None), (_freeze(Counter(share[0])), _freeze(Counter(share[1]))), (False, False),
            Event("start", f"{self.players[0]} and {self.players[1]}: each takes the top three cards of their "
                           f"draw pile as a face-up hand. {self.variant.summary}"))]

    # ---------------------------------------------------------------- views
    @property
    def state(self) -> State:
        return self._snaps[-1].state

    @property
    def event(self) -> Event:
        return self._snaps[-1].event

    @property
    def pending(self) -> tuple[Optional[StdCard], Optional[StdCard]]:
        return self._snaps[-1].pending

    @property
    def over(self) -> bool:
        return self.state.phase == OVER

    @property
    def phase(self) -> str:
        return self.state.phase

    @property
    def limit(self) -> Optional[int]:
        return self.variant.limit

    def index(self, player: Union[int, str]) -> int:
        if isinstance(player, bool):
            raise IllegalActionError(f"no player {player!r}")
        if isinstance(player, int) and player in (0, 1):
            return player
        if isinstance(player, str) and player in self.players:
            return self.players.index(player)
        raise IllegalActionError(f"no player {player!r} (players: {', '.join(self.players)})")

    def counts(self) -> dict[str, Any]:
        """Always-visible counts: draw piles, score piles, hands, the battle pot, the limit."""
        s = self.state
        return {
            "draw": (len(s.piles[0]), len(s.piles[1])),
            "score": s.score(),
            "hand": (len(s.hands[0]), len(s.hands[1])),
            "pot": s.pot_size(),
            "limit": self.variant.limit,
            "reshuffles": s.reshuffles,
        }

    def hand(self, player: Union[int, str]) -> list[Optional[StdCard]]:
        """The cards in hand as far as known (None: not known at this table)."""
        return list(self.state.hands[self.index(player)])

    def prompt(self) -> str:
        """What the table must do now, in words."""
        s = self.state
        if s.phase == OVER:
            return s.reason
        if s.phase == RESHUFFLE:
            p = rules.needs_reshuffle(s)[0]
            return (f"{self.players[p]}'s draw pile is empty: shuffle the score pile ({len(s.scores[p])} cards), "
                    f"turn it face down as the new draw pile, then confirm.")
        waiting = [self.players[p] for p in (0, 1) if self.pending[p] is None]
        what = "the battle's next card" if s.in_battle else "a card"
        return f"Reveal {what}: {' and '.join(waiting)}."

    def result(self) -> str:
        """The game's result in one short line ("" while it goes on)."""
        s = self.state
        if not s.over:
            return ""
        a, b = s.score()
        if s.winner == "tie":
            return f"Game over: a tie, {a} cards each." if a == b else f"Game over: a tie ({a} to {b} cards)."
        w = s.winner
        return f"Game over: {self.players[w]} wins, {s.score()[w]} cards to {s.score()[1 - w]}."

    def needs_reshuffle(self) -> Optional[str]:
        s = self.state
        return self.players[rules.needs_reshuffle(s)[0]] if s.phase == RESHUFFLE else None

    def history(self) -> list[FightLine]:
        """Every fight and battle so far, the one in progress last (winner None)."""
        s = self.state
        fights = list(s.fights)
        if s.battle:
            fights.append(rules.Fight(s.battle, None, 0, s.battle_prizes))
        out = []
        for i, f in enumerate(fights, 1):
            reveals = tuple((str(a), str(b)) for a, b in f.reveals)
            prizes = tuple((f.prizes[k], f.prizes[k + 1]) for k in range(0, len(f.prizes), 2))
            shown = ", ".join(f"{a}–{b}" if a[:-1] != b[:-1] else f"{a}={b}" for a, b in reveals)
            if f.winner is not None:
                kind = "battle" if len(reveals) > 1 else "fight"
                tail = f"{self.players[f.winner]} takes {f.cards_won} ({kind})"
            elif i == len(fights) and s.battle:
                tail = "battle in progress"
            elif s.variant.until_all:
                tail = "battle cut short by the limit loss: nobody wins it"
            else:
                tail = "no card left to reveal: each takes back their own cards"
            out.append(FightLine(i, reveals, None if f.winner is None else self.players[f.winner], f.cards_won,
                                 prizes, f"{i}. {shown}: {tail}"))
        return out

    # ---------------------------------------------------------------- inputs
    def reveal(self, player: Union[int, str], card: Any) -> Event:
        """The one door for revealed cards (taps and camera): player ``player`` revealed ``card``.
        Refused with IllegalActionError (nothing changes) when it cannot be so."""
        p = self.index(player)
        try:
            c = _card(card)
        except CardError as exc:
            raise IllegalActionError(str(exc)) from None
        snap = self._snaps[-1]
        s = snap.state
        if s.phase == OVER:
            raise IllegalActionError(f"the game is over: {s.reason}")
        if s.phase == RESHUFFLE:
            raise IllegalActionError(self.prompt())
        if snap.pending[p] is not None:
            raise IllegalActionError(f"{self.players[p]} already revealed {snap.pending[p]} in this fight; "
                                     f"undo to change it")
        pools = [Counter(dict(snap.pools[0])), Counter(dict(snap.pools[1]))]
        self._check_card(snap, p, c, pools)
        pending = (c, snap.pending[1]) if p == 0 else (snap.pending[0], c)
        if None in pending:
            ev = Event("waiting", f"{self.players[p]} reveals {c}. Waiting for "
                                  f"{self.players[1 - p]}'s card.")
            self._push(["reveal", self.players[p], str(c)], _Snap(s, pending, (_freeze(pools[0]),
                                                                               _freeze(pools[1])), snap.open, ev))
            return ev
        new = rules.apply(s, Play((pending[0], pending[1])))  # type: ignore[arg-type]
        ev = self._describe(s, new)
        self._push(["reveal", self.players[p], str(c)],
                   _Snap(new, (None, None), (_freeze(pools[0]), _freeze(pools[1])), snap.open, ev))
        return ev

    def reshuffle(self, player: Union[int, str, None] = None, order: Optional[Sequence[Any]] = None) -> Event:
        """Confirm that ``player`` (default: whoever must) shuffled the score pile into a new draw pile.
        ``order`` (top first) when known (demo mode)."""
        snap = self._snaps[-1]
        s = snap.state
        if s.phase != RESHUFFLE:
            raise IllegalActionError("no reshuffle is needed now")
        p = rules.needs_reshuffle(s)[0] if player is None else self.index(player)
        known_order = None if order is None else tuple(_card(c) for c in order)
        if known_order is None and self.seed is not None:  # demo mode shuffles for the table
            shuffled = list(s.scores[p])
            random.Random(f"{self.seed}/{p}/{s.reshuffles[p]}").shuffle(shuffled)
            known_order = tuple(shuffled)
        if known_order is None and self.known_piles is not None:
            raise IllegalActionError("this game knows every card: give the reshuffled order")
        new = rules.apply(s, Reshuffle(p, known_order))
        pools = [Counter(dict(snap.pools[0])), Counter(dict(snap.pools[1]))]
        opened = list(snap.open)
        if known_order is None:
            pools[p] += Counter(c for c in s.scores[p] if c is not None)
            opened[p] = opened[p] or None in s.scores[p]
        text = (f"{self.players[p]} shuffled {len(s.scores[p])} cards into a new draw pile.")
        if new.phase == OVER:
            ev = Event("over", f"{text} {new.reason}")
        elif new.phase == RESHUFFLE:
            ev = Event("reshuffle", f"{text} {self._prompt_of(new)}")
        else:
            ev = Event("reshuffled", f"{text} {self._after_steps(s, new)}".strip())
        self._push(["reshuffle", self.players[p]] + ([] if known_order is None else [[str(c) for c in known_order]]),
                   _Snap(new, snap.pending, (_freeze(pools[0]), _freeze(pools[1])), (opened[0], opened[1]), ev))
        return ev

    def undo(self) -> Event:
        """Take back the last input (a revealed card or a reshuffle) exactly."""
        if len(self._snaps) == 1:
            raise IllegalActionError("nothing to undo")
        self._snaps.pop()
        last = self._inputs.pop()
        what = f"{last[1]}'s {last[2]}" if last[0] == "reveal" else f"{last[1]}'s reshuffle"
        return Event("undo", f"Undone: {what}. {self.prompt()}")

    @property
    def can_undo(self) -> bool:
        return len(self._snaps) > 1

    @property
    def inputs(self) -> list[list[Any]]:
        return list(self._inputs)

    def playable(self, player: Union[int, str]) -> list[StdCard]:
        """The faces ``player`` could reveal now (the card picker offers only these)."""
        p = self.index(player)
        snap = self._snaps[-1]
        if snap.state.phase != REVEAL or snap.pending[p] is not None:
            return []
        out = []
        for c in rules.full_deck():
            try:
                self._check_card(snap, p, c, [Counter(dict(snap.pools[0])), Counter(dict(snap.pools[1]))])
            except IllegalActionError:
                continue
            out.append(c)
        return out

    # ---------------------------------------------------------------- save / resume
    def to_json(self) -> str:
        data = {
            "format": FORMAT,
            "players": list(self.players),
            "variant": self.variant.id,
            "red": self.red,
            "piles": None if self.known_piles is None or self.seed is not None
            else [[str(c) for c in pile] for pile in self.known_piles],
            "seed": self.seed,
            "inputs": self._inputs,
        }
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: Union[str, bytes]) -> "BattleTable":
        """Resume a saved game. A damaged or foreign file raises RecordError naming the place."""
        try:
            data = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RecordError(f"saved game: bad JSON: {exc}") from None
        if not isinstance(data, dict):
            raise RecordError("saved game: expected a JSON object")
        keys = ("format", "players", "variant", "red", "piles", "seed", "inputs")
        for k in data:
            if k not in keys:
                raise RecordError(f"saved game.{k}: unknown key")
        for k in keys:
            if k not in data:
                raise RecordError(f"saved game.{k}: missing")
        if data["format"] != FORMAT:
            raise RecordError(f"saved game.format: expected {FORMAT!r}, got {data['format']!r}")
        piles = data["piles"]
        if piles is not None and not (isinstance(piles, list) and len(piles) == 2
                                      and all(isinstance(x, list) for x in piles)):
            raise RecordError("saved game.piles: expected null or two lists of cards")
        if not isinstance(data["players"], list):
            raise RecordError("saved game.players: expected a list of two names")
        try:
            table = cls(data["players"], data["variant"], data["red"], piles, data["seed"])
        except (IllegalActionError, CardError) as exc:
            raise RecordError(f"saved game: {exc}") from None
        inputs = data["inputs"]
        if not isinstance(inputs, list):
            raise RecordError("saved game.inputs: expected a list")
        for i, inp in enumerate(inputs):
            try:
                if not isinstance(inp, list) or not inp:
                    raise IllegalActionError("expected [\"reveal\", player, card] or [\"reshuffle\", player]")
                if inp[0] == "reveal" and len(inp) == 3 and isinstance(inp[1], str):
                    table.reveal(inp[1], inp[2])
                elif inp[0] == "reshuffle" and len(inp) in (2, 3) and isinstance(inp[1], str):
                    order = inp[2] if len(inp) == 3 else None
                    if order is not None and not isinstance(order, list):
                        raise IllegalActionError("the reshuffled order is a list of cards")
                    table.reshuffle(inp[1], order)
                else:
                    raise IllegalActionError("expected [\"reveal\", player, card] or [\"reshuffle\", player]")
            except (IllegalActionError, CardError) as exc:
                raise RecordError(f"saved game.inputs[{i}]: {exc}") from None
        return table

    def record(self) -> dict[str, Any]:
        """The game as a referee record (the contract's shape), when every card is known (demo mode)."""
        if self.known_piles is None:
            raise IllegalActionError("the draw piles are not known at this table")
        plays: list[list[str]] = []
        orders: dict[str, list] = {p: [] for p in self.players}
        pend: list[Optional[str]] = [None, None]
        for inp in self._inputs:
            if inp[0] == "reveal":
                pend[self.players.index(inp[1])] = inp[2]
                if None not in pend:
                    plays.append([pend[0], pend[1]])  # type: ignore[list-item]
                    pend = [None, None]
            else:
                orders[inp[1]].append(inp[2])
        rec: dict[str, Any] = {"game": "bluffing-battles", "variant": self.variant.id, "players": list(self.players),
                               "piles": {p: [str(c) for c in pile] for p, pile in zip(self.players, self.known_piles)},
                               "plays": plays}
        if self.variant.until_all:
            rec["reshuffles"] = orders
        return rec

    # ---------------------------------------------------------------- internals
    def _push(self, inp: list[Any], snap: _Snap) -> None:
        self._inputs.append(inp)
        self._snaps.append(snap)

    def _check_card(self, snap: _Snap, p: int, c: StdCard, pools: list[Counter]) -> None:
        s = snap.state
        name = self.players[p]
        if c in s.hands[p]:
            return
        if None in s.hands[p]:
            if pools[p][c] > 0:
                pools[p][c] -= 1
                return
            if snap.open[p] and self._free(snap, c) > 0:
                return
        where = self._where(snap, c)
        if where:
            raise IllegalActionError(f"{c} is already out of play ({where}); it is not in {name}'s hand")
        hint = ""
        if self.variant.decks == 1 and not any(snap.open) and s.reshuffles[p] == 0:
            colour = "red" if (p == self.red) else "black"
            hint = f"; {name} plays the {colour} cards"
        known = [str(x) for x in s.hands[p] if x is not None]
        shown = f" (hand: {', '.join(known)})" if known and None not in s.hands[p] else ""
        raise IllegalActionError(f"{c} is not in {name}'s hand{shown}{hint}")

    def _known(self, snap: _Snap) -> dict[str, list[Any]]:
        s = snap.state
        out: dict[str, list[Any]] = {}
        for p in (0, 1):
            out[f"in {self.players[p]}'s score pile"] = list(s.scores[p])
        out["in the battle on the table"] = list(s.pot[0]) + list(s.pot[1])
        for p in (0, 1):
            if snap.pending[p] is not None:
                out[f"just revealed by {self.players[p]}"] = [snap.pending[p]]
        return out

    def _where(self, snap: _Snap, c: StdCard) -> str:
        """Where copies of this face lie out of play (score piles, the battle, the fight being entered)."""
        return "; ".join(k for k, cards in self._known(snap).items() if c in cards)

    def _free(self, snap: _Snap, c: StdCard) -> int:
        s = snap.state
        seen = sum(cards.count(c) for cards in self._known(snap).values())
        seen += sum(h.count(c) for h in s.hands) + sum(pl.count(c) for pl in s.piles)
        return rules.all_cards(self.variant)[c] - seen

    def _prompt_of(self, s: State) -> str:
        p = rules.needs_reshuffle(s)[0]
        return (f"{self.players[p]}'s draw pile is empty: shuffle the score pile ({len(s.scores[p])} cards) "
                f"into a new draw pile.")

    def _after_steps(self, before: State, new: State) -> str:
        if new.phase == RESHUFFLE:
            return self._prompt_of(new)
        if new.phase == OVER:
            return new.reason
        if new.in_battle and new.battle_prizes != before.battle_prizes:
            a, b = new.battle_prizes[-2:]
            return (f"Battle! Both draw one; hidden prizes: {self.players[0]} puts up {a}, "
                    f"{self.players[1]} puts up {b}. Reveal again.")
        return "Both draw one."

    def _describe(self, before: State, new: State) -> Event:
        n = len(before.fights)
        decided = [f for f in new.fights[n:] if f.winner is not None]
        void = [f for f in new.fights[n:] if f.winner is None]
        head = ""
        kind = "fight"
        if decided:
            f = decided[0]
            w = self.players[f.winner]  # type: ignore[index]
            x, y = f.reveals[-1]
            win_card, lose_card = (x, y) if f.winner == 0 else (y, x)
            if len(f.reveals) > 1:
                kind = "battle-won"
                head = f"{w}'s {win_card} beats {lose_card}: {w} wins the battle and takes {f.cards_won} cards."
            else:
                head = f"{w}'s {win_card} beats {lose_card}: {w} takes both cards."
        elif new.in_battle or void:
            reveals = void[0].reveals if void else new.battle
            x, y = reveals[-1]
            head = f"{x} against {y}: equal{' again' if len(reveals) > 1 else ''}, a battle!"
            kind = "battle"
        if void and not new.over:
            kind = "battle-void"
        if new.phase == OVER:
            kind = "over"
            if void and void[0].winner is None and not new.variant.until_all:
                head += " No card is left to reveal: each takes back their own cards of the battle."
            return Event(kind, f"{head} {new.reason}".strip())
        if new.phase == RESHUFFLE:
            return Event("reshuffle", f"{head} {self._prompt_of(new)}".strip())
        if kind == "battle":
            a2, b2 = new.battle_prizes[-2:]
            return Event(kind, f"{head} Both draw one; hidden prizes: {self.players[0]} puts up {a2}, "
                               f"{self.players[1]} puts up {b2}. Reveal again.")
        return Event(kind, f"{head} Both draw one.")


def _freeze(c: Counter) -> tuple[tuple[StdCard, int], ...]:
    return tuple(sorted((k, v) for k, v in c.items() if v > 0))


def _card(v: Any) -> StdCard:
    if isinstance(v, StdCard):
        return v
    return StdCard.parse(v)


def _name(v: Any, where: str) -> str:
    if not isinstance(v, str) or not v.strip() or not v.isprintable():
        raise IllegalActionError(f"{where}: a player's name is printable text, got {v!r}")
    return v.strip()


# ------------------------------------------------------------------------------------------------ the session's model


@dataclass(frozen=True)
class Reveal:
    """An input of the app: ``player`` revealed ``card`` (a tap or the camera)."""

    player: str
    card: str


@dataclass(frozen=True)
class ConfirmReshuffle:
    """An input of the app: ``player`` shuffled the score pile into a new draw pile."""

    player: Optional[str] = None


OPTION_KEYS = ("variant", "red", "seed")


def options_of(options: Any) -> dict[str, Any]:
    """``{"variant": "two-decks", "red": 0, "seed": None}``; bad options raise PirateTableError."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise PirateTableError(f"Bluffing Battles options: expected an object, got {options!r}")
    for k in options:
        if k not in OPTION_KEYS:
            raise PirateTableError(f"Bluffing Battles options: unknown option {k!r} (known: {', '.join(OPTION_KEYS)})")
    out = {"variant": options.get("variant", "two-decks"), "red": options.get("red", 0),
           "seed": options.get("seed")}
    if out["variant"] not in rules.VARIANTS:
        raise PirateTableError(f"Bluffing Battles options: unknown variant {out['variant']!r} "
                               f"(known: {', '.join(rules.VARIANTS)})")
    if isinstance(out["red"], bool) or out["red"] not in (0, 1):
        raise PirateTableError(f"Bluffing Battles options: red is 0 or 1, got {out['red']!r}")
    seed = out["seed"]
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise PirateTableError(f"Bluffing Battles options: seed is a whole number or null, got {seed!r}")
    return out


class BattlesModel(TableModel):
    """Bluffing Battles in the game-agnostic session: a round is one whole game (a :class:`BattleTable`);
    the session's score sheet counts games won (1 for the winner, 0 for a tie)."""

    spec_id = "bluffing-battles"

    def __init__(self, players: Sequence[str], options: Any = None) -> None:
        super().__init__(players, options)
        if len(self.players) != 2:
            raise PirateTableError("Bluffing Battles is for exactly two players")
        self.options = options_of(options)
        self.round: Optional[BattleTable] = None
        self._last: Any = None

    def options_json(self) -> dict[str, Any]:
        return dict(self.options)

    @property
    def variant(self) -> rules.Variant:
        return rules.VARIANTS[self.options["variant"]]

    # ---- rounds (one round = one game)
    def new_round(self, start: Any) -> None:
        seed = self.options["seed"]
        if seed is not None:
            seed = (seed + start.number - 1) % 2**63  # every game of a demo session is shuffled anew
        self.round = BattleTable(self.players, self.options["variant"], self.options["red"], seed=seed)

    def apply(self, action: Any) -> None:
        if self.round is None:
            raise IllegalActionError("no game in play")
        if isinstance(action, Reveal):
            self.round.reveal(action.player, action.card)
        elif isinstance(action, ConfirmReshuffle):
            self.round.reshuffle(action.player)
        else:
            raise IllegalActionError(f"not a Bluffing Battles input: {action!r}")
        self._last = action

    def undo(self) -> Any:
        if self.round is None or not self.round.can_undo:
            raise IllegalActionError("nothing to undo")
        last = self.round.inputs[-1]
        self.round.undo()
        self._last = None
        return Reveal(last[1], last[2]) if last[0] == "reveal" else ConfirmReshuffle(last[1])

    def can_undo(self) -> bool:
        return self.round is not None and self.round.can_undo

    @property
    def moves(self) -> list[Any]:
        if self.round is None:
            return []
        return [Reveal(i[1], i[2]) if i[0] == "reveal" else ConfirmReshuffle(i[1]) for i in self.round.inputs]

    @property
    def phase(self) -> str:
        return self.round.phase if self.round is not None else ""

    def round_over(self) -> bool:
        return self.round is not None and self.round.over

    def rule_round(self) -> dict[str, Any]:
        if not self.round_over():
            raise PirateTableError("the game is not over")
        t = self.round
        assert t is not None
        s = t.state
        w = s.winner_name()
        return {
            "game": "bluffing-battles",
            "variant": t.variant.id,
            "points": {p: int(p == w) for p in t.players},
            "score": dict(zip(t.players, s.score())),
            "winner": w,
            "reason": s.reason,
            "fights": len(s.fights),
        }

    # ---- the app
    def screen(self) -> str:
        return "battles_fight"

    def describe(self, action: Any) -> str:
        if self.round is None:
            return ""
        if action == self._last:
            return self.round.event.text
        return f"{action.player}'s {action.card}" if isinstance(action, Reveal) else f"{action.player}'s reshuffle"

    def round_intro(self, number: int) -> str:
        return f"Game {number}: {self.variant.summary}"

    def history_line(self, r: dict[str, Any]) -> str:
        score = " – ".join(f"{p} {n}" for p, n in r["score"].items())
        who = "a tie" if r["winner"] == "tie" else f"{r['winner']} wins"
        return f"Game {r.get('hand_no', '?')} ({r['variant']}): {who}, {score} after {r['fights']} fights."

    # ---- resume
    def round_json(self) -> Optional[dict[str, Any]]:
        return None if self.round is None else json.loads(self.round.to_json())

    def load_round(self, data: Optional[dict[str, Any]], start: Any) -> None:
        if data is None:
            self.round = None
            return
        try:
            self.round = BattleTable.from_json(json.dumps(data))
        except RecordError as exc:
            raise PirateTableError(str(exc)) from None
        if self.round.players != tuple(self.players):
            raise PirateTableError("saved game: its players are not the session's")
