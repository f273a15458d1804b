"""Bluffing Battles rules: fights, battles and hidden prizes, repeated battles, short piles, the game end with a
battle in progress, hands into score piles, ties, reshuffles and the limit loss, illegal actions, exact undo."""

from collections import Counter

import pytest

from companion.decks.standard52 import StdCard
from companion.errors import IllegalActionError
from companion.games.bluffing_battles import rules
from companion.games.bluffing_battles.rules import (RESHUFFLE, REVEAL, VARIANTS, Game, Play, Reshuffle,
                                                    State)


def c(text: str) -> tuple:
    return tuple(StdCard.parse(x) for x in text.split())


def st(variant, piles, hands, scores=("", ""), pot=("", ""), battle=()) -> State:
    """A mid-game state (rules unit tests may start anywhere; the referee tests start at the deal)."""
    return State(players=("Ann", "Ben"), variant=VARIANTS[variant], piles=(c(piles[0]), c(piles[1])),
                 hands=(c(hands[0]), c(hands[1])), scores=(c(scores[0]), c(scores[1])),
                 pot=(c(pot[0]), c(pot[1])), battle=tuple((c(a)[0], c(b)[0]) for a, b in battle))


def play(s, a, b):
    return rules.apply(s, Play((StdCard.parse(a), StdCard.parse(b))))


def test_variants_are_the_contracts():
    assert {k: (v.decks, v.prizes, v.until_all, v.limit) for k, v in VARIANTS.items()} == {
        "two-decks": (2, 2, False, None), "one-deck": (1, 1, False, None),
        "two-decks-until-all": (2, 3, True, 13), "one-deck-until-all": (1, 2, True, 7)}
    red, black = rules.shares("one-deck")
    assert len(red) == len(black) == 26 and all(x.is_red for x in red) and not any(x.is_red for x in black)
    assert sum(rules.all_cards("two-decks").values()) == 104 and set(rules.all_cards("two-decks").values()) == {2}


def test_the_deal_gives_the_top_three_as_hands():
    a, b = rules.shares("two-decks")
    s = rules.new_game(["Ann", "Ben"], "two-decks", [a, b[::-1]])
    assert s.hands == (a[:3], b[::-1][:3]) and len(s.piles[0]) == len(s.piles[1]) == 49 and s.phase == REVEAL
    assert rules.conserved(s)


def test_higher_card_wins_both_then_both_draw():
    s = play(st("two-decks", ("4C 5C", "4D 5D"), ("QS 2H 3H", "5D 2S 3S")), "QS", "5D")
    assert s.scores == (c("QS 5D"), ())
    assert s.hands == (c("2H 3H 4C"), c("2S 3S 4D")) and s.piles == (c("5C"), c("5D"))
    f = s.fights[-1]
    assert (f.winner, f.cards_won, f.reveals) == (0, 2, ((StdCard.parse("QS"), StdCard.parse("5D")),))
    assert "Ann's QS beats 5D" in s.last
    s2 = play(s, "2H", "4D")  # the second player wins, suits never matter
    assert s2.scores[1] == c("2H 4D") and s2.fights[-1].winner == 1


def test_ace_is_high_and_suits_never_matter():
    s = play(st("one-deck", ("2H", "2S"), ("AH 3H 4H", "KS 3S 4S")), "AH", "KS")
    assert s.fights[-1].winner == 0
    s = play(st("one-deck", ("2H", "2S"), ("10H 3H 4H", "10S 3S 4S")), "10H", "10S")
    assert s.in_battle  # equal values, different suits: a battle


def test_battle_draws_one_then_two_hidden_prizes_then_winner_takes_eight():
    s = st("two-decks", ("JD 9H 8H 2C 3C", "4S 9S 8S 2D 3D"), ("10H 6C 7C", "10S 6D 7D"))
    s = play(s, "10H", "10S")
    assert s.phase == REVEAL and s.in_battle
    assert s.hands == (c("6C 7C JD"), c("6D 7D 4S"))  # drew one
    assert s.pot == (c("10H 9H 8H"), c("10S 9S 8S"))  # two hidden prizes each
    assert s.piles == (c("2C 3C"), c("2D 3D"))
    s = play(s, "JD", "6D")
    assert s.fights[-1].cards_won == 8 and s.fights[-1].winner == 0 and len(s.fights[-1].reveals) == 2
    assert Counter(s.scores[0]) == Counter(c("10H 9H 8H 10S 9S 8S JD 6D"))
    assert s.hands == (c("6C 7C 2C"), c("7D 4S 2D")) and s.pot == ((), ()) and not s.in_battle


def test_repeated_battle_takes_fourteen_cards():
    """The rulebook's picture: 10s, then 9s, then the far player's Ace wins all fourteen cards."""
    s = st("two-decks", ("9C 2H 3H AC 4H 5H 6H 7C", "9D 2S 3S KD 4S 5S 6S 7D"), ("10H QH QC", "10S JS JC"))
    s = play(s, "10H", "10S")
    s = play(s, "9C", "9D")
    assert s.in_battle and len(s.battle) == 2 and s.pot_size() == 12
    s = play(s, "AC", "KD")
    f = s.fights[-1]
    assert (f.winner, f.cards_won, len(f.reveals)) == (0, 14, 3) and len(s.scores[0]) == 14


def test_one_deck_puts_one_hidden_prize():
    s = play(st("one-deck", ("2H 3H 4H", "2S 3S 4S"), ("7H 9H 8H", "7S 9S 8S")), "7H", "7S")
    assert s.pot == (c("7H 3H"), c("7S 3S"))
    s = play(s, "9H", "8S")
    assert s.fights[-1].cards_won == 6


def test_short_pile_puts_fewer_prizes_and_the_game_ends_after_the_battle():
    """The rulebook's example: 3s at war, one card drawn, only one left for the hidden prize; the far player's
    10 wins all six cards, then the game ends and the hands go into the score piles."""
    s = st("two-decks", ("5H 6H", "5S 6S"), ("3H 10H 2H", "3S 9S 2S"), scores=("AH", "AS KS"))
    s = play(s, "3H", "3S")
    assert s.pot == (c("3H 6H"), c("3S 6S")) and s.piles == ((), ()) and s.phase == REVEAL
    assert s.battle_prizes == (1, 1)
    s = play(s, "10H", "9S")
    assert s.over and s.fights[-1].cards_won == 6 and s.fights[-1].winner == 0
    # Ann: AH + 6 won + hand (2H 5H); Ben: AS KS + hand (2S 5S)
    assert s.score() == (9, 4) and s.winner == 0 and s.hands == ((), ())
    assert "hands go into the score piles" in s.reason


def test_game_ends_when_a_draw_is_impossible_outside_a_battle_and_may_tie():
    s = play(st("one-deck", ("", ""), ("KH 2H 3H", "QS 4S 5S"), scores=("", "AS")), "KH", "QS")
    assert s.over and s.score() == (4, 3) and s.winner == 0
    s = play(st("one-deck", ("", ""), ("KH 2H 3H", "QS 4S 5S"), scores=("", "AS 2S")), "KH", "QS")
    assert s.over and s.score() == (4, 4) and s.winner == "tie" and "tie" in s.reason


def test_empty_pile_is_fine_until_a_draw_is_needed():
    s = play(st("two-decks", ("4H", "4S"), ("KH 2H 3H", "QS 5S 6S")), "KH", "QS")
    assert s.piles == ((), ()) and s.phase == REVEAL  # drew the last cards, game goes on
    s = play(s, "2H", "5S")
    assert s.over


def test_battle_without_cards_to_reveal_gives_each_their_own_cards_back():
    s = st("two-decks", ("", ""), ("5H 6H 7H", "5S 6S 7S"), scores=("2C", "3C"))
    s = play(s, "5H", "5S")
    assert s.phase == REVEAL and s.in_battle  # no draw, no prizes, the battle goes on from the hands
    s = play(s, "6H", "6S")
    s = play(s, "7H", "7S")
    assert s.over
    f = s.fights[-1]
    assert (f.winner, f.cards_won, len(f.reveals)) == (None, 0, 3)
    assert Counter(s.scores[0]) == Counter(c("2C 5H 6H 7H")) and Counter(s.scores[1]) == Counter(c("3C 5S 6S 7S"))
    assert s.winner == "tie"


def test_until_all_reshuffles_the_score_pile_at_need():
    score = "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2D"  # 14 cards: more than the limit of 13
    s = st("two-decks-until-all", ("", "4S 5S"), ("KD 2C 3C", "QS 2S 3S"), scores=(score, ""))
    s = play(s, "KD", "QS")
    assert s.phase == RESHUFFLE and rules.needs_reshuffle(s) == (0,)
    assert len(s.scores[0]) == 16  # the fight's two cards went in before the draw
    with pytest.raises(IllegalActionError, match="must first turn the score pile"):
        play(s, "2C", "2S")
    with pytest.raises(IllegalActionError, match="not a permutation"):
        rules.apply(s, Reshuffle(0, s.scores[0][1:] + s.scores[0][:1] + c("AS")))
    with pytest.raises(IllegalActionError, match="no reshuffle"):
        rules.apply(s, Reshuffle(1, ()))
    order = tuple(reversed(s.scores[0]))
    s2 = rules.apply(s, Reshuffle(0, order))
    assert s2.phase == REVEAL and s2.scores[0] == () and s2.hands[0] == c("2C 3C") + order[:1]
    assert s2.piles[0] == order[1:] and s2.reshuffles == (1, 0)


def test_until_all_limit_loss_at_a_draw():
    s = st("one-deck-until-all", ("", "4S"), ("KD 2H 3H", "QS 2S 3S"), scores=("4D 5D 6D 7D 8D", "9S"))
    s = play(s, "KD", "QS")
    # Ann has 7 cards in her score pile: 7 or fewer, she loses at once; hands are not added
    assert s.over and s.winner == 1 and s.score() == (7, 1) and "7 or fewer" in s.reason


def test_until_all_loss_mid_battle_counts_the_battle_for_nobody():
    s = st("two-decks-until-all", ("9H", "9S 2D 3D 4D"), ("5H 6H 7H", "5S 6S 7S"), scores=("2C 3C", "AS"))
    s = play(s, "5H", "5S")  # both draw one; Ann then needs 3 prizes from an empty pile, score pile 2
    assert s.over and s.winner == 1 and "even mid-battle" in s.reason
    f = s.fights[-1]
    assert (f.winner, f.cards_won) == (None, 0) and s.score() == (2, 1) and s.pot_size() == 2


def test_until_all_prizes_from_a_short_pile_use_the_reshuffled_pile():
    score = " ".join(f"{r}C" for r in "2 3 4 5 6 7 8 9 10 J Q K A".split()) + " 2D"  # 14
    s = st("two-decks-until-all", ("8H 9H", "8S 9S 10S JS"), ("5H 6H 7H", "5S 6S 7S"), scores=(score, ""))
    s = play(s, "5H", "5S")
    assert s.phase == RESHUFFLE and rules.needs_reshuffle(s) == (0,)  # 1 card left for 3 prizes
    order = c(score)
    s = rules.apply(s, Reshuffle(0, order))
    assert s.pot[0] == c("5H 9H") + order[:2] and s.pot[1] == c("5S 9S 10S JS")
    assert s.piles[0] == order[2:] and s.phase == REVEAL


def test_until_all_both_short_one_cannot_then_the_others_reshuffle_does_not_happen():
    big = "2H 3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2D"
    s = st("two-decks-until-all", ("", ""), ("KD 2C 3C", "QS 2S 3S"), scores=(big, "4S"))
    s = play(s, "KD", "QS")
    assert s.over and s.winner == 0 and s.score() == (16, 1) and s.reshuffles == (0, 0)


def test_until_all_both_cannot_is_a_tie():
    s = st("one-deck-until-all", ("", ""), ("KD 2H 3H", "QS 2S 3S"), scores=("4D", "4S 5S 6S"))
    s = play(s, "KD", "QS")
    assert s.over and s.winner == "tie" and "a tie" in s.reason


def test_both_reshuffle_in_the_same_step_in_any_order():
    a = "2H 3H 4H 5H 6H 7H 8H 2D"  # 8 cards: more than the limit of 7
    b = "2S 3S 4S 5S 6S 7S 8S 2C"
    s = st("one-deck-until-all", ("", ""), ("KD 9H 10H", "KS 9S 10S"), scores=(a, b))
    s = play(s, "KD", "KS")
    assert rules.needs_reshuffle(s) == (0, 1)
    s1 = rules.apply(rules.apply(s, Reshuffle(1, c(b))), Reshuffle(0, c(a)))
    s2 = rules.apply(rules.apply(s, Reshuffle(0, c(a))), Reshuffle(1, c(b)))
    assert s1.piles == s2.piles and s1.pot == s2.pot and s1.phase == REVEAL
    assert s1.hands == (c("9H 10H 2H"), c("9S 10S 2S")) and s1.pot == (c("KD 3H 4H"), c("KS 3S 4S"))


def test_illegal_reveals_change_nothing():
    s = st("two-decks", ("4C", "4D"), ("QS 2H 3H", "5D 2S 3S"))
    before = s
    with pytest.raises(IllegalActionError, match=r"AS is not in Ann's hand \(QS, 2H, 3H\)"):
        play(s, "AS", "5D")
    with pytest.raises(IllegalActionError, match="not in Ben's hand"):
        play(s, "QS", "QS")
    assert s == before
    over = play(st("one-deck", ("", ""), ("KH 2H 3H", "QS 4S 5S")), "KH", "QS")
    with pytest.raises(IllegalActionError, match="the game is over"):
        play(over, "2H", "4S")
    with pytest.raises(IllegalActionError):
        rules.apply(s, "QS")


def test_legal_actions_are_the_hand_pairs():
    s = st("two-decks", ("4C", "4D"), ("QS 2H 2H", "5D 2S 3S"))
    acts = rules.legal_actions(s)
    assert len(acts) == 2 * 3 and all(isinstance(a, Play) for a in acts)
    for a in acts:
        rules.apply(s, a)


def test_undo_is_exact():
    g = Game.start(["Ann", "Ben"], "one-deck", rules.shares("one-deck"))
    states = [g.state]
    while not g.state.over:
        a = min(g.state.hands[0], key=lambda x: x.rank)
        b = min(g.state.hands[1], key=lambda x: x.rank)
        g.play(a, b)
        states.append(g.state)
    while g.history:
        assert g.state == states.pop()
        g.undo()
    assert g.state == states.pop() and not states
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        g.undo()


def test_unknown_faces_at_the_table():
    """The table does not know a shuffled pile: unknown cards (None) are drawn and stand for any face."""
    s = rules.new_game(["Ann", "Ben"], "one-deck")
    assert s.hands == ((None,) * 3, (None,) * 3)
    s = play(s, "KH", "QS")
    assert s.scores[0] == c("KH QS") and s.hands == ((None,) * 3, (None,) * 3)
    assert rules.conserved(s)
