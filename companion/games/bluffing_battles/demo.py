"""Whole games for demo mode and the example records: shuffled piles, a simple strategy, every reshuffle.

Deterministic for a seed (``random.Random(seed)``), so a demo or an example can be replayed exactly.
"""

from __future__ import annotations

import random
from typing import Any, Optional, Sequence

from companion.games.bluffing_battles import rules
from companion.games.bluffing_battles.rules import RESHUFFLE, Play, Reshuffle, State


def deal(variant: str, rng: random.Random, red_first: bool = True) -> tuple[tuple, tuple]:
    """Shuffled draw piles (top first) for the variant; in one-deck games the first player gets the red half
    when ``red_first``."""
    a, b = (list(s) for s in rules.shares(variant))
    if not red_first:
        a, b = b, a
    rng.shuffle(a)
    rng.shuffle(b)
    return tuple(a), tuple(b)


def choose(s: State, p: int, rng: random.Random, style: str = "mixed") -> Any:
    """A reveal for player p: 'random', 'high' (play the best card), or 'mixed' (mostly random, sometimes
    matching the opponent's best card to force a battle)."""
    hand = [c for c in s.hands[p]]
    if style == "high":
        return max(hand, key=lambda c: c.rank)
    if style == "mixed" and rng.random() < 0.25:
        theirs = {c.rank for c in s.hands[1 - p]}
        same = [c for c in hand if c.rank in theirs]
        if same:
            return rng.choice(same)
    return rng.choice(hand)


def play_game(variant: str, seed: int, players: Sequence[str] = ("Ann", "Ben"), max_plays: int = 5000,
              style: str = "mixed", red_first: Optional[bool] = None) -> tuple[dict[str, Any], list[State]]:
    """A whole game as a record (the contract's shape) and every state it passed through."""
    rng = random.Random(seed)
    if red_first is None:
        red_first = rng.random() < 0.5
    piles = deal(variant, rng, red_first)
    s = rules.new_game(players, variant, piles)
    states = [s]
    plays: list[list[str]] = []
    orders: tuple[list, list] = ([], [])
    while not s.over and len(plays) < max_plays:
        if s.phase == RESHUFFLE:
            p = rules.needs_reshuffle(s)[0]
            order = list(s.scores[p])
            rng.shuffle(order)
            orders[p].append([str(c) for c in order])
            s = rules.apply(s, Reshuffle(p, tuple(order)))
        else:
            a, b = choose(s, 0, rng, style), choose(s, 1, rng, style)
            plays.append([str(a), str(b)])
            s = rules.apply(s, Play((a, b)))
        states.append(s)
    record: dict[str, Any] = {
        "game": "bluffing-battles",
        "variant": variant,
        "players": list(players),
        "piles": {players[0]: [str(c) for c in piles[0]], players[1]: [str(c) for c in piles[1]]},
        "plays": plays,
    }
    if rules.VARIANTS[variant].until_all:
        record["reshuffles"] = {players[0]: orders[0], players[1]: orders[1]}
    return record, states


def table_inputs(record: dict[str, Any]) -> list[list[Any]]:
    """A record's plays and reshuffles as the table's inputs, in order: ["reveal", player, card] taps and
    ["reshuffle", player, order] confirmations (what demo mode feeds the table, one by one)."""
    players = record["players"]
    piles = [tuple(rules.StdCard.parse(c) for c in record["piles"][p]) for p in players]
    s = rules.new_game(players, record["variant"], piles)
    orders = {p: list((record.get("reshuffles") or {}).get(p, [])) for p in players}
    out: list[list[Any]] = []

    def reshuffles(s: State) -> State:
        while s.phase == RESHUFFLE and orders[players[rules.needs_reshuffle(s)[0]]]:
            p = rules.needs_reshuffle(s)[0]
            order = orders[players[p]].pop(0)
            out.append(["reshuffle", players[p], order])
            s = rules.apply(s, Reshuffle(p, tuple(rules.StdCard.parse(c) for c in order)))
        return s

    for a, b in record["plays"]:
        s = reshuffles(s)
        out.append(["reveal", players[0], a])
        out.append(["reveal", players[1], b])
        s = rules.apply(s, Play((rules.StdCard.parse(a), rules.StdCard.parse(b))))
    reshuffles(s)
    return out


# ------------------------------------------------------------------------------------------------ demo mode

PLAYERS = ["Ann", "Ben"]
# a seeded game of each variant (the app shuffles the piles and every reshuffle itself); chosen so that each
# shows what its variant is about in about a minute in all: battles, short piles, reshuffles, the limit loss
DEMO_GAMES = (("two-decks", 11), ("one-deck", 0), ("two-decks-until-all", 34), ("one-deck-until-all", 49))


def demo_turn(table, rng: random.Random) -> Any:
    """The next input of a demo game: ``("reshuffle", None)`` or ``("reveal", player, card)`` pairs."""
    s = table.state
    if s.phase == RESHUFFLE:
        return [("reshuffle", None)]
    return [("reveal", i, choose(s, i, rng)) for i in (0, 1)]


def steps(app, shot):
    """Demo mode (GameSpec.demo): a whole game of each variant through the app's screens and intents, one
    fight per step, with screenshots of the set-up, a fight, a battle, a reshuffle prompt, each game's end and
    the history."""
    seen: set[str] = set()
    due: list[str] = []  # a screenshot is taken one step later, once the screen has been drawn
    out: list = []

    def once(name):
        if name not in seen:
            seen.add(name)
            due.append(name)

    def show_setup():
        app.go("battles_setup")
        scr = app.screens["battles_setup"]
        scr.setup(PLAYERS)
        scr.pick_variant("two-decks")

    def start(variant, seed):
        def f():
            app.new_session(players=PLAYERS, game="bluffing-battles",
                            options={"variant": variant, "red": 0, "seed": seed})
            f.rng = random.Random(seed)
        return f

    def play(starter):
        def f():
            if due:
                shot(due.pop(0))()
                return True
            fight = app.screens["battles_fight"]
            t = app.session.model.round
            if t.over:
                if f"battles-over-{t.variant.id}" not in seen:
                    once(f"battles-over-{t.variant.id}")
                    return True
                return None
            turn = f.turn or demo_turn(t, starter.rng)
            f.turn = None
            if turn[0][0] == "reshuffle":
                if "battles-reshuffle" not in seen:
                    once("battles-reshuffle")  # the prompt, before it is confirmed
                    return True
                fight.reshuffle()
                return True
            if t.pending[turn[0][1]] is None:
                fight.tap_card(turn[0][1], turn[0][2])
                if "battles-fight" not in seen:
                    once("battles-fight")  # one card in, waiting for the other
                    f.turn = turn
                    return True
            fight.tap_card(turn[1][1], turn[1][2])
            if app.session.model.round.state.in_battle:
                once("battles-battle")
            return True
        f.turn = None
        return f

    out += [show_setup, lambda: None, shot("battles-setup")]
    for variant, seed in DEMO_GAMES:
        starter = start(variant, seed)
        out += [starter, play(starter)]
    out += [lambda: app.go("battles_history"), lambda: None, shot("battles-history")]
    return out
