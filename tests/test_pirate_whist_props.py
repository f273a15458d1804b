"""Property tests for the Pirate Whist rules and referee (hypothesis): plan length, scores sum, trick
conservation, revoke detection against an independent naive checker, trick winners, exact undo, and the
record of any played game ruled back to the same totals."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.decks.standard52 import full_deck
from companion.errors import IllegalActionError, RecordError
from companion.games.pirate_whist import rules, sim
from companion.games.pirate_whist.record import rule_record, to_record
from companion.games.pirate_whist.rules import Bid, Deal, PlayCard, Setup

DECK = full_deck()
NAMES = ["Ann", "Ben", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ivy", "Jo"]


@st.composite
def setups(draw, max_cap=None):
    n = draw(st.integers(2, 10))
    limit = rules.max_cards_limit(n)
    m = draw(st.integers(1, min(limit, max_cap or limit)))
    players = tuple(NAMES[:n])
    return Setup(players, m, draw(st.sampled_from(players)), hook=draw(st.booleans()))


@given(st.integers(1, 13))
def test_plan_length_and_shape(m):
    plan = rules.round_plan(m)
    assert len(plan) == 2 * m - 1
    assert plan[0] == plan[-1] == m and min(plan) == 1 and plan == plan[::-1]
    assert all(abs(a - b) == 1 for a, b in zip(plan, plan[1:]))


@given(setups(max_cap=4), st.integers(0, 10**6),
       st.lists(st.sampled_from(["cards", "tricks", "counts"]), min_size=1, max_size=3))
@settings(max_examples=60, deadline=None)
def test_scores_sum_tricks_are_conserved_and_the_record_rules_back(setup, seed, styles):
    g = sim.play_game(setup, seed, styles=tuple(styles))
    state = g.state
    res = rules.results(state)
    assert len(res) == setup.n_rounds and state.over
    n = len(setup.players)
    for k, r in enumerate(res):
        assert r.cards == setup.plan[k]
        assert r.dealer == setup.players[(setup.players.index(setup.first_dealer) + k) % n]
        assert r.leader == setup.players[(setup.players.index(r.dealer) + 1) % n]
        assert sum(r.won.values()) == r.cards  # every trick is won by exactly one player
        assert r.scores == {p: (10 + r.won[p] if r.bids[p] == r.won[p] else -abs(r.bids[p] - r.won[p]))
                            for p in setup.players}
        if r.tricks is not None:
            cards = [c for t in r.tricks for _, c in t.plays]
            assert len(r.tricks) == r.cards and len(cards) == len(set(cards))
            assert all(len(t.plays) in (0, n) for t in r.tricks)
    oc = rules.outcome(state)
    assert oc.totals == {p: sum(r.scores[p] for r in res) for p in setup.players}
    assert oc.complete and oc.winners == tuple(p for p in setup.players if oc.totals[p] == max(oc.totals.values()))
    ruling = rule_record(json.loads(json.dumps(to_record(state))))
    assert ruling["totals"] == oc.totals and ruling["winners"] == list(oc.winners) and ruling["complete"]


@given(st.lists(st.sampled_from(DECK), min_size=2, max_size=10, unique=True))
def test_trick_winner_is_the_highest_spade_else_the_highest_of_the_led_suit(cards):
    plays = [(f"p{i}", c) for i, c in enumerate(cards)]
    w = dict(plays)[rules.trick_winner(plays)]
    spades = [c for c in cards if c.suit == "S"]
    if spades:
        assert w == max(spades, key=lambda c: c.rank)
    else:
        assert w == max((c for c in cards if c.suit == cards[0].suit), key=lambda c: c.rank)


SEEN = {"revoke": 0, "fine": 0}


def naive_revoke(history, player, card):
    """Independent check without hands: did ``player`` fail to follow ``card``'s suit earlier this round?"""
    for trick in history:
        led = trick[0][1].suit
        for p, c in trick[1:]:
            if p == player and c.suit != led and led == card.suit:
                return True
    return False


@given(st.integers(2, 5), st.integers(1, 6), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_revoke_detection_without_hands_matches_a_naive_checker(n, m, rnd):
    m = min(m, 52 // n)
    setup = Setup(tuple(NAMES[:n]), m, NAMES[0])
    s = rules.initial(setup)
    for p in setup.clockwise_from(s.round.leader):
        s = rules.apply(s, Bid(p, 0))
    history: list[list] = []  # finished tricks of (player, card)
    used: set = set()
    # Short suits make revokes likely: draw only from two suits.
    pool = [c for c in DECK if c.suit in "HS" or (c.suit == "D" and c.rank < 6)]
    while s.round is not None and s.round.index == 0:
        p = rules.to_play(s)
        c = rnd.choice([x for x in pool if x not in used])
        current = list(s.round.current)
        # (the current trick cannot hold this player's earlier failure: one card each per trick)
        expect = naive_revoke(history, p, c)
        SEEN["revoke" if expect else "fine"] += 1
        try:
            s2 = rules.apply(s, PlayCard(p, c))
        except IllegalActionError as exc:
            assert expect, f"{p} {c} refused without a revoke: {exc}"
            assert "revoke" in str(exc)
            return
        assert not expect, f"{p} {c} is a revoke the rules missed"
        used.add(c)
        if s2.round is None or s2.round.index != 0 or not s2.round.current:
            history.append(current + [(p, c)])
        s = s2


@given(st.integers(2, 4), st.integers(1, 6), st.randoms(use_true_random=False))
@settings(max_examples=150, deadline=None)
def test_follow_suit_with_hands_matches_a_naive_checker(n, m, rnd):
    m = min(m, 52 // n)
    setup = Setup(tuple(NAMES[:n]), m, NAMES[1])
    s = rules.initial(setup)
    hands = sim.deal(setup, 0, rnd)
    for p in setup.clockwise_from(s.round.leader):
        s = rules.apply(s, Bid(p, 1 if m > 1 else 0))
    s = rules.apply(s, Deal.of(hands))
    left = {p: list(hands[p]) for p in setup.players}
    while s.round is not None and s.round.index == 0:
        p = rules.to_play(s)
        c = rnd.choice(left[p] + [rnd.choice(DECK)])  # sometimes a card not in the hand
        cur = s.round.current
        illegal = c not in left[p] or (bool(cur) and c.suit != cur[0][1].suit
                                       and any(x.suit == cur[0][1].suit for x in left[p]))
        legal_listed = PlayCard(p, c) in rules.legal_actions(s)
        assert legal_listed == (not illegal)
        try:
            s = rules.apply(s, PlayCard(p, c))
        except IllegalActionError:
            assert illegal
            continue
        assert not illegal
        left[p].remove(c)


@given(setups(max_cap=3), st.integers(0, 10**6), st.data())
@settings(max_examples=40, deadline=None)
def test_undo_is_exact_and_refusals_change_nothing(setup, seed, data):
    g = sim.play_game(setup, seed, styles=("cards", "tricks", "counts"))
    actions = list(g.actions)
    cut = data.draw(st.integers(0, len(actions)))
    h = rules.WhistGame(setup)
    states = [h.state]
    for a in actions[:cut]:
        h.apply(a)
        states.append(h.state)
    # a refused action leaves the state exactly as it was
    before = h.state
    for bad in (Bid(setup.players[0], 99), PlayCard("nobody", DECK[0]), rules.TakeTrick("nobody")):
        try:
            h.apply(bad)
        except IllegalActionError:
            pass
        assert h.state == before and len(h.actions) == cut
    for i in range(cut, 0, -1):
        assert h.state == states[i]
        assert h.undo() == actions[i - 1]
    assert h.state == rules.initial(setup)


@given(st.lists(st.integers(-3, 5), min_size=2, max_size=2), st.integers(1, 2))
def test_counts_must_sum_to_the_cards(won, m):
    setup = Setup(("A", "B"), m, "A")
    s = rules.initial(setup)
    s = rules.apply(rules.apply(s, Bid("B", 0)), Bid("A", 0))
    ok = all(0 <= w <= m for w in won) and sum(won) == m
    try:
        s2 = rules.apply(s, rules.Counts.of({"A": won[0], "B": won[1]}))
    except IllegalActionError:
        assert not ok
    else:
        assert ok and s2.done[0].won() == {"A": won[0], "B": won[1]}


@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda ch: st.lists(ch, max_size=4) | st.dictionaries(st.text(max_size=5), ch, max_size=4),
                    max_leaves=20))
@settings(max_examples=200, deadline=None)
def test_garbage_is_a_record_error_never_a_crash(junk):
    for rec in (junk, {"game": "pirate-whist", "players": ["A", "B"], "max_cards": 1, "first_dealer": "A",
                       "rounds": [junk]},
                {"game": "pirate-whist", "players": ["A", "B"], "max_cards": 2, "first_dealer": "B",
                 "rounds": [{"bids": {"A": 0, "B": 0}, "tricks": junk}]}):
        try:
            rule_record(rec)
        except RecordError as exc:
            assert "\n" not in str(exc) and ": " in str(exc)


def test_the_revoke_property_saw_both_kinds():
    test_revoke_detection_without_hands_matches_a_naive_checker()
    assert SEEN["revoke"] > 10 and SEEN["fine"] > 100, SEEN
