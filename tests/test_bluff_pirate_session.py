"""Bluff Pirate in the game-agnostic session (no Kivy): intents, status lines that never show a secret, undo,
a finished race on the score sheet, and resume from the saved file."""

from __future__ import annotations

import json
import random

import pytest

from companion.errors import IllegalActionError, PirateTableError
from companion.games.bluff_pirate.model import BluffPirateModel, Intent
from companion.games.bluff_pirate.table import demo_intent
from companion.session import TableSession


def session(players=("Ann", "Ben", "Cy"), **options):
    s = TableSession(list(players), None, "bluff-pirate", options or None)
    s.new_round()
    return s


def test_a_session_plays_a_turn_through_intents():
    s = session()
    assert s.uses_chips is False and isinstance(s.model, BluffPirateModel)
    assert s.model.screen() == "bp_race" and s.model.round_intro(1).startswith("Race 1")
    s.apply(Intent("draw"))
    s.apply(Intent("lay_set", (("hat",), ("sword", "hat"))))
    assert s.model.screen() == "bp_vote"
    s.apply(Intent("vote", ("Ben", "not bluffing")))
    line = s.model.describe(Intent("vote", ("Ben", "not bluffing")))
    assert line == "Ben has voted. Next: Cy." and "bluffing" not in line
    assert "bluffing" not in repr(Intent("vote", ("Ben", "not bluffing")))
    assert "sword" not in repr(Intent("lay_set", (("hat",), ("sword", "hat"))))
    s.apply(Intent("vote", ("Cy", "bluffing")))
    assert s.model.screen() == "bp_pick"
    s.apply(Intent("pick", ("Cy",)))
    assert s.round.state.positions_map() == {"Ann": 0, "Ben": 0, "Cy": 3}
    assert "Caught" in s.model.describe(Intent("pick", ("Cy",)))
    assert s.model.screen() == "bp_race"


def test_bad_intents_are_refused_and_change_nothing():
    s = session()
    before = json.dumps(s.to_dict(), sort_keys=True)
    for bad, msg in [(Intent("teleport"), "not a Bluff Pirate action"), ("draw", "not a Bluff Pirate action"),
                     (Intent("board", ("Ben",)), "nobody is ahead"), (Intent("keep"), "must draw")]:
        with pytest.raises(IllegalActionError, match=msg):
            s.apply(bad)
        assert json.dumps(s.to_dict(), sort_keys=True) == before


def test_undo_through_the_session():
    s = session()
    start = s.round.public_view()
    s.apply(Intent("draw"))
    s.apply(Intent("discard", ("hat",)))
    assert s.model.can_undo()
    s.undo()
    assert s.round.public_view() == start and not s.model.can_undo()
    with pytest.raises(IllegalActionError):
        s.undo()


def test_a_finished_race_scores_a_point_and_the_next_race_rotates_the_start(tmp_path):
    s = session(("Ann", "Ben"), track=5, seed=11)
    rng = random.Random(3)
    while not s.model.round_over():
        name, args = demo_intent(s.round, rng)
        s.apply(Intent(name, args))
    r = s.current_ruling()
    w = r["winner"]
    assert r["points"] == {p: int(p == w) for p in ("Ann", "Ben")} and "treasure" in r["islands"]
    assert r["positions"][w] == 5 and r["cards"] == 90
    assert s.model.history_line(r).startswith(f"#1: {w} found the treasure on island")
    s.new_round()
    assert s.totals() == {p: int(p == w) for p in ("Ann", "Ben")}
    assert s.round.current == "Ben"                      # the second race starts one seat on
    assert s.history_lines()[0].startswith("#1:")


def test_resume_mid_vote_from_the_saved_file(tmp_path):
    s = session(seed=5)
    s.apply(Intent("draw"))
    s.apply(Intent("lay_set", (("map", "map"), ("map",))))
    s.apply(Intent("vote", ("Ben", "bluffing")))
    path = tmp_path / "session.json"
    s.save(path)
    t = TableSession.load(path)
    assert t.round.public_view() == s.round.public_view() and t.round._treasure == s.round._treasure
    assert t.to_dict() == s.to_dict()
    t.apply(Intent("vote", ("Cy", "not bluffing")))
    t.apply(Intent("pick", ("Ben",)))
    assert t.round.state.positions_map()["Ann"] == 3            # an honest set, wrongly accused by Ben


def test_options_are_checked():
    for opts, msg in [({"track": 0}, "track"), ({"colour": 1}, "unknown option"), ({"seed": "x"}, "seed"),
                      ({"track": True}, "track")]:
        with pytest.raises(PirateTableError, match=msg):
            TableSession(["A", "B"], None, "bluff-pirate", opts)
    with pytest.raises(PirateTableError):
        TableSession(["A"], None, "bluff-pirate")
