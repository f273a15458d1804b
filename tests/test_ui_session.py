"""The app's pure session model (no Kivy): atomic state file, exact resume, ledger booking."""

from __future__ import annotations

import json

import pytest

from companion.decks.pirates72 import PBCard
from companion.errors import PirateTableError
from companion.games.pirates_bluff import Bid, Call, Countdown, Options, RevealStarting, Showdown
from companion.ledger import Ledger
from companion.session import TableSession

PLAYERS = ["Arville", "Bethany", "Carter", "Douglas", "Eris"]
START = {"Arville": "2D", "Bethany": "2C", "Carter": "3A", "Douglas": "4A", "Eris": "7A"}
ACTIONS = [Bid("Bethany", 3, 2, 0), Bid("Arville", 4, 2, 2100), Bid("Carter", 5, 2, 3900),
           Countdown("Carter", 4000, complete=False), Bid("Bethany", 5, 7, 6000), Bid("Douglas", 6, 7, 8200),
           Bid("Carter", 7, 2, 9700), Bid("Eris", 7, 7, 11500), Call("Douglas", 13250), Call("Carter", 13255),
           Showdown.of_counts({"Arville": (0, 1), "Bethany": (2, 0), "Carter": (0, 0), "Douglas": (0, 1),
                               "Eris": (3, 1)})]


def session(tmp_path, ledger=True):
    s = TableSession(PLAYERS, 50, options=Options(window_ms=10))
    if ledger:
        s.create_ledger(tmp_path / "s.db")
    s.new_hand()
    s.apply(RevealStarting.of({p: PBCard.parse(c) for p, c in START.items()}))
    return s


def test_resume_at_every_step_is_exact(tmp_path):
    s = session(tmp_path)
    path = tmp_path / "state.json"
    for a in ACTIONS:
        s.apply(a)
        s.save(path)
        back = TableSession.load(path)
        assert back.hand.snapshot() == s.hand.snapshot()
        assert back.to_dict() == s.to_dict()
    assert s.hand.outcome.callers == ("Douglas", "Carter") and s.hand.outcome.count == 6


def test_finish_books_the_ruling_once_even_after_a_kill(tmp_path):
    s = session(tmp_path)
    for a in ACTIONS:
        s.apply(a)
    path = tmp_path / "state.json"
    s.save(path)  # saved with the hand over, then "killed" after booking but before saving
    r = s.finish_hand()
    again = TableSession.load(path)
    again.finish_hand()  # must not book the same hand twice
    with Ledger.open(tmp_path / "s.db") as led:
        assert led.summary()["rounds_played"] == 1
        assert led.table()["stacks"] == r["stacks"] == again.stacks
    assert again.stacks == {"Arville": 49, "Bethany": 49, "Carter": 55, "Douglas": 55, "Eris": 42}


def test_loans_between_hands_only_and_go_into_the_next_hand(tmp_path):
    s = session(tmp_path)
    with pytest.raises(PirateTableError, match="between hands"):
        s.take_loan("Eris", 5)
    for a in ACTIONS:
        s.apply(a)
    s.new_hand()  # commits the finished hand
    s.take_loan("Eris", 5)
    assert s.hand.stacks_before["Eris"] == 47
    s.repay("Eris", 5)
    assert s.hand.stacks_before["Eris"] == 42


def test_atomic_save_keeps_the_old_file_when_writing_fails(tmp_path, monkeypatch):
    s = session(tmp_path, ledger=False)
    path = tmp_path / "state.json"
    s.save(path)
    before = path.read_text()
    s.apply(ACTIONS[0])

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(json, "dump", boom)
    with pytest.raises(OSError):
        s.save(path)
    assert path.read_text() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_bad_state_and_bad_sessions_are_refused(tmp_path):
    p = tmp_path / "state.json"
    p.write_text("{not json")
    with pytest.raises(PirateTableError, match="not a session state"):
        TableSession.load(p)
    p.write_text(json.dumps({"version": 99}))
    with pytest.raises(PirateTableError, match="unknown version"):
        TableSession.load(p)
    with pytest.raises(PirateTableError, match="3-8 players"):
        TableSession(["A", "B"])
    with pytest.raises(PirateTableError, match="distinct"):
        TableSession(["A", "B", "A"])
    s = session(tmp_path, ledger=False)
    with pytest.raises(PirateTableError, match="not over"):
        s.new_hand()


def test_camera_seat_order_clockwise_from_six_oclock():
    from companion.ui.camservice import seat_order

    # image coordinates (y down): bottom, left, top, right of the centre
    pts = [(100, 0), (0, -100), (0, 100), (-100, 0)]  # right, top, bottom, left
    assert seat_order(pts) == [2, 3, 1, 0]  # bottom, then clockwise on screen: left, top, right
