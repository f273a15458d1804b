"""Property tests: random legal hands of 3-8 players never create or destroy a coin, and undo is exact."""

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.decks.pirates72 import NATURAL_RANKS, full_deck
from companion.errors import IllegalActionError
from companion.games.pirates_bluff import (
    POT,
    Bid,
    Call,
    Countdown,
    Options,
    PiratesBluffHand,
    RevealStarting,
    Showdown,
)


def total(hand):
    return sum(hand.stacks.values()) + hand.pot


def deal(rng, players, size):
    deck = list(full_deck())
    rng.shuffle(deck)
    return {p: deck[i * size:(i + 1) * size] for i, p in enumerate(players)}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_hands_conserve_coins_and_undo_is_exact(data):
    n = data.draw(st.integers(3, 8), label="players")
    players = [f"P{i}" for i in range(n)]
    stacks = {p: data.draw(st.integers(0, 60), label=f"stack {p}") for p in players}
    opts = Options(
        super_wilds=data.draw(st.booleans(), label="super_wilds"),
        window_ms=data.draw(st.sampled_from([0, 10, 50]), label="window"),
        ante=data.draw(st.integers(0, 3), label="ante"),
    )
    carry = data.draw(st.integers(0, 7), label="carry")
    hand = PiratesBluffHand(players, stacks, carry, opts)
    coins = total(hand)
    assert coins == sum(stacks.values()) + carry
    rng = random.Random(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    hands = deal(rng, players, hand.hand_size)
    hand.apply(RevealStarting.of({p: cs[0] for p, cs in hands.items()}))
    t = 0.0
    for _ in range(data.draw(st.integers(0, 25), label="steps")):
        if hand.phase == "over":
            break
        t += data.draw(st.sampled_from([0, 1, 5, 9, 10, 11, 300]), label="dt")
        p = data.draw(st.sampled_from(players), label="actor")
        kind = data.draw(st.sampled_from(["bid", "bid", "same", "call", "start", "dead", "bad"]), label="kind")
        if kind == "bid":
            legal = hand.legal_bids(p, up_to=hand.max_quantity + 2)
            a = Bid(p, *data.draw(st.sampled_from(legal)), t) if legal else Call(p, t)
        elif kind == "same" and hand.standing_bid:
            a = Bid(p, *hand.standing_bid, t)
        elif kind == "call":
            a = Call(p, t)
        elif kind in ("start", "dead"):
            a = Countdown(p, t, kind == "dead")
        else:
            a = Bid(p, data.draw(st.integers(-2, 20)), data.draw(st.integers(-1, 9)), t)
        before = hand.snapshot()
        stacks_before, pot_before = hand.stacks, hand.pot
        try:
            hand.apply(a)
        except IllegalActionError:
            assert hand.snapshot() == before  # an illegal action changes nothing
            continue
        assert total(hand) == coins
        hand.undo()
        assert hand.snapshot() == before and hand.stacks == stacks_before and hand.pot == pot_before
        hand.apply(a)
    if hand.phase == "called":
        if data.draw(st.booleans(), label="full hands"):
            sd = Showdown.of_hands(hands)
        else:
            rank = hand.standing_bid[1]
            sd = Showdown.of_hands(hands)
            # the same showdown by counts must give the same ruling
            by_counts = Showdown.of_counts({p: (sum(c.rank == rank for c in cs), sum(c.rank == 0 for c in cs))
                                            for p, cs in hands.items()})
            hand.apply(by_counts)
            via_counts = hand.stacks, hand.pot
            hand.undo()
            hand.apply(sd)
            assert (hand.stacks, hand.pot) == via_counts
            hand.undo()
        before = hand.snapshot()
        hand.apply(sd)
        o = hand.outcome
        assert set(o.winners).isdisjoint(o.losers)
        assert o.bid_holds == (o.count >= o.quantity)
        hand.undo()
        assert hand.snapshot() == before
        hand.apply(sd)
    assert total(hand) == coins
    for e in hand.entries:
        assert sum(v for _, v in e.postings) == 0
    # the pot never goes negative and odd coins left in it are fewer than the winners
    assert hand.pot >= 0
    if hand.outcome:
        assert hand.pot < len(hand.outcome.winners)
    # everyone's money moves only through entries
    moved = {p: 0 for p in players}
    for e in hand.entries:
        for acct, v in e.postings:
            if acct != POT:
                moved[acct] += v
    assert {p: stacks[p] + moved[p] for p in players} == hand.stacks


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 8), st.sampled_from(NATURAL_RANKS), st.booleans(), st.integers(0, 2**32 - 1))
def test_count_matches_a_direct_reading_of_the_rules(n, rank, super_wilds, seed):
    players = [f"P{i}" for i in range(n)]
    hand = PiratesBluffHand(players, options=Options(super_wilds=super_wilds))
    hands = deal(random.Random(seed), players, hand.hand_size)
    hand.apply(RevealStarting.of({p: cs[0] for p, cs in hands.items()}))
    first = hand.first_bidder
    assert hands[first][0] == min(cs[0] for cs in hands.values())
    hand.apply(Bid(first, 1, rank, 0))
    caller = next(p for p in players if p != first)
    hand.apply(Call(caller, 1))
    hand.apply(Showdown.of_hands(hands))
    expected = 0
    for cs in hands.values():
        naturals = [c for c in cs if c.rank == rank]
        wilds = [c for c in cs if c.rank == 0]
        if naturals:
            expected += len(naturals) + len(wilds) * (len(naturals) if super_wilds else 1)
    assert hand.outcome.count == expected
