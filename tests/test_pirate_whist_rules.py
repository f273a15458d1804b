"""The pure Pirate Whist rules: set-up limits, whose turn, the hook variant, trick entry by winner or by cards,
counts, legal actions, editing a finished round."""

import pytest

from companion.errors import IllegalActionError
from companion.games.pirate_whist import rules
from companion.games.pirate_whist.rules import Bid, Counts, Deal, EditRound, PlayCard, Setup, TakeTrick, card


def bid_all(s, bids):
    for p in s.setup.clockwise_from(s.round.leader):
        if p in bids:
            s = rules.apply(s, Bid(p, bids[p]))
    return s


@pytest.mark.parametrize("players,max_cards,dealer,msg", [
    (("A",), 1, "A", "2-10 players"),
    (tuple("ABCDEFGHIJK"), 1, "A", "2-10 players"),
    (("A", "B"), 27, "A", "1 to 26"),
    (("A", "B", "C"), 18, "A", "1 to 17"),
    (("A", "B"), 0, "A", "1 to 26"),
    (("A", "B"), True, "A", "1 to 26"),
    (("A", "A"), 1, "A", "distinct"),
    (("A", "B"), 1, "C", "first dealer"),
    (("A", "\tB"), 1, "A", "control"),
    (("A", " B"), 1, "A", "space"),
])
def test_setup_refusals(players, max_cards, dealer, msg):
    with pytest.raises(IllegalActionError, match=msg):
        Setup(players, max_cards, dealer)


def test_limit_plan_dealers_and_leaders():
    assert [rules.max_cards_limit(n) for n in range(2, 11)] == [26, 17, 13, 10, 8, 7, 6, 5, 5]
    s = Setup(("A", "B", "C"), 3, "C")
    assert s.plan == (3, 2, 1, 2, 3) and s.n_rounds == 5
    assert [s.dealer(k) for k in range(5)] == ["C", "A", "B", "C", "A"]
    assert [s.leader(k) for k in range(5)] == ["A", "B", "C", "A", "B"]


def test_bids_any_order_then_play_clockwise_from_the_leader():
    s = rules.initial(Setup(("A", "B", "C"), 2, "A"))
    assert rules.phase(s) == "bid" and rules.to_bid(s) == ("B", "C", "A")
    with pytest.raises(IllegalActionError, match="still waiting for bids"):
        rules.apply(s, PlayCard("B", card("2H")))
    s = rules.apply(s, Bid("C", 1))
    with pytest.raises(IllegalActionError, match="already bid"):
        rules.apply(s, Bid("C", 0))
    with pytest.raises(IllegalActionError, match="more than the 2 cards"):
        rules.apply(s, Bid("A", 3))
    with pytest.raises(IllegalActionError, match="whole number"):
        rules.apply(s, Bid("A", True))
    s = rules.apply(rules.apply(s, Bid("A", 0)), Bid("B", 2))
    assert rules.phase(s) == "play" and rules.to_play(s) == "B"
    s = rules.apply(s, PlayCard("B", card("KH")))
    assert rules.to_play(s) == "C"
    with pytest.raises(IllegalActionError, match="out of turn"):
        rules.apply(s, PlayCard("A", card("2H")))


def test_hook_dealer_bids_last_and_may_not_make_the_bids_total_the_cards():
    s = rules.initial(Setup(("A", "B", "C"), 3, "A", hook=True))
    assert rules.to_bid(s) == ("B", "C")
    with pytest.raises(IllegalActionError, match="bids last"):
        rules.apply(s, Bid("A", 0))
    s = rules.apply(rules.apply(s, Bid("B", 1)), Bid("C", 1))
    assert rules.to_bid(s) == ("A",) and rules.hook_forbidden(s) == 1
    assert [a.bid for a in rules.legal_actions(s)] == [0, 2, 3]
    with pytest.raises(IllegalActionError, match="hook rule: the dealer may not bid 1"):
        rules.apply(s, Bid("A", 1))
    s = rules.apply(s, Bid("A", 2))
    assert rules.phase(s) == "play"
    # Others over-bid already: nothing is forbidden.
    s = rules.initial(Setup(("A", "B"), 1, "A", hook=True))
    s = rules.apply(s, Bid("B", 1))
    assert rules.hook_forbidden(s) == 0


def test_trick_by_winner_only_and_mixing_with_cards():
    s = bid_all(rules.initial(Setup(("A", "B"), 2, "A")), {"A": 1, "B": 1})
    s = rules.apply(s, TakeTrick("A"))
    assert rules.to_play(s) == "A"  # the winner leads
    s = rules.apply(s, PlayCard("A", card("2C")))
    with pytest.raises(IllegalActionError, match="has cards entered"):
        rules.apply(s, TakeTrick("B"))
    with pytest.raises(IllegalActionError, match="one by one"):
        rules.apply(s, Counts.of({"A": 1, "B": 1}))
    s = rules.apply(s, PlayCard("B", card("3C")))
    assert rules.results(s)[0].trick_winners == ("A", "B") and rules.results(s)[0].scores == {"A": 11, "B": 11}


def test_hands_require_cards_and_exact_following():
    s = bid_all(rules.initial(Setup(("A", "B"), 1, "A")), {"A": 0, "B": 1})
    with pytest.raises(IllegalActionError, match="holds 2 cards"):
        rules.apply(s, Deal.of({"A": ["2C", "3C"], "B": ["4C"]}))
    s = rules.apply(s, Deal.of({"A": ["2C"], "B": ["4C"]}))
    with pytest.raises(IllegalActionError, match="enter the cards"):
        rules.apply(s, TakeTrick("A"))
    assert rules.legal_actions(s) == [PlayCard("B", card("4C"))]
    with pytest.raises(IllegalActionError, match="does not hold"):
        rules.apply(s, PlayCard("B", card("5C")))


def test_legal_actions_without_hands_skip_seen_cards_and_voids():
    s = bid_all(rules.initial(Setup(("A", "B"), 3, "A")), {"A": 0, "B": 0})
    acts = rules.legal_actions(s)
    assert len([a for a in acts if isinstance(a, PlayCard)]) == 52 and len(acts) == 54
    s = rules.apply(rules.apply(s, PlayCard("B", card("AH"))), PlayCard("A", card("2C")))  # A void in hearts
    acts = rules.legal_actions(s)
    assert any(isinstance(a, TakeTrick) for a in acts)  # a new trick: its winner may be tapped
    s = rules.apply(s, PlayCard("B", card("KD")))
    legal = rules.legal_actions(s)
    assert PlayCard("A", card("3H")) not in legal and PlayCard("A", card("3D")) in legal
    assert PlayCard("A", card("AH")) not in legal  # already played


def test_game_over_and_outcome():
    s = rules.initial(Setup(("A", "B"), 1, "B"))
    s = bid_all(s, {"A": 1, "B": 1})
    s = rules.apply(s, Counts.of({"A": 1, "B": 0}))
    assert s.over and rules.phase(s) == "over" and rules.legal_actions(s) == []
    oc = rules.outcome(s)
    assert oc.totals == {"A": 11, "B": -1} and oc.complete and oc.winners == ("A",)
    with pytest.raises(IllegalActionError, match="game is over"):
        rules.apply(s, Bid("A", 0))


def test_edit_round_replays_it_and_keeps_the_rest():
    s = rules.initial(Setup(("A", "B"), 2, "A"))
    s = rules.apply(bid_all(s, {"A": 1, "B": 1}), Counts.of({"A": 1, "B": 1}))
    s = rules.apply(bid_all(s, {"A": 0, "B": 0}), Counts.of({"A": 1, "B": 0}))
    assert rules.outcome(s).totals == {"A": 10, "B": 21}
    s2 = rules.apply(s, EditRound(0, (Bid("B", 2), Bid("A", 0), Counts.of({"A": 0, "B": 2}))))
    assert rules.outcome(s2).totals == {"A": 9, "B": 22}
    assert s2.round == s.round and s2.done[1] == s.done[1]
    with pytest.raises(IllegalActionError, match="not finished"):
        rules.apply(s, EditRound(0, (Bid("B", 2), Bid("A", 0))))
    with pytest.raises(IllegalActionError, match="has not been played"):
        rules.apply(s, EditRound(2, ()))
    with pytest.raises(IllegalActionError, match="add up to 3"):
        rules.apply(s, EditRound(0, (Bid("B", 2), Bid("A", 0), Counts.of({"A": 1, "B": 2}))))


def test_round_actions_replay_a_round_exactly():
    from companion.games.pirate_whist import sim

    g = sim.play_game(Setup(("A", "B", "C"), 3, "B", hook=True), 5, styles=("cards", "tricks", "counts"))
    for r in g.state.done:
        assert rules.play_round(g.setup, r.index, rules.round_actions(r, g.setup)) == r


def test_a_replayed_round_takes_no_action_after_its_end():
    setup = Setup(("A", "B"), 1, "A")
    with pytest.raises(IllegalActionError, match="already finished"):
        rules.play_round(setup, 0, [Bid("B", 0), Bid("A", 0), Counts.of({"A": 1, "B": 0}), TakeTrick("A")])
