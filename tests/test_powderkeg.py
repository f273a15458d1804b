"""Powderkeg referee: Island Deck cards, the rulebook's example, dock death, misdeals, dealer wins, undo,
fair dealing."""

import copy

import pytest

from companion.errors import CardError, IllegalActionError, PirateTableError
from companion.games.powderkeg import (
    POT,
    Call,
    DealRotation,
    Dock,
    Options,
    PowderkegRound,
    Reveal,
    dead_position,
    first_descent,
)
from companion.games.powderkeg.record import RULEBOOK_EXAMPLE, rule_record
from companion.decks.island54 import COOL, SUITS, WARM, IslandCard, is_dead, island_deck

C = IslandCard.parse
PLAYERS = ["Alfonse", "Beatrice", "Cowen", "Dougherty", "Eron"]


# ------------------------------------------------------------------------------------------ cards


def test_island_deck_has_54_unique_cards_six_suits_nine_ranks():
    deck = island_deck()
    assert len(deck) == len(set(deck)) == 54
    assert sum(c.is_face for c in deck) == 12 and sum(c.is_number for c in deck) == 42
    assert sorted(col for _, col in SUITS) == sorted(WARM + COOL)


@pytest.mark.parametrize("text,canon", [
    ("K:anchors", "K:anchors"), ("3:boats", "3:boats"), ("Q:red", "Q:boats"), ("q:RED", "Q:boats"),
    (" a : Flower ", "A:flowers"), ("1:blue", "A:anchors"), ("7:purple", "7:skulls"), ("k:green", "K:palms"),
    ("5:pink", "5:crabs"), ("2:yellow", "2:flowers"),
])
def test_parse_both_suit_names_and_print_canonical(text, canon):
    assert str(C(text)) == canon
    assert C(canon) == C(text)


@pytest.mark.parametrize("bad", ["8:anchors", "J:boats", "K:hearts", "Kanchors", "K:anchors:x", "", 7, None])
def test_parse_refuses_cards_that_do_not_exist(bad):
    with pytest.raises(CardError):
        C(bad)


def test_rank_order_ace_low_king_high():
    ranks = [c.rank for c in sorted(island_deck())[::6]]
    assert ranks == ["A", "2", "3", "4", "5", "6", "7", "Q", "K"]
    assert C("A:red") < C("2:red") < C("7:blue") < C("Q:blue") < C("K:red")


def test_dead_hand_rule():
    assert not is_dead([C("A:anchors"), C("7:anchors"), C("Q:boats")])
    assert is_dead([C("A:anchors"), C("K:anchors")])
    assert not is_dead([C("Q:anchors"), C("K:anchors")])  # two faces never kill
    assert dead_position([C("A:crabs"), C("3:boats"), C("Q:crabs"), C("K:boats")]) == 3
    assert first_descent([C("3:boats"), C("3:crabs"), C("Q:red")]) is None
    assert "card 2" in first_descent([C("3:boats"), C("2:crabs")])


# ------------------------------------------------------------------------------------------ helpers


def play(players, dealer, dock, hand, calls, **kw):
    """Drive a round action by action, the way the app would."""
    r = PowderkegRound(players, dealer, **kw)
    r.apply(Dock(C(dock)))
    hand = [C(c) for c in hand]
    for c in hand[:r.options.opening]:
        r.apply(Reveal(c))
    for entry in calls:
        if r.phase != "calling":
            break
        for p in r.in_players:
            r.apply(Call(p, entry[p]))
        if r.phase == "reveal":
            r.apply(Reveal(hand[len(r.revealed)]))
    while r.phase == "showing":
        r.apply(Reveal(hand[len(r.revealed)]))
    return r


def total(r):
    return sum(r.stacks.values()) + r.pot


# ------------------------------------------------------------------------------------------ the rulebook


def test_rulebook_example_action_by_action():
    ex = RULEBOOK_EXAMPLE
    r = PowderkegRound(ex["players"], "Alfonse")
    r.apply(Dock(C("K:anchors")))
    r.apply(Reveal(C("A:flowers")))
    r.apply(Reveal(C("A:crabs")))
    assert r.phase == "calling" and r.in_players == ("Beatrice", "Cowen", "Dougherty", "Eron")
    assert r.pot == 9  # antes: 5 + 4 x 1
    pots = []
    hand = [C(c) for c in ex["hand"]]
    for i, entry in enumerate(ex["calls"]):
        for p in r.in_players:
            r.apply(Call(p, entry[p]))
        pots.append(r.pot)
        r.apply(Reveal(hand[2 + i]))
    assert pots == [13, 17, 21, 24]  # the rulebook's figures
    assert r.phase == "showing"  # the hand died on the Queen of Anchors; the 7th card is still face down
    assert r.outcome is None
    r.apply(Reveal(hand[6]))
    o = r.outcome
    assert o.end == "dead" and o.dead_at == 6 and o.ended_at == 6 and o.set_legal and not o.dock_death
    assert o.winners == ("Beatrice", "Cowen") and o.pot == 24
    assert r.stacks == {"Alfonse": 45, "Beatrice": 57, "Cowen": 57, "Dougherty": 45, "Eron": 46}
    assert r.pot == 0 and total(r) == 250


def test_rulebook_example_record_ruling():
    r = rule_record(copy.deepcopy(RULEBOOK_EXAMPLE))
    assert r["dead_at"] == "Q:anchors" and r["dead_at_position"] == 6
    assert r["dock"] == "K:anchors" and r["dock_death"] is False and r["set_legal"] is True
    assert r["winners"] == ["Beatrice", "Cowen"] and r["dealer_wins"] is False
    assert r["pot"] == 24 and r["pot_carry"] == 0 and r["pot_carry_before"] == 0
    assert r["stacks_before"] == {p: 50 for p in PLAYERS}
    assert r["stacks"] == {"Alfonse": 45, "Beatrice": 57, "Cowen": 57, "Dougherty": 45, "Eron": 46}
    assert [e["kind"] for e in r["entries"]] == ["ante", "bet", "bet", "bet", "bet", "pot_award"]
    assert r["entries"][0]["postings"] == {"Alfonse": -5, "Beatrice": -1, "Cowen": -1, "Dougherty": -1,
                                           "Eron": -1, "pot": 9}
    assert r["entries"][-1]["postings"] == {"pot": -24, "Beatrice": 12, "Cowen": 12}
    for e in r["entries"]:
        assert sum(e["postings"].values()) == 0
    # stacks = before + postings; pot_carry = carry + pot postings
    moved = {p: 0 for p in PLAYERS}
    pot = 0
    for e in r["entries"]:
        for a, v in e["postings"].items():
            if a == "pot":
                pot += v
            else:
                moved[a] += v
    assert r["stacks"] == {p: 50 + moved[p] for p in PLAYERS} and pot == r["pot_carry"]
    assert r["out"] == {"Eron": "called die on card 5 (6:boats)", "Dougherty": "called live on card 6 (Q:anchors)"}
    assert r["rejected"] == [] and r["next_dealer"] == "Beatrice"
    assert [x["right"] for x in r["rounds"]][-1] == ["Beatrice", "Cowen"]


# ------------------------------------------------------------------------------------------ endings

LEGAL_SET = ["A:flowers", "2:crabs", "3:boats", "5:anchors", "6:skulls", "7:palms", "Q:palms"]  # dies on 7th
LIVING_SET = ["A:flowers", "2:crabs", "3:boats", "5:anchors", "6:skulls", "7:palms", "7:anchors"]  # never dies


def test_dock_death_dealer_takes_antes_and_five_from_everyone():
    r = play(["D", "P1", "P2", "P3"], "D", "K:skulls",
             ["A:anchors", "Q:anchors", "Q:boats", "Q:crabs", "K:boats", "K:crabs", "K:flowers"], [])
    o = r.outcome
    assert o.end == "dock_death" and o.dock_death and o.dealer_wins and o.dead_at == 2 and o.ended_at == 2
    assert [e.kind for e in r.entries] == ["ante", "pot_award", "dock_penalty"]
    # antes 5 + 3 = 8 back to the dealer, plus 5 from each of 3 players
    assert r.stacks == {"D": 50 - 5 + 8 + 15, "P1": 44, "P2": 44, "P3": 44}
    assert r.pot == 0 and total(r) == 200
    with pytest.raises(IllegalActionError, match="died on the dock"):
        r.apply(Call("P1", "live"))


def test_dock_death_takes_the_carried_pot_too():
    r = play(["D", "P1"], "D", "K:skulls",
             ["A:anchors", "Q:anchors", "Q:boats", "Q:crabs", "K:boats", "K:crabs", "K:flowers"], [], pot_carry=3)
    assert r.stacks == {"D": 50 - 5 + 9 + 5, "P1": 44} and r.pot == 0


def test_nobody_right_dealer_takes_the_pot():
    # every player calls die on the 7th card, but it lives
    hand = LIVING_SET
    calls = [{"P1": "live", "P2": "live"}] * 4 + [{"P1": "die", "P2": "die"}]
    r = play(["D", "P1", "P2"], "D", "K:crabs", hand, calls)
    o = r.outcome
    assert o.end == "lived" and o.dead_at is None and o.winners == () and o.dealer_wins
    assert o.pot == 7 + 10
    assert r.stacks == {"D": 45 + 17, "P1": 44, "P2": 44} and r.pot == 0


def test_hand_lives_players_right_all_the_way_odd_coin_carries():
    hand = LIVING_SET
    calls = [{"P1": "live", "P2": "live", "P3": "live"}] * 4 + [{"P1": "live", "P2": "live", "P3": "die"}]
    r = play(["D", "P1", "P2", "P3"], "D", "K:crabs", hand, calls, pot_carry=0)
    o = r.outcome
    # pot: antes 8 + 5 rounds x 3 = 23 -> 11 each to P1 and P2, 1 coin stays
    assert o.end == "lived" and o.winners == ("P1", "P2") and o.pot == 23
    assert r.stacks == {"D": 45, "P1": 50 - 6 + 11, "P2": 50 - 6 + 11, "P3": 44}
    assert r.pot == 1 and total(r) == 200


def test_everyone_out_early_round_ends_and_rest_is_shown():
    r = PowderkegRound(["D", "P1", "P2"], "D")
    r.apply(Dock(C("K:crabs")))
    for c in LEGAL_SET[:2]:
        r.apply(Reveal(C(c)))
    r.apply(Call("P1", "die"))
    r.apply(Call("P2", "die"))
    r.apply(Reveal(C(LEGAL_SET[2])))  # lives: both wrong
    assert r.phase == "showing" and r.end == "all_out"
    with pytest.raises(IllegalActionError, match="nobody was left in after card 3"):
        r.apply(Call("P1", "live"))
    for c in LEGAL_SET[3:]:
        r.apply(Reveal(C(c)))
    o = r.outcome
    assert o.end == "all_out" and o.ended_at == 3 and o.dead_at == 7 and o.dealer_wins and o.set_legal
    assert r.stacks == {"D": 45 + 9, "P1": 48, "P2": 48}


def test_all_fold_ends_the_round_without_a_card():
    r = play(["D", "P1", "P2"], "D", "K:crabs", LEGAL_SET, [{"P1": "fold", "P2": "fold"}])
    o = r.outcome
    assert o.end == "all_out" and o.ended_at == 2 and o.dealer_wins
    assert r.rounds[-1].card is None
    assert r.stacks == {"D": 45 + 7, "P1": 49, "P2": 49}
    assert r.out == {"P1": "folded on card 3", "P2": "folded on card 3"}


def test_misdeal_found_when_the_rest_is_shown_voids_the_round():
    # the hand dies on card 4 (Q:crabs with 2:crabs); card 5, shown afterwards, is lower: the set was illegal
    hand = ["A:flowers", "2:crabs", "3:boats", "Q:crabs", "7:skulls", "K:palms", "K:flowers"]
    calls = [{"P1": "live", "P2": "die"}, {"P1": "die"}]
    r = play(["D", "P1", "P2"], "D", "K:anchors", hand, calls)
    o = r.outcome
    assert o.end == "dead" and o.ended_at == 4 and o.dead_at == 4
    assert not o.set_legal and o.misdeal and "card 5 (7:skulls) is lower than card 4 (Q:crabs)" in o.set_problem
    assert o.winners == () and not o.dealer_wins  # P1 called it right, but the round is void
    assert [e.kind for e in r.entries][-1] == "refund"
    assert r.stacks == {"D": 50, "P1": 50, "P2": 50} and r.pot == 0


def test_misdeal_seen_in_play_ends_the_round_and_refunds_bets():
    hand = ["A:flowers", "2:crabs", "7:boats", "3:anchors", "6:skulls", "7:palms", "K:flowers"]
    r = play(["D", "P1", "P2"], "D", "K:crabs", hand,
             [{"P1": "live", "P2": "live"}, {"P1": "live", "P2": "die"}], pot_carry=1)
    o = r.outcome
    assert o.end == "misdeal" and o.ended_at == 4 and o.misdeal
    assert r.stacks == {"D": 50, "P1": 50, "P2": 50} and r.pot == 1  # the carried coin stays in the pot


def test_misdeal_house_rule_dealer_pays():
    hand = ["2:crabs", "A:flowers", "3:boats", "5:anchors", "6:skulls", "7:palms", "K:flowers"]
    r = play(["D", "P1", "P2", "P3"], "D", "K:crabs", hand, [],
             options=Options(misdeal="dealer_pays", misdeal_fine=3))
    o = r.outcome
    assert o.end == "misdeal" and o.ended_at == 2
    assert [e.kind for e in r.entries] == ["ante", "refund", "penalty"]
    assert r.stacks == {"D": 41, "P1": 53, "P2": 53, "P3": 53}


def test_misdeal_beats_dock_death():
    hand = ["A:anchors", "Q:anchors", "3:boats", "Q:crabs", "K:boats", "K:crabs", "K:flowers"]
    r = play(["D", "P1"], "D", "K:skulls", hand, [])
    o = r.outcome
    assert o.dock_death and o.misdeal and r.stacks == {"D": 50, "P1": 50}


def test_equal_ranks_in_any_order_are_legal():
    hand = ["A:flowers", "A:crabs", "3:boats", "3:anchors", "3:skulls", "Q:palms", "Q:flowers"]
    r = play(["D", "P1"], "D", "K:crabs", hand, [{"P1": "live"}] * 5)
    assert r.outcome.set_legal and r.outcome.dead_at == 7  # A:flowers + Q:flowers


# ------------------------------------------------------------------------------------------ legality, undo


def test_illegal_actions_give_reasons_and_change_nothing():
    r = PowderkegRound(PLAYERS, "Cowen")
    assert r.call_order == ("Dougherty", "Eron", "Alfonse", "Beatrice")
    with pytest.raises(IllegalActionError, match="dock a card"):
        r.apply(Reveal(C("A:red")))
    r.apply(Dock(C("K:anchors")))
    with pytest.raises(IllegalActionError, match="already set"):
        r.apply(Dock(C("K:red")))
    with pytest.raises(IllegalActionError, match="docked card"):
        r.apply(Reveal(C("K:anchors")))
    r.apply(Reveal(C("A:flowers")))
    with pytest.raises(IllegalActionError, match="not all turned up"):
        r.apply(Call("Dougherty", "live"))
    with pytest.raises(IllegalActionError, match="already revealed as card 1"):
        r.apply(Reveal(C("A:flowers")))
    r.apply(Reveal(C("A:crabs")))
    before = r.snapshot()
    for action, msg in [
        (Call("Cowen", "live"), "dealer"),
        (Call("Eron", "live"), "Dougherty's turn"),
        (Call("Zed", "live"), "not at this table"),
        (Call("Dougherty", "maybe"), "live, die or fold"),
        (Reveal(C("3:boats")), "waiting for Dougherty"),
    ]:
        with pytest.raises(IllegalActionError, match=msg):
            r.apply(action)
        assert r.snapshot() == before
    assert r.legal_actions() == [Call("Dougherty", c) for c in ("live", "die", "fold")]
    r.apply(Call("Dougherty", "fold"))
    r.apply(Call("Eron", "die"))
    with pytest.raises(IllegalActionError, match="already called die"):
        r.apply(Call("Eron", "live"))
    r.apply(Call("Alfonse", "live"))
    r.apply(Call("Beatrice", "live"))
    with pytest.raises(IllegalActionError, match="all calls are in"):
        r.apply(Call("Beatrice", "live"))
    r.apply(Reveal(C("3:boats")))
    with pytest.raises(IllegalActionError, match=r"out of the hand \(folded on card 3\)"):
        r.apply(Call("Dougherty", "live"))
    with pytest.raises(IllegalActionError, match=r"out of the hand \(called die on card 3"):
        r.apply(Call("Eron", "live"))
    assert r.in_players == ("Alfonse", "Beatrice")


def test_undo_is_exact_all_the_way_back():
    r = PowderkegRound(PLAYERS, "Alfonse")
    snaps, stacks, pots = [], [], []
    ex = RULEBOOK_EXAMPLE
    hand = [C(c) for c in ex["hand"]]
    actions = [Dock(C(ex["dock"])), Reveal(hand[0]), Reveal(hand[1])]
    for i, entry in enumerate(ex["calls"]):
        actions += [Call(p, entry[p]) for p in ("Beatrice", "Cowen", "Dougherty", "Eron") if p in entry]
        actions.append(Reveal(hand[2 + i]))
    actions.append(Reveal(hand[6]))
    for a in actions:
        snaps.append(r.snapshot())
        stacks.append(r.stacks)
        pots.append(r.pot)
        r.apply(a)
    final = (r.snapshot(), r.stacks, r.pot)
    for a in reversed(actions):
        assert r.undo() == a
        assert (r.snapshot(), r.stacks, r.pot) == (snaps.pop(), stacks.pop(), pots.pop())
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        r.undo()
    for a in actions:
        r.apply(a)
    assert (r.snapshot(), r.stacks, r.pot) == final


def test_bad_tables_and_options():
    with pytest.raises(PirateTableError, match="2-8 players"):
        PowderkegRound(["A"], "A")
    with pytest.raises(PirateTableError, match="dealer"):
        PowderkegRound(["A", "B"], "C")
    with pytest.raises(PirateTableError, match="misdeal"):
        Options(misdeal="shrug")
    with pytest.raises(PirateTableError, match="opening"):
        Options(opening=7)


def test_variant_six_cards_one_opening():
    hand = ["A:flowers", "2:crabs", "3:boats", "5:anchors", "6:skulls", "K:palms"]
    r = play(["D", "P1"], "D", "K:crabs", hand, [{"P1": "live"}] * 4 + [{"P1": "live"}],
             options=Options(hand_size=6, opening=1, dealer_ante=3, bet=2))
    o = r.outcome
    assert o.end == "lived" and o.winners == ("P1",) and o.pot == 3 + 1 + 5 * 2
    assert r.stacks == {"D": 47, "P1": 50 - 1 - 10 + 14}


# ------------------------------------------------------------------------------------------ fair dealing


def test_deal_rotation_passes_left_and_warns_until_once_around():
    rot = DealRotation(["A", "B", "C"], dealer="B")
    assert rot.next_dealer == "C"
    assert rot.check_leave("A")  # nobody has dealt yet
    assert rot.deal_done() == "C" and rot.deal_done() == "A"
    w = rot.check_leave("C")
    assert w and "still to deal: A" in w[0]
    assert rot.deal_done() == "B" and rot.gone_around
    assert rot.check_leave("C") == [] and rot.check_join("D") == []
    assert rot.join("D") == []  # sits at the dealer's right: deals last in the new orbit
    assert rot.seats == ["A", "D", "B", "C"] and rot.still_to_deal == ["B", "C", "A", "D"]
    w = rot.join("E", seat=0)
    assert w and "E joins before the deal has gone once around" in w[0]
    assert rot.history == ["B", "C", "A"]


def test_deal_rotation_dealer_leaving_passes_the_deal_left():
    rot = DealRotation(["A", "B", "C"])
    w = rot.leave("A")
    assert w and rot.dealer == "B" and rot.seats == ["B", "C"]
    assert "fewer than 2" in rot.leave("C")[-1]
    with pytest.raises(PirateTableError):
        rot.leave("Zed")
    full = DealRotation([f"P{i}" for i in range(8)])
    with pytest.raises(PirateTableError, match="full"):
        full.join("P8")


def test_entries_always_balance():
    r = play(PLAYERS, "Alfonse", RULEBOOK_EXAMPLE["dock"], RULEBOOK_EXAMPLE["hand"], RULEBOOK_EXAMPLE["calls"])
    for e in r.entries:
        assert sum(v for _, v in e.postings) == 0
    assert any(a == POT for e in r.entries for a, _ in e.postings)
