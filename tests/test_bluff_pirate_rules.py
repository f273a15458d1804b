"""Bluff Pirate rules (pure): the turn phases, the islands, apply that refuses and changes nothing."""

from __future__ import annotations

import pytest

from companion.errors import IllegalActionError
from companion.games.bluff_pirate import rules as R


def honest(size, voter, vote=R.NOT_BLUFFING):
    return R.LaySet(("hat",), ("hat",) * (size - 1), voter, vote)


def test_phases_and_legal_kinds():
    s = R.new_game(["A", "B"])
    assert R.legal_kinds(s) == ["draw"]                            # nobody ahead: no boarding
    s = R.apply(s, R.Draw())
    assert (s.phase, s.drawn, s.hand("A"), s.pile) == ("drawn", 2, 7, 78)
    assert R.legal_kinds(s) == ["set", "discard"]
    s = R.apply(s, honest(5, "B"))
    assert s.current == "B" and s.phase == "start" and s.hand("A") == 2 and s.board == 5
    assert R.legal_kinds(s) == ["draw", "board"]
    s = R.apply(R.apply(s, R.Draw()), R.Discard("x"))
    s = R.apply(s, R.Draw())                                       # A: 2 + 2 = 4
    assert R.legal_kinds(s) == ["set", "keep"]


def test_apply_refuses_and_never_changes_the_state():
    s = R.new_game(["A", "B", "C"])
    for a, msg in [(R.Keep(), "must draw two cards first"), (R.Board("B"), "nobody is ahead"),
                   (R.Land(0, True), "nobody is landing"), (R.Discard("x"), "must draw")]:
        with pytest.raises(IllegalActionError, match=msg):
            R.apply(s, a)
    assert s == R.new_game(["A", "B", "C"])
    d = R.apply(s, R.Draw())
    for a, msg in [(R.Board("B"), "only possible before drawing"), (honest(3, "A"), "cannot be the voter"),
                   (honest(3, "Zed"), "unknown voter"), (honest(3, "B", "maybe"), "'bluffing' or 'not bluffing'"),
                   (R.LaySet(("hat", "map"), ("hat",), "B", R.BLUFFING), "must all be the same"),
                   (R.Discard("\x1b"), "control or invisible character")]:
        with pytest.raises(IllegalActionError, match=msg):
            R.apply(d, a)


def test_islands_land_and_the_other_island():
    o = R.Options(track=5)
    s = R.apply(R.apply(R.new_game(["A", "B"], o), R.Draw()), honest(5, "B"))
    assert s.phase == "land" and s.lander == 0 and s.positions == (5, 0) and s.arrivals == ("A",)
    with pytest.raises(IllegalActionError, match="must first land"):
        R.apply(s, R.Draw())
    with pytest.raises(IllegalActionError, match="island must be 0 or 1"):
        R.apply(s, R.Land(2, False))
    won = R.apply(s, R.Land(1, True))
    assert won.over and won.winner == "A" and won.islands == (R.UNKNOWN, R.TREASURE)
    assert R.outcome(won).winner == "A"
    empty = R.apply(s, R.Land(1, False))
    assert not empty.over and empty.current == "B" and empty.islands == (R.UNKNOWN, R.EMPTY)
    # B is caught bluffing by A: A, already on the empty island, moves on and reaches the other one
    b = R.apply(R.apply(empty, R.Draw()), R.LaySet(("map",), ("hat", "hat"), "A", R.BLUFFING))
    assert b.over and b.winner == "A" and b.islands == (R.TREASURE, R.EMPTY)


def test_referee_mode_only_stops_counters_at_the_islands():
    o = R.Options(track=4, islands=False)
    s = R.apply(R.apply(R.new_game(["A", "B"], o), R.Draw()), honest(5, "B"))
    assert s.phase == "start" and s.positions == (4, 0) and s.arrivals == ("A",) and not s.over


def test_game_undo_is_exact_and_refuses_when_empty():
    g = R.Game.start(["A", "B"])
    s0 = g.state
    g.apply(R.Draw())
    g.apply(R.Discard("hat"))
    assert g.undo().phase == "drawn"
    assert g.undo() == s0
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        g.undo()


def test_options_are_checked():
    for o, msg in [(R.Options(track=0), "track"), (R.Options(cards=9), "cards"), (R.Options(track=True), "track")]:
        with pytest.raises(IllegalActionError, match=msg):
            R.new_game(["A", "B"], o)
