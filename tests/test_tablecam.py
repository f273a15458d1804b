"""The camera interface of the games (companion/tablecam.py and each game's camera.py): reads mapped to the seats,
the plays, reveals and turned-up cards they make, through the same rules as a tap. Pure: no models here (the
in-play flows with the camera models are in tests/test_ui_camera_play.py)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.tablecam import FAR_HINT, ScanRequest, map_reading, nearest_seats
from vision.detect import CardRead


def _card_at(x, y, rank, letter, w=60, h=84):
    corners = np.array([[x - w / 2, y - h / 2], [x + w / 2, y - h / 2], [x + w / 2, y + h / 2], [x - w / 2, y + h / 2]])
    return CardRead("card", corners, rank, letter, 0.999 if rank is not None else 0.3)


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 8), turn=st.floats(-0.3, 0.3), data=st.data())
def test_each_card_goes_to_the_seat_it_lies_in_front_of(n, turn, data):
    """Cards on a ring around the table, each within a third of a seat's spacing of its seat, turned together a
    little, the ring squashed by the camera's tilt: every card goes to its own seat."""
    step = 2 * math.pi / n
    jit = data.draw(st.lists(st.floats(-step / 4, step / 4), min_size=n, max_size=n))
    squash = data.draw(st.floats(0.55, 1.0))
    order = data.draw(st.permutations(range(n)))
    pts = []
    for k in order:  # the reads come in any order
        a = math.pi / 2 + k * step + turn * step + jit[k] * 0.4
        pts.append((640 + 300 * math.cos(a), 360 + 300 * squash * math.sin(a)))
    assert nearest_seats(pts, n, (1280, 720)) == list(order)


def test_fewer_cards_than_seats_go_to_their_nearest_seats_and_too_many_are_refused():
    # 4 seats: 6 o'clock (seat 0), 9 (seat 1), 12 (seat 2), 3 (seat 3); cards at 9 and 3 o'clock only
    assert nearest_seats([(1000, 360), (200, 380)], 4, (1280, 720)) == [3, 1]
    with pytest.raises(ValueError, match="3 cards for 2 seats"):
        nearest_seats([(0, 0), (1, 1), (2, 2)], 2)


def test_map_reading_seats_unreadable_and_duplicates_are_left_for_a_tap():
    req = ScanRequest("pirates72", ("Ann", "Ben", "Cy", "Dee"), layout="seats", title="cards of the trick")
    reads = [_card_at(640, 600, 3, "A"), _card_at(300, 360, None, None), _card_at(640, 120, 5, "B"),
             _card_at(980, 360, 5, "B")]
    r = map_reading(reads, req, (1280, 720))
    # the same card twice on one deck is a misread: both seats are left for a tap, never guessed
    assert r.cards == {"Ann": "3A", "Ben": None, "Cy": None, "Dee": None}
    assert r.unreadable == ["Ben", "Cy", "Dee"] and r.placed == {0: 1, 1: 2, 2: 3, 3: 4}
    assert r.note == ("Read 1 of 4 cards of the trick. Unreadable (Ben, Cy, Dee): enter by touch. "
                      "Two cards looked like 5B: check them.")
    two = map_reading(reads, ScanRequest("pirates72", ("Ann", "Ben", "Cy", "Dee"), layout="seats", one_deck=False),
                      (1280, 720))
    assert two.cards == {"Ann": "3A", "Ben": None, "Cy": "5B", "Dee": "5B"}  # two decks: the same card twice is fine
    short = map_reading(reads[:3], req, (1280, 720))
    assert short.cards == {} and short.note.startswith("Found 3 cards for 4 players")


def test_a_card_read_as_a_code_another_card_claimed_is_left_for_a_tap_with_it():
    """The scanner gives a code two cards were read as to the surer read and leaves the other unread, with the code it
    claimed (vision.detect.unique_cards): on one deck that is the same card twice, so both are left for a tap."""
    req = ScanRequest("pirates72", ("Ann", "Ben", "Cy"), layout="apart")
    loser = _card_at(300, 360, None, None)
    loser.claimed = "0A"
    reads = [_card_at(640, 600, 0, "A"), loser, _card_at(980, 360, 5, "B")]
    r = map_reading(reads, req)
    assert sorted(v for v in r.cards.values() if v) == ["5B"] and len(r.unreadable) == 2
    assert r.note.endswith("Two cards looked like 0A: check them.")
    two = map_reading(reads, ScanRequest("pirates72", ("Ann", "Ben", "Cy"), one_deck=False))
    assert sorted(v for v in two.cards.values() if v) == ["0A", "5B"]  # two decks: a 0A each is no misread


def test_the_games_hold_leaves_a_card_read_for_a_tap_with_its_reason():
    """A request's ``hold`` (the game's rule: Pirate's Bluff leaves a card that could name a wrong first bidder)
    empties that card's seat for a tap and says why, apart from the cards that were unreadable; it is asked only of a
    complete reading, and a card already left as a misread stays one."""
    asked = []

    def hold(reads, players, taught):
        asked.append((len(reads), players, taught))
        return {i: "it may bid first and is not read sure" for i, c in enumerate(reads) if c.rank == 0}

    req = ScanRequest("pirates72", ("Ann", "Ben", "Cy"), hold=hold)
    reads = [_card_at(640, 600, 0, "A"), _card_at(300, 360, None, None), _card_at(980, 360, 5, "B")]
    r = map_reading(reads, req)
    assert r.cards == {"Ann": None, "Ben": None, "Cy": "5B"} and r.unreadable == ["Ann", "Ben"] and r.held == [0]
    assert r.asked == ["Ann"]
    assert asked == [(3, 3, False)]
    assert r.note == ("Read 1 of 3 starting cards. Unreadable (Ben): enter by touch. "
                      "Not sure enough (Ann: it may bid first and is not read sure): enter by touch.")
    assert map_reading(reads[:2], req).cards == {} and asked == [(3, 3, False)]  # a reading not complete: not asked
    map_reading(reads, dataclasses.replace(req, taught=True))  # the camera reads a taught deck: the hold is told
    assert asked == [(3, 3, False), (3, 3, True)]
    plain = map_reading(reads, ScanRequest("pirates72", ("Ann", "Ben", "Cy")))
    assert plain.cards["Ann"] == "0A" and plain.held == []
    twice = [_card_at(640, 600, 0, "A"), _card_at(300, 360, 0, "A"), _card_at(980, 360, 5, "B")]
    r = map_reading(twice, req)
    assert r.held == [] and r.note.endswith("Two cards looked like 0A: check them.") and "Not sure" not in r.note


def test_a_reading_not_complete_from_a_far_camera_says_to_bring_it_closer():
    req = ScanRequest("pirates72", ("Ann", "Ben", "Cy", "Dee"), layout="seats", title="cards of the trick")
    reads = [_card_at(640, 600, 3, "A"), _card_at(300, 360, 4, "C"), _card_at(640, 120, 5, "B"),
             _card_at(980, 360, None, None)]
    short = map_reading(reads[:3], req, (1280, 720), far=True)
    assert short.cards == {} and short.note.startswith("Found 3 cards for 4 players") and short.note.endswith(FAR_HINT)
    assert not map_reading(reads[:3], req, (1280, 720)).note.endswith(FAR_HINT)  # the cards did not look small
    unread = map_reading(reads, req, (1280, 720), far=True)
    assert unread.unreadable == ["Dee"] and unread.note.endswith(FAR_HINT)
    whole = map_reading(reads[:3] + [_card_at(980, 360, 7, "H")], req, (1280, 720), far=True)
    assert not whole.unreadable and FAR_HINT not in whole.note  # every card read: nothing to mend
    new = map_reading([], ScanRequest("pirates72", ("Ann", "Ben"), layout="new", count=1), (1280, 720), far=True)
    assert new.note.endswith(FAR_HINT)


def test_map_reading_new_cards_left_to_right_and_the_starting_cards_apart():
    new = ScanRequest("pirates72", ("Ann", "Ben"), layout="new", count=1, known=("3A",))
    r = map_reading([_card_at(900, 300, 4, "C"), _card_at(200, 300, 3, "A")], new)
    assert r.new == ["4C"] and r.cards == {}
    r = map_reading([_card_at(900, 300, 4, "C"), _card_at(200, 300, 6, "D")], new)
    assert r.new == [] and "Found 2 new cards, expected 1" in r.note
    r = map_reading([_card_at(900, 300, None, None), _card_at(200, 300, 3, "A")], new)
    assert r.new == [] and "could not be read" in r.note
    start = map_reading([_card_at(640, 600, 3, "A"), _card_at(640, 100, 0, "H")], ScanRequest("pirates72", ("A", "B")))
    assert start.cards == {"A": "3A", "B": "0H"} and start.note == "Read 2 of 2 starting cards."


@settings(max_examples=200, deadline=None)
@given(k=st.integers(1, 4), m=st.integers(2, 4), angle=st.floats(-math.pi, math.pi), gap=st.floats(70, 110),
       shown=st.data())
def test_new_cards_go_on_the_row_of_the_recorded_ones_whatever_way_it_lies(k, m, angle, gap, shown):
    """A row of k recorded cards then m new ones, lying in any direction in the frame and read in any order: the
    new cards come out in the row's order, going on from the recorded ones; some recorded cards may be out of view
    as long as one is in it. With none in view, or the row's recorded cards out of order, nothing is guessed."""
    ranks = list(range(1, 9))
    row = [f"{r}{'ABCDEFGH'[i]}" for i, r in enumerate(ranks[: k + m])]
    ux, uy = math.cos(angle), math.sin(angle)
    x0, y0 = 640 - ux * gap * (k + m - 1) / 2, 360 - uy * gap * (k + m - 1) / 2
    reads = [_card_at(x0 + ux * gap * i, y0 + uy * gap * i, int(t[0]), t[1]) for i, t in enumerate(row)]
    visible = shown.draw(st.lists(st.booleans(), min_size=k, max_size=k).filter(any))
    keep = [r for i, r in enumerate(reads) if i >= k or visible[i]]
    keep = shown.draw(st.permutations(keep))
    req = ScanRequest("pirates72", ("Ann", "Ben"), layout="new", count=m, row=tuple(row[:k]))
    assert map_reading(keep, req).new == row[k:]
    unseen = [r for i, r in enumerate(reads) if i >= k]
    res = map_reading(unseen, req)
    assert res.new == [] and "none of the cards turned up before in view" in res.note
    if k >= 2:  # the recorded cards swapped in the row: the order along it is not the hand's
        swapped = ScanRequest("pirates72", ("Ann", "Ben"), layout="new", count=m, row=(row[1], row[0]) + tuple(row[2:k]))
        res = map_reading(reads, swapped)
        assert res.new == [] and "not in the hand's order" in res.note


def test_new_cards_out_of_the_row_are_refused():
    req = ScanRequest("pirates72", ("Ann", "Ben"), layout="new", count=2, row=("1A", "2B"))
    reads = [_card_at(100, 300, 1, "A"), _card_at(200, 300, 2, "B"), _card_at(300, 300, 3, "C"),
             _card_at(400, 650, 4, "D")]
    res = map_reading(reads, req)
    assert res.new == [] and "do not lie in one row" in res.note


def test_seat_scenes_lay_each_card_in_front_of_its_seat():
    """The simulated table lays the cards where nearest_seats finds them, through the camera's perspective."""
    from vision.synth.suited import seat_scene

    for seed, cards in [(1, ["10H", "QS", "2C", "AD"]), (2, ["KH", "3D"]), (3, ["2S", "3S", "4S", "5S", "6S", "7S"])]:
        sc = seat_scene(seed, "standard52", [[c] for c in cards])
        assert [c.card for c in sc.cards] == cards
        seats = nearest_seats([c.quad.mean(0) for c in sc.cards], len(cards), (1280, 720))
        assert seats == list(range(len(cards)))
        for c in sc.cards:
            assert c.card_visible > 0.99 and (c.quad >= 0).all() and (c.quad[:, 0] < 1280).all()


# ------------------------------------------------------------------------------------------------ the games


def _whist_in_play():
    from companion.games.pirate_whist.table import WhistTable

    t = WhistTable.new(["A", "B", "C"], 3, dealer="A", mode="tricks")
    while t.phase == "bid":
        t.submit_bid(t.next_bidder(), 1)
    t.reveal()
    return t


def test_whist_trick_read_plays_in_order_from_the_leader_and_stops_at_a_revoke():
    from companion.games.pirate_whist.camera import plays_from_reading, trick_request

    t = _whist_in_play()
    req = trick_request(t, seed=3)
    assert req.layout == "seats" and req.seats == ("A", "B", "C") and req.deck == "standard52"
    lead = t.trick_view()["leader"]
    assert lead == "B" and len({c[0] for c in req.demo}) == 3 and t.play_warning("B", req.demo[1][0]) is None
    plan = plays_from_reading(t, {"A": "2H", "B": "AH", "C": "5C"})  # C fails to follow hearts: void in hearts
    assert plan.plays == (("B", "AH"), ("C", "5C"), ("A", "2H")) and plan.stop == ""
    for p, c in plan.plays:
        t.play_card(p, c)
    assert t.trick_view()["trick"] == 2 and t.trick_view()["leader"] == "B"
    # trick 2: C plays a heart after showing void in hearts: the camera saw a revoke; entry stops before it
    plan = plays_from_reading(t, {"A": "3H", "B": "KH", "C": "4H"})
    assert plan.plays == (("B", "KH"),) and plan.revoke and plan.stop.startswith("The camera saw C play 4H: Revoke!")
    plan = plays_from_reading(t, {"A": "3H", "B": "KH", "C": None})
    assert plan.plays == (("B", "KH"),) and plan.stop == "C's card could not be read: enter it by touch."
    t.play_card("B", "KH")
    plan = plays_from_reading(t, {"A": "3H", "B": "QH", "C": "4S"})
    assert plan.plays == () and "but KH was entered for B" in plan.stop
    assert trick_request(None) is None


def test_whist_demo_trick_is_legal_and_unseen():
    from companion.games.pirate_whist import rules
    from companion.games.pirate_whist.camera import demo_trick
    from companion.games.pirate_whist.rules import PlayCard

    t = _whist_in_play()
    t.play_card("B", "AH")
    for seed in range(20):
        cards = demo_trick(t.state, seed)
        assert cards[1] == "AH" and len(set(cards)) == 3
        s = t.state
        for p in ("C", "A"):
            c = rules.card(cards[("A", "B", "C").index(p)])
            assert rules.why_not(s, PlayCard(p, c)) is None
            s = rules.apply(s, PlayCard(p, c))


def test_battles_fight_read_reveals_through_the_same_door_as_a_tap():
    from companion.games.bluffing_battles.camera import fight_request, reveals_from_reading
    from companion.games.bluffing_battles.table import BattleTable

    t = BattleTable(["Ann", "Ben"], "one-deck", red=0)
    req = fight_request(t, seed=1)
    assert req.seats == ("Ann", "Ben") and req.one_deck and req.layout == "seats"
    red = [str(c) for c in t.playable(0)]
    black = [str(c) for c in t.playable(1)]
    assert req.demo[0][0] in red and req.demo[1][0] in black
    plan = reveals_from_reading(t, {"Ann": black[0], "Ben": black[1]})
    assert plan.reveals == () and f"Ann reveal {black[0]}, which Ann cannot reveal" in plan.stop
    plan = reveals_from_reading(t, {"Ann": red[0], "Ben": None})
    assert plan.reveals == (("Ann", red[0]),) and plan.stop == "Ben's card could not be read: tap it."
    t.reveal("Ann", red[0])
    plan = reveals_from_reading(t, {"Ann": red[0], "Ben": black[3]})
    assert plan.reveals == (("Ben", black[3]),) and plan.stop == ""
    assert not fight_request(BattleTable(["Ann", "Ben"], "two-decks")).one_deck


def test_powderkeg_reads_the_one_new_card_as_the_next_move():
    from companion.games.powderkeg.camera import moves_from_reading, turn_request
    from companion.games.powderkeg.rules import Dock, PowderkegRound, Reveal
    from companion.decks.island54 import IslandCard

    r = PowderkegRound(["Ann", "Ben", "Cy"], "Ann", {"Ann": 20, "Ben": 20, "Cy": 20})
    req = turn_request(r, seed=2)
    assert req.layout == "new" and req.count == 1 and req.known == () and req.title == "the dock card"
    assert moves_from_reading(r, ["K:anchors"]) == [Dock(IslandCard.parse("K:anchors"))]
    assert moves_from_reading(r, ["K:anchors", "2:boats"]) == []
    r.apply(Dock(IslandCard.parse("K:anchors")))
    req = turn_request(r, seed=2)
    assert req.known == ("K:anchors",) and req.demo_middle[0] == "K:anchors" and req.title == "card 1 turned up"
    assert moves_from_reading(r, ["2:boats"]) == [Reveal(IslandCard.parse("2:boats"))]


def test_powderkeg_showdown_reads_the_rest_of_the_hand_in_its_row():
    """The hand dies on card 3: the rest (4 cards) is asked for at once, in the row after the turned-up cards;
    the reading's cards become the round's reveals in the row's order, and the round settles."""
    from companion.decks.island54 import IslandCard
    from companion.games.powderkeg.camera import moves_from_reading, turn_request
    from companion.games.powderkeg.rules import Call, Dock, PowderkegRound, Reveal

    P = IslandCard.parse
    r = PowderkegRound(["Ann", "Ben", "Cy"], "Ann", {"Ann": 20, "Ben": 20, "Cy": 20})
    r.apply(Dock(P("K:skulls")))
    for c in ("A:anchors", "2:boats"):
        r.apply(Reveal(P(c)))
    for p in r.call_order:
        r.apply(Call(p, "die"))
    r.apply(Reveal(P("Q:anchors")))  # anchors A and Q: the hand dies
    assert r.phase == "showing"
    req = turn_request(r, seed=5)
    assert req.count == 4 and req.row == ("A:anchors", "2:boats", "Q:anchors") and req.known == ("K:skulls",)
    assert req.title == "the rest of the hand (4 cards)"
    demo = [P(c) for c in req.demo_middle]
    assert demo[:3] == list(r.revealed) and [c.order for c in demo] == sorted(c.order for c in demo)
    assert len(set(req.demo_middle) | {"K:skulls"}) == 8
    assert moves_from_reading(r, list(req.demo_middle[3:5])) == []  # 2 of the 4: not the rest of the hand
    moves = moves_from_reading(r, list(req.demo_middle[3:]))
    assert moves == [Reveal(c) for c in demo[3:]]
    for m in moves:
        r.apply(m)
    assert r.phase == "over" and r.outcome is not None
