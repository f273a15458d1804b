"""The Pirate's Bluff referee, by concept (python-chess style)."""

import copy

import pytest

from companion.decks.pirates72 import PBCard
from companion.errors import IllegalActionError, PirateTableError
from companion.games.pirates_bluff import (
    Bid,
    Call,
    Countdown,
    Options,
    PiratesBluffHand,
    RevealStarting,
    Showdown,
    hand_count,
    hand_size,
    theoretical_max,
)
from companion.games.pirates_bluff.record import RULEBOOK_EXAMPLE, play_record, rule_record

P = ["Ann", "Ben", "Cat", "Dan"]
START = {"Ann": "5A", "Ben": "3B", "Cat": "3A", "Dan": "8H"}


def new_hand(players=P, start=START, **opts):
    h = PiratesBluffHand(players, options=Options(**opts))
    h.apply(RevealStarting.of({p: PBCard.parse(c) for p, c in start.items()}))
    return h


def counts(**kw):
    """Showdown counts: name=(naturals, wilds); everyone else (0, 0)."""
    return Showdown.of_counts({p: kw.get(p, (0, 0)) for p in P})


# ----------------------------------------------------------------- the rulebook's example


def test_rulebook_example_full_ruling():
    r = rule_record(copy.deepcopy(RULEBOOK_EXAMPLE))
    assert r["first_bidder"] == "Bethany" and r["first_bidder_card"] == "2C"
    assert r["final_bid"] == {"quantity": 7, "rank": 7, "bidders": ["Eris"]}
    assert r["callers"] == ["Douglas"]
    assert r["count"] == 6
    assert r["counts"] == {"Arville": 0, "Bethany": 2, "Carter": 0, "Douglas": 0, "Eris": 4}
    assert r["bid_holds"] is False
    assert r["winners"] == ["Douglas"] and r["losers"] == ["Eris"]
    # Eris pays 7 to Douglas, who also takes the five antes.
    assert r["stacks"] == {"Arville": 49, "Bethany": 49, "Carter": 49, "Douglas": 61, "Eris": 42}
    assert r["pot_carry"] == 0
    assert {"kind": "penalty", "postings": {"Eris": -7, "Douglas": 7},
            "memo": "7 Sevens fails (6 in play): Eris pays 7 to Douglas"} in r["entries"]
    assert r["rejected"] == []


# ----------------------------------------------------------------- table and deck


@pytest.mark.parametrize("n,size", [(3, 7), (4, 7), (5, 7), (6, 7), (7, 6), (8, 5)])
def test_hand_size(n, size):
    assert hand_size(n) == size


@pytest.mark.parametrize("n", [2, 9])
def test_player_count_limits(n):
    with pytest.raises(PirateTableError, match="3-8 players"):
        PiratesBluffHand([f"p{i}" for i in range(n)])


def test_first_bidder_lowest_rank_then_letter_wild_lowest():
    h = new_hand(start={"Ann": "2D", "Ben": "2C", "Cat": "3A", "Dan": "4B"})
    assert h.first_bidder == "Ben"
    h = new_hand(start={"Ann": "2D", "Ben": "2C", "Cat": "0H", "Dan": "4B"})
    assert h.first_bidder == "Cat"  # a wild is rank 0, lowest of all


def test_starting_card_dealt_twice_is_illegal():
    h = PiratesBluffHand(P)
    with pytest.raises(IllegalActionError, match="dealt twice"):
        h.apply(RevealStarting.of({p: PBCard(3, "A") for p in P}))


def test_antes_and_pot_carry():
    h = PiratesBluffHand(P, stacks={p: 10 for p in P}, pot_carry=3, options=Options(ante=2))
    assert h.pot == 3 + 2 * 4
    assert h.stacks == {p: 8 for p in P}


def test_theoretical_max():
    assert theoretical_max(3) == theoretical_max(8) == 16
    # Super Wilds: 4 naturals and 3 wilds in one seven-card hand count 4 + 3*4 = 16, plus the rest.
    assert theoretical_max(3, True) > 16
    assert theoretical_max(5, True) >= theoretical_max(8, True)


# ----------------------------------------------------------------- bids


def test_opening_bid_belongs_to_first_bidder():
    h = new_hand()
    assert h.first_bidder == "Cat"
    with pytest.raises(IllegalActionError, match="opening bid belongs to Cat"):
        h.apply(Bid("Ann", 2, 3, 0))
    h.apply(Bid("Cat", 2, 3, 0))
    assert h.standing_bid == (2, 3)


def test_raise_quantity_any_rank_or_same_quantity_higher_rank():
    h = new_hand()
    h.apply(Bid("Cat", 5, 6, 0))
    assert h.is_legal(Bid("Ann", 6, 2, 1))  # more cards, any rank
    assert h.is_legal(Bid("Ann", 5, 7, 1))  # same quantity, higher rank
    assert not h.is_legal(Bid("Ann", 5, 6, 100))  # same bid, outside the window
    assert not h.is_legal(Bid("Ann", 5, 3, 1))
    assert not h.is_legal(Bid("Ann", 4, 8, 1))
    with pytest.raises(IllegalActionError, match="does not beat 5 Sixes"):
        h.apply(Bid("Ann", 4, 8, 1))


def test_no_player_acts_twice_in_a_row():
    h = new_hand()
    h.apply(Bid("Cat", 2, 3, 0))
    with pytest.raises(IllegalActionError, match="cannot act twice in a row"):
        h.apply(Bid("Cat", 3, 3, 10))
    with pytest.raises(IllegalActionError, match="cannot call their own bid"):
        h.apply(Call("Cat", 10))


@pytest.mark.parametrize("bad,msg", [((0, 3), "at least 1"), ((3, 0), "rank must be 1-8"), ((3, 9), "rank must be 1-8")])
def test_bad_bids(bad, msg):
    h = new_hand()
    with pytest.raises(IllegalActionError, match=msg):
        h.apply(Bid("Cat", *bad, 0))


def test_bid_above_theoretical_maximum_is_accepted_but_flagged():
    h = new_hand()
    h.apply(Bid("Cat", 17, 4, 0))
    assert h.standing_bid == (17, 4)
    assert any("above the theoretical maximum of 16" in f for f in h.flags)


def test_time_goes_forward():
    h = new_hand()
    h.apply(Bid("Cat", 2, 3, 100))
    with pytest.raises(IllegalActionError, match="out of time order"):
        h.apply(Bid("Ann", 3, 3, 99))


def test_legal_bids_offers_only_legal_raises():
    h = new_hand()
    assert h.legal_bids("Ann") == []  # not Ann's opening
    assert len(h.legal_bids("Cat")) == 16 * 8
    h.apply(Bid("Cat", 15, 7, 0))
    assert h.legal_bids("Ann") == [(15, 8), (16, 1), (16, 2), (16, 3), (16, 4), (16, 5), (16, 6), (16, 7), (16, 8)]
    assert h.legal_bids("Cat") == []


# ----------------------------------------------------------------- calls and simultaneity


def test_simultaneous_calls_within_window_share_the_showdown():
    h = new_hand()
    h.apply(Bid("Cat", 7, 5, 0))
    h.apply(Call("Ann", 1000))
    h.apply(Call("Ben", 1009.5))  # within the default 10 ms
    assert h.callers == ("Ann", "Ben")
    with pytest.raises(IllegalActionError, match="outside the 10 ms window"):
        h.apply(Call("Dan", 1010.5))
    with pytest.raises(IllegalActionError, match="already called"):
        h.apply(Bid("Dan", 8, 5, 1012))


@pytest.mark.parametrize("window,joined", [(0, False), (25, True)])
def test_window_is_configurable(window, joined):
    h = new_hand(window_ms=window)
    h.apply(Bid("Cat", 7, 5, 0))
    h.apply(Call("Ann", 1000))
    assert h.is_legal(Call("Ben", 1020)) is joined
    assert h.is_legal(Call("Ben", 1000))  # same instant is always simultaneous


def test_two_callers_win_split_pot_and_penalty_odd_coin_stays():
    h = new_hand()
    h.apply(Bid("Cat", 6, 5, 0))
    h.apply(Call("Ann", 1000))
    h.apply(Call("Ben", 1004))
    h.apply(counts(Cat=(2, 1)))  # 3 fives: the bid of 6 fails
    o = h.outcome
    assert o.winners == ("Ann", "Ben") and o.losers == ("Cat",)
    # pot 4 + penalty 6 = 10 -> 5 each, nothing left
    assert h.stacks == {"Ann": 54, "Ben": 54, "Cat": 43, "Dan": 49}
    assert h.pot == 0


def test_odd_coins_stay_in_the_pot():
    h = new_hand(ante=1)
    h.apply(Bid("Cat", 5, 5, 0))
    h.apply(Call("Ann", 1000))
    h.apply(Call("Ben", 1004))
    h.apply(Call("Dan", 1005))
    h.apply(counts())  # no fives at all
    # pot 4 + penalty 5 = 9 -> 3 each to three winners, 0 left
    assert h.pot == 0 and h.stacks["Ann"] == 52
    h2 = new_hand()
    h2.apply(Bid("Cat", 6, 5, 0))
    h2.apply(Call("Ann", 1000))
    h2.apply(Call("Ben", 1001))
    h2.apply(Call("Dan", 1002))
    h2.apply(counts())
    # pot 4 + penalty 6 = 10 -> 3 each, 1 stays in the pot
    assert h2.pot == 1
    assert h2.stacks == {"Ann": 52, "Ben": 52, "Cat": 43, "Dan": 52}


def test_several_losers_each_pay_their_share_rounded_up():
    h = new_hand()
    h.apply(Bid("Cat", 7, 5, 0))
    h.apply(Call("Ann", 1000))
    h.apply(Call("Ben", 1003))
    h.apply(counts(Cat=(4, 1), Dan=(2, 0)))  # 7 fives: the bid holds
    o = h.outcome
    assert o.bid_holds and o.winners == ("Cat",) and set(o.losers) == {"Ann", "Ben"}
    # each caller pays ceil(7/2) = 4; Cat takes 8 and the pot of 4
    assert h.stacks == {"Ann": 45, "Ben": 45, "Cat": 61, "Dan": 49}


def test_simultaneous_identical_bids_tie_and_share():
    h = new_hand()
    h.apply(Bid("Cat", 2, 3, 0))
    h.apply(Bid("Ann", 4, 6, 500))
    h.apply(Bid("Ben", 4, 6, 506))  # the same bid within 10 ms: a tie
    assert h.bidders == ("Ann", "Ben")
    assert not h.is_legal(Call("Ann", 600))  # a tied bidder cannot call its own bid
    assert h.is_legal(Bid("Ann", 5, 6, 600))  # "another bid (from anyone)" breaks the tie
    h.apply(Call("Dan", 700))
    h.apply(counts(Dan=(1, 0)))  # one six: the tied bid fails
    # the two bidders each pay ceil(4/2) = 2; Dan takes 4 and the pot of 4
    assert h.stacks == {"Ann": 47, "Ben": 47, "Cat": 49, "Dan": 57}


def test_same_bid_outside_window_is_illegal():
    h = new_hand()
    h.apply(Bid("Cat", 4, 6, 500))
    with pytest.raises(IllegalActionError, match="does not beat"):
        h.apply(Bid("Ann", 4, 6, 511))


# ----------------------------------------------------------------- countdown


def test_countdown_completes_bidder_takes_pot_and_a_coin_from_everyone():
    h = new_hand()
    h.apply(Bid("Cat", 3, 4, 0))
    h.apply(Countdown("Cat", 4000, complete=False))
    h.apply(Countdown("Cat", 9000, complete=True))
    o = h.outcome
    assert o.end == "countdown" and o.winners == ("Cat",) and o.count is None
    assert h.stacks == {"Ann": 48, "Ben": 48, "Cat": 49 + 4 + 3, "Dan": 48}
    assert h.pot == 0


def test_any_legal_bid_or_call_cancels_the_countdown():
    h = new_hand()
    h.apply(Bid("Cat", 3, 4, 0))
    h.apply(Countdown("Cat", 4000, complete=False))
    h.apply(Bid("Ann", 3, 5, 6000))
    assert h.countdown_by is None and h.phase == "bidding"
    assert any("cancelled Cat's countdown" in f for f in h.flags)
    h.apply(Countdown("Ann", 7000, complete=False))
    h.apply(Call("Ben", 8000))
    assert h.phase == "called" and h.countdown_by is None


def test_only_the_bidder_counts_down():
    h = new_hand()
    with pytest.raises(IllegalActionError, match="no bid to count down"):
        h.apply(Countdown("Cat", 0))
    h.apply(Bid("Cat", 3, 4, 0))
    with pytest.raises(IllegalActionError, match="only the bidder"):
        h.apply(Countdown("Ann", 10))


def test_tied_bidders_share_a_countdown():
    h = new_hand()
    h.apply(Bid("Cat", 3, 4, 0))
    h.apply(Bid("Ann", 4, 4, 100))
    h.apply(Bid("Dan", 4, 4, 101))
    h.apply(Countdown("Dan", 5000))
    # pot 4 + a coin from Ben and Cat = 6 -> 3 each
    assert h.stacks == {"Ann": 52, "Ben": 48, "Cat": 48, "Dan": 52}
    assert h.pot == 0


# ----------------------------------------------------------------- showdown counting


@pytest.mark.parametrize("n,w,plain,super_", [(0, 3, 0, 0), (1, 1, 2, 2), (3, 2, 5, 9), (2, 0, 2, 2)])
def test_wilds_count_only_with_a_natural_super_wilds_multiply(n, w, plain, super_):
    assert hand_count(n, w, False) == plain
    assert hand_count(n, w, True) == super_


def test_super_wilds_showdown_from_hands():
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    rec["options"] = {"super_wilds": True}
    r = rule_record(rec)
    # Eris: 7 7 7 + one wild = 3 + 3 = 6; Bethany 2: total 8 >= 7, the bid holds.
    assert r["counts"]["Eris"] == 6 and r["count"] == 8 and r["bid_holds"] is True
    assert r["winners"] == ["Eris"] and r["stacks"]["Douglas"] == 42 and r["stacks"]["Eris"] == 61


def test_showdown_hands_are_checked():
    h = new_hand()
    h.apply(Bid("Cat", 3, 4, 0))
    h.apply(Call("Ann", 5))
    bad = {p: [PBCard.parse(START[p])] for p in P}
    with pytest.raises(IllegalActionError, match="hands are 7 cards"):
        h.apply(Showdown.of_hands(bad))
    with pytest.raises(IllegalActionError, match="only 8 naturals"):
        h.apply(counts(Ann=(5, 0), Ben=(4, 0)))


# ----------------------------------------------------------------- undo, variants


def test_undo_is_exact_and_stepwise():
    h = new_hand()
    snaps = [h.snapshot()]
    for a in [Bid("Cat", 2, 3, 0), Bid("Ann", 3, 3, 10), Countdown("Ann", 20, False), Call("Ben", 30),
              Call("Dan", 31), counts(Ann=(2, 1))]:
        h.apply(a)
        snaps.append(h.snapshot())
    assert h.phase == "over"
    stacks_over = h.stacks
    for expected in reversed(snaps[:-1]):
        h.undo()
        assert h.snapshot() == expected
    assert h.stacks == {p: 49 for p in P}
    assert stacks_over != h.stacks
    h.undo()  # the reveal
    assert h.phase == "starting"
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        h.undo()


def test_after_the_hand_is_over_nothing_applies():
    h = new_hand()
    h.apply(Bid("Cat", 2, 3, 0))
    h.apply(Countdown("Cat", 10))
    with pytest.raises(IllegalActionError, match="the hand is over"):
        h.apply(Call("Ann", 20))


def test_cyclone_is_recorded_and_announced():
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    rec["options"] = {"cyclone": True}
    r = rule_record(rec)
    assert r["options"]["cyclone"] == "left"
    assert r["announcements"] == ["Cyclone: right after the deal, each player passes two cards to the player on their left."]


def test_illegal_events_are_rejected_and_the_hand_goes_on():
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    rec["events"].insert(1, {"t_ms": 1000, "player": "Bethany", "call": True})  # calls her own bid
    rec["events"].insert(3, {"t_ms": 2500, "player": "Carter", "bid": [3, 8]})  # lower than four twos
    r = rule_record(rec)
    assert [x["index"] for x in r["rejected"]] == [1, 3]
    assert "cannot call their own bid" in r["rejected"][0]["reason"]
    assert "does not beat 4 Twos" in r["rejected"][1]["reason"]
    assert r["stacks"]["Douglas"] == 61


def test_called_without_hands_awaits_showdown():
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    del rec["hands"]
    r = rule_record(rec)
    assert r["end"] == "awaiting_showdown" and r["count"] is None
    assert r["stacks"] == {p: 49 for p in rec["players"]} and r["pot_carry"] == 5


def test_showdown_counts_in_a_record():
    rec = copy.deepcopy(RULEBOOK_EXAMPLE)
    del rec["hands"]
    rec["showdown_counts"] = {"Bethany": [2, 0], "Eris": [3, 1], "Arville": [0, 1], "Carter": [0, 0],
                              "Douglas": [0, 1]}
    hand, _ = play_record(rec)
    assert hand.outcome.count == 6 and hand.stacks["Douglas"] == 61
