"""Simulated Pirate Whist players for demo mode, examples and tests: they deal, bid by counting their strong
cards and play legal cards through the rules (never around them). Deterministic for a given seed."""

from __future__ import annotations

import random
from typing import Iterator

from companion.decks.standard52 import StdCard, full_deck
from companion.games.pirate_whist import rules
from companion.games.pirate_whist.rules import Action, Bid, Counts, Deal, PlayCard, Setup, State


def deal(setup: Setup, k: int, rng: random.Random) -> dict[str, tuple[StdCard, ...]]:
    """Shuffle and deal round ``k``: one card at a time clockwise from the dealer's left."""
    deck = list(full_deck())
    rng.shuffle(deck)
    n = setup.cards(k)
    order = setup.clockwise_from(setup.leader(k))
    hands: dict[str, list[StdCard]] = {p: [] for p in setup.players}
    for i in range(n * len(order)):
        hands[order[i % len(order)]].append(deck[i])
    return {p: tuple(hands[p]) for p in setup.players}


def guess_bid(hand: tuple[StdCard, ...], n_players: int) -> int:
    """A simple bid: spades from jack up, other aces, kings at a small table, long spade suits."""
    strong = sum(1 for c in hand if (c.suit == rules.TRUMP and c.rank >= 11) or c.rank == 14
                 or (c.rank == 13 and n_players <= 4))
    spades = sum(1 for c in hand if c.suit == rules.TRUMP)
    if spades >= 3:
        strong += 1
    if n_players >= 6 and strong:
        strong -= 1
    return max(0, min(len(hand), strong))


def choose_card(state: State, rng: random.Random) -> PlayCard:
    """A legal card: win cheaply when still short of the bid, otherwise throw the lowest."""
    acts = [a for a in rules.legal_actions(state) if isinstance(a, PlayCard)]
    r = state.round
    assert r is not None and acts
    p = acts[0].player
    need = r.bid_map[p] - r.won().get(p, 0)

    def strength(a: PlayCard) -> tuple[int, int]:
        return (1 if a.card.suit == rules.TRUMP else 0, a.card.rank)

    acts.sort(key=strength)
    if need > 0:
        if r.current:
            winners = [a for a in acts if rules.trick_winner(list(r.current) + [(a.player, a.card)]) == p]
            if winners:
                return winners[0]
            return acts[0]
        return acts[-1] if rng.random() < 0.7 else rng.choice(acts)
    return acts[0]


def round_actions(state: State, rng: random.Random, style: str = "cards") -> Iterator[Action]:
    """Actions that play the current round: ``"cards"`` deals the hands and plays every card,
    ``"tricks"`` plays every card without telling the rules the hands, ``"counts"`` plays it out
    privately and gives only the counts."""
    r = state.round
    assert r is not None
    setup = state.setup
    hands = deal(setup, r.index, rng)
    bids = {p: guess_bid(hands[p], len(setup.players)) for p in setup.players}
    s = state
    acts: list[Action] = []

    def push(a: Action) -> None:
        nonlocal s
        s = rules.apply(s, a)
        acts.append(a)

    for p in setup.clockwise_from(r.leader):
        b = bids[p]
        forbidden = rules.hook_forbidden(s)
        if forbidden is not None and b == forbidden:
            b = b + 1 if b < r.cards else b - 1
        push(Bid(p, b))
    shadow = rules.apply(s, Deal.of(hands))  # the true hands, for choosing cards
    if style == "cards":
        push(Deal.of(hands))
    while s.round is not None and s.round.index == r.index:
        a = choose_card(shadow, rng)
        shadow = rules.apply(shadow, a)
        if style == "counts":
            if shadow.round is None or shadow.round.index != r.index:
                won = shadow.done[-1].won()
                push(Counts.of({p: won.get(p, 0) for p in setup.players}))
            continue
        push(a)
    yield from acts


def play_game(setup: Setup, seed: int = 0, styles: tuple[str, ...] = ("cards",),
              rounds: int | None = None) -> rules.WhistGame:
    """A whole game (or its first ``rounds`` rounds), round k in ``styles[k % len(styles)]``."""
    rng = random.Random(seed)
    g = rules.WhistGame(setup)
    while not g.state.over and (rounds is None or len(g.state.done) < rounds):
        style = styles[len(g.state.done) % len(styles)]
        for a in list(round_actions(g.state, rng, style)):
            g.apply(a)
    return g
