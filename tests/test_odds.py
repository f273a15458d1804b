"""Exact bid odds: brute-force equality on small decks, Monte Carlo agreement, properties, CLI and input checks."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from itertools import combinations
from math import comb
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.games.pirates_bluff import odds
from companion.decks.pirates72 import full_deck
from companion.errors import PirateTableError
from companion.games.pirates_bluff import theoretical_max
from companion.games.pirates_bluff.odds import Deck

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------------------------- brute force


def rulebook_count(hand, rank, super_wilds):
    """The rulebook, restated independently of the library: wilds count only beside a natural."""
    naturals = sum(1 for c in hand if c.rank == rank)
    wilds = sum(1 for c in hand if c.rank == 0)
    if naturals == 0:
        return 0
    return naturals + (wilds * naturals if super_wilds else wilds)


def brute_force(deck, starting, rank, hand_size, super_wilds, hand=None, seat=None):
    """Enumerate every deal of the unseen cards (as sets of real cards) and histogram the count."""
    visible = set(starting) | set(hand or ())
    pool = [c for c in deck.cards() if c not in visible]
    seats = [i for i in range(len(starting)) if i != seat]
    hist: Counter[int] = Counter()

    def deal(k, remaining, hands):
        if k == len(seats):
            total = sum(rulebook_count(h, rank, super_wilds) for h in hands)
            if hand is not None:
                total += rulebook_count(hand, rank, super_wilds)
            hist[total] += 1
            return
        s = seats[k]
        for combo in combinations(remaining, hand_size - 1):
            rest = [c for c in remaining if c not in combo]
            deal(k + 1, rest, hands + [(starting[s],) + combo])

    deal(0, pool, [])
    n = sum(hist.values())
    top = max(hist)
    return [Fraction(hist.get(c, 0), n) for c in range(top + 1)], n


SMALL_CASES = [
    # (deck, players, hand size, with a known hand)
    (Deck(ranks=2, copies=3, wilds=2), 3, 2, False),
    (Deck(ranks=2, copies=3, wilds=2), 3, 2, True),
    (Deck(ranks=3, copies=3, wilds=3), 3, 3, False),
    (Deck(ranks=3, copies=3, wilds=3), 3, 3, True),
    (Deck(ranks=2, copies=4, wilds=4), 3, 3, False),
    (Deck(ranks=2, copies=4, wilds=3), 4, 2, False),
    (Deck(ranks=3, copies=3, wilds=3), 4, 2, True),
    (Deck(ranks=2, copies=4, wilds=4), 4, 3, True),
    (Deck(ranks=1, copies=3, wilds=2), 3, 1, False),  # nothing unseen in any hand
    (Deck(ranks=4, copies=2, wilds=3), 3, 3, False),
]


@pytest.mark.parametrize("super_wilds", [False, True], ids=["plain", "super"])
@pytest.mark.parametrize("case", range(len(SMALL_CASES)))
def test_exact_equals_brute_force_on_small_decks(case, super_wilds):
    deck, players, h, with_hand = SMALL_CASES[case]
    rng = random.Random(1000 * case + super_wilds)
    for _ in range(3):
        cards = list(deck.cards())
        rng.shuffle(cards)
        starting = cards[:players]
        hand = seat = None
        if with_hand:
            seat = rng.randrange(players)
            hand = [starting[seat]] + cards[players:players + h - 1]
            rng.shuffle(hand)  # the starting card need not come first
        for rank in range(1, deck.ranks + 1):
            want, deals = brute_force(deck, starting, rank, h, super_wilds, hand=hand, seat=seat)
            res = odds.count_distribution(starting, rank, hand=hand, super_wilds=super_wilds, hand_size=h, deck=deck)
            assert res.seat == seat
            assert res.total == deals
            got = list(res.distribution_exact)
            assert got == want  # exactly equal as fractions
            assert all(abs(g - float(x)) <= 1e-12 for g, x in zip(res.distribution, want))
            for q in range(len(want) + 1):
                assert abs(res.at_least(q) - float(sum(want[q:], Fraction(0)))) <= 1e-12


def test_brute_force_is_not_trivial():
    """The small cases really spread: several counts possible, wilds sometimes counting, sometimes not."""
    deck = Deck(ranks=3, copies=3, wilds=3)
    starting = odds.parse_card_list("1A,0A,2A", "starting")
    plain, deals = brute_force(deck, starting, 1, 3, False)
    sup, _ = brute_force(deck, starting, 1, 3, True)
    assert deals == comb(9, 2) * comb(7, 2) * comb(5, 2)
    assert sum(1 for p in plain if p > 0) >= 5
    assert len(sup) > len(plain)  # super wilds reach higher counts
    assert plain[1] > 0  # a count of 1 means seat 2 drew no 1, so its wild 0A went uncounted


# --------------------------------------------------------------------------------------------- Monte Carlo


MC_CASES = [
    # the rulebook's table, Eris's view (her hand), bid Seven Sevens
    dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", hand="7E,2A,2B,7A,7B,8A,0A", super_wilds=False),
    dict(players=8, starting="2C,2D,3A,4B,7E,7A,0A,5B", bid="6x7", hand=None, super_wilds=True),
    dict(players=3, starting="0C,4D,4A", bid="5x4", hand=None, super_wilds=False),
]


@pytest.mark.parametrize("case", MC_CASES, ids=["5p-hand", "8p-super", "3p"])
def test_exact_agrees_with_monte_carlo(case):
    deals = 200_000
    exact = odds.bid_odds(case["players"], case["starting"], case["bid"], hand=case["hand"], super_wilds=case["super_wilds"])
    mc = odds.monte_carlo(case["players"], case["starting"], case["bid"], hand=case["hand"],
                          super_wilds=case["super_wilds"], samples=deals, seed=12345)
    assert mc.samples == deals
    assert 0.02 < exact.probability < 0.98  # an informative bid, not a certainty
    se = (exact.probability * (1 - exact.probability) / deals) ** 0.5
    assert abs(mc.probability - exact.probability) <= 4 * se
    # and the whole distribution, count by count (standard error from the exact p)
    for c in range(max(len(mc.histogram), exact.max_count + 1)):
        p = exact.distribution[c] if c <= exact.max_count else 0.0
        m = mc.distribution[c] if c < len(mc.histogram) else 0.0
        assert abs(m - p) <= 4 * (p * (1 - p) / deals) ** 0.5 + 1e-12, c


# --------------------------------------------------------------------------------------------- properties


DECK = list(full_deck())


@st.composite
def queries(draw, with_hand=None):
    players = draw(st.integers(3, 8))
    cards = draw(st.permutations(DECK))
    starting = cards[:players]
    h = {7: 6, 8: 5}.get(players, 7)
    use_hand = draw(st.booleans()) if with_hand is None else with_hand
    hand = None
    if use_hand:
        seat = draw(st.integers(0, players - 1))
        hand = [starting[seat]] + list(cards[players:players + h - 1])
    rank = draw(st.integers(1, 8))
    return players, starting, rank, hand


@settings(max_examples=40, deadline=None)
@given(queries(), st.booleans())
def test_distribution_is_a_distribution(q, super_wilds):
    players, starting, rank, hand = q
    res = odds.bid_odds(players, starting, (1, rank), hand=hand, super_wilds=super_wilds)
    assert sum(res.ways) == res.total
    assert sum(res.distribution_exact) == 1
    assert abs(sum(res.distribution) - 1) <= 1e-12
    assert all(w >= 0 for w in res.ways) and res.ways[-1] > 0
    assert res.max_count <= theoretical_max(players, super_wilds)
    # the naturals on the table always count
    shown = sum(1 for c in starting if c.rank == rank)
    assert res.at_least(shown) == 1.0


@settings(max_examples=40, deadline=None)
@given(queries(), st.booleans())
def test_probability_is_monotone_in_quantity(q, super_wilds):
    players, starting, rank, hand = q
    res = odds.bid_odds(players, starting, (1, rank), hand=hand, super_wilds=super_wilds)
    tails = [res.at_least_exact(k) for k in range(res.max_count + 3)]
    assert tails[0] == 1
    assert all(a >= b for a, b in zip(tails, tails[1:]))
    assert tails[-1] == 0
    for k in range(1, res.max_count + 2):
        assert odds.bid_odds(players, starting, (k, rank), hand=hand, super_wilds=super_wilds).probability_exact == tails[k]


@settings(max_examples=40, deadline=None)
@given(queries())
def test_super_wilds_count_at_least_plain(q):
    players, starting, rank, hand = q
    plain = odds.bid_odds(players, starting, (1, rank), hand=hand)
    sup = odds.bid_odds(players, starting, (1, rank), hand=hand, super_wilds=True)
    for k in range(max(plain.max_count, sup.max_count) + 2):
        assert sup.at_least_exact(k) >= plain.at_least_exact(k)
    assert sup.mean >= plain.mean - 1e-12


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_averaging_over_a_players_hand_gives_the_unconditional_answer(data):
    """Law of total probability, on a small deck: averaging the known-hand distribution over every possible
    hand of one seat gives the distribution from the starting cards alone (exactly)."""
    deck = Deck(ranks=3, copies=3, wilds=3)
    cards = data.draw(st.permutations(list(deck.cards())))
    players, h = 3, 3
    starting = cards[:players]
    seat = data.draw(st.integers(0, players - 1))
    rank = data.draw(st.integers(1, 3))
    sw = data.draw(st.booleans())
    base = odds.count_distribution(starting, rank, super_wilds=sw, hand_size=h, deck=deck)
    pool = [c for c in deck.cards() if c not in starting]
    acc: dict[int, Fraction] = {}
    hands = list(combinations(pool, h - 1))
    for rest in hands:
        r = odds.count_distribution(starting, rank, hand=[starting[seat], *rest], super_wilds=sw, hand_size=h, deck=deck)
        assert r.seat == seat
        for c, p in enumerate(r.distribution_exact):
            acc[c] = acc.get(c, 0) + p / len(hands)
    assert [acc.get(c, 0) for c in range(base.max_count + 1)] == list(base.distribution_exact)


# --------------------------------------------------------------------------------------------- known values


def test_known_values():
    # Eris's hand in the rulebook example holds 7E 7A 7B and a wild: at least 4 Sevens are certain.
    res = odds.bid_odds(5, "2C,2D,3A,4B,7E", "7x7", hand="7E,2A,2B,7A,7B,8A,0A")
    assert res.seat == 4
    assert res.at_least(4) == 1.0 and res.distribution[4] > 0
    # A hand with no natural: its wild cannot count. Three players, every starting card a wild, bid rank 1.
    r = odds.bid_odds(3, "0A,0B,0C", "1x1", hand="0A,2A,2B,2C,2D,2E,2F")
    assert r.distribution[0] > 0
    # One unseen slot per hand, tiny deck, computed by hand: deck {1A,1B,0A,0B,2A,2B}, 3 players x 2 cards.
    # Starting 1A, 0A, 2A; pool 1B, 0B, 2B dealt one each: 3! = 6 deals.
    # Counts (plain): 1A gets 1B -> 2 + (0A: 0B no natural) ; enumerate: see below.
    deck = Deck(ranks=2, copies=2, wilds=2)
    r = odds.count_distribution("1A,0A,2A", 1, hand_size=2, deck=deck)
    # seat1 (1A) + x, seat2 (0A) + y, seat3 (2A) + z over permutations of (1B, 0B, 2B):
    #  (1B,0B,2B): 2 + 0 + 0 = 2   (1B,2B,0B): 2 + 0 + 0 = 2   (0B,1B,2B): 2 + 2 + 0 = 4
    #  (0B,2B,1B): 2 + 0 + 1 = 3   (2B,1B,0B): 1 + 2 + 0 = 3   (2B,0B,1B): 1 + 0 + 1 = 2
    assert r.total == 6
    assert r.distribution_exact == (0, 0, Fraction(3, 6), Fraction(2, 6), Fraction(1, 6))
    s = odds.count_distribution("1A,0A,2A", 1, hand_size=2, deck=deck, super_wilds=True)
    # super: 1A+0B = 1*(1+1) = 2 as before, 0A+1B = 2: the same numbers here
    assert s.distribution_exact == r.distribution_exact


def test_super_wilds_example_from_the_rulebook():
    # W-W-7-7-7 counts nine: three players, five cards, known hand, no other sevens or wilds possible...
    # use a 3-player, 5-card hand size with a deck of sevens and wilds only so every count is forced.
    deck = Deck(ranks=7, copies=3, wilds=2)
    res = odds.count_distribution("7A,1A,2A", 7, hand=["0A", "0B", "7A", "7B", "7C"], hand_size=5, deck=deck,
                                  super_wilds=True)
    assert res.distribution_exact[-1] == 1 and res.max_count == 9


def test_rank_table_covers_every_rank():
    table = odds.rank_table(5, "2C,2D,3A,4B,7E", hand="7E,2A,2B,7A,7B,8A,0A")
    assert sorted(table) == list(range(1, 9))
    assert table[7].at_least(7) == odds.bid_odds(5, "2C,2D,3A,4B,7E", "7x7", hand="7E,2A,2B,7A,7B,8A,0A").probability
    # Eris holds two 2s and sees two more on the table: four Twos are certain
    assert table[2].at_least(4) == 1.0


# --------------------------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(players=5, starting="2C,2D,3A,4B", bid="7x7"), "expected 5 starting cards"),
        (dict(players=5, starting="2C,2C,3A,4B,7E", bid="7x7"), "appears twice"),
        (dict(players=5, starting="2C,2D,3A,4B,XX", bid="7x7"), "not a Pirate's Bluff card"),
        (dict(players=2, starting="2C,2D", bid="7x7"), "3-8 players"),
        (dict(players=9, starting="2C,2D,3A,4B,7E,1A,1B,1C,1D", bid="7x7"), "3-8 players"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x0"), "rank 1-8"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x9"), "rank 1-8"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="0x7"), "at least 1"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="seven sevens"), "QUANTITYxRANK"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", hand="2C,1A"), "a hand holds 7 cards"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", hand="1A,1B,1C,1D,1E,1F,1G"), "none of the starting"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", hand="2C,2D,1C,1D,1E,1F,1G"), "more than one"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", hand="2C,1A,1C,1D,1E,1F,1A"), "appears twice"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", hand="2C,1A,1C,1D,1E,1F,1G", seat=2), "seat 3"),
        (dict(players=5, starting="2C,2D,3A,4B,7E", bid="7x7", seat=2), "without that player's hand"),
    ],
)
def test_bad_input_is_refused(kwargs, message):
    with pytest.raises(PirateTableError, match=message) as info:
        odds.bid_odds(**kwargs)
    assert "\n" not in str(info.value)


def test_small_deck_refuses_cards_outside_it():
    with pytest.raises(PirateTableError, match="not in the deck"):
        odds.count_distribution("1A,2A,3A", 1, hand_size=2, deck=Deck(ranks=2, copies=2, wilds=2))
    with pytest.raises(PirateTableError, match="need 9 cards"):
        odds.count_distribution("1A,2A,0A", 1, hand_size=3, deck=Deck(ranks=2, copies=2, wilds=2))


# --------------------------------------------------------------------------------------------- CLI and purity


def cli(*args):
    return subprocess.run([sys.executable, "-m", "companion", "odds", *args], cwd=ROOT, capture_output=True, text=True)


def test_cli_json_matches_library():
    p = cli("--players", "5", "--starting", "2C,2D,3A,4B,7E", "--hand", "7E,2A,2B,7A,7B,8A,0A", "--bid", "7x7", "--json")
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    res = odds.bid_odds(5, "2C,2D,3A,4B,7E", "7x7", hand="7E,2A,2B,7A,7B,8A,0A")
    assert out["probability"] == res.probability
    assert Fraction(out["probability_exact"]) == res.probability_exact
    assert out["seat"] == 5 and out["bid"] == {"quantity": 7, "rank": 7}
    assert [d["p"] for d in out["distribution"]] == list(res.distribution)
    assert sum(int(d["ways"]) for d in out["distribution"]) == int(out["deals"])


def test_cli_text_and_super_wilds():
    p = cli("--players", "5", "--starting", "2C,2D,3A,4B,7E", "--bid", "7x7", "--super-wilds")
    assert p.returncode == 0, p.stderr
    res = odds.bid_odds(5, "2C,2D,3A,4B,7E", "7x7", super_wilds=True)
    assert f"P(at least 7 Sevens in play) = {res.probability:.12f}" in p.stdout
    assert "Super Wilds" in p.stdout and "<- bid" in p.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["--players", "5", "--starting", "2C,2D,3A,4B", "--bid", "7x7"],
        ["--players", "5", "--starting", "2C,2D,3A,4B,7E", "--bid", "7x9"],
        ["--players", "5", "--starting", "2C,2D,3A,4B,7E", "--bid", "7x7", "--hand", "2C,2D,1C,1D,1E,1F,1G"],
        ["--starting", "2C,2D,3A,4B,7E", "--bid", "7x7", "--hand", "2C,1A,1C,1D,1E,1F,1G", "--seat", "9"],
        ["--bid", "7x7"],
    ],
)
def test_cli_bad_input_exits_2_with_one_line(args):
    p = cli(*args)
    assert p.returncode == 2
    assert p.stdout == ""
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("pirate-table: error: ")


def test_odds_module_is_pure():
    code = (
        "import sys, companion.games.pirates_bluff.odds, companion.commands.odds; "
        "bad = [m for m in ('kivy', 'cv2', 'serial', 'torch', 'numpy') if m in sys.modules]; print(bad)"
    )
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
