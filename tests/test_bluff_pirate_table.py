"""The Bluff Pirate table model (what the app drives): set-up, the treasure kept secret, the guided turn flow,
secret votes through SecretRound with only the picked one revealed, refusals that change nothing, undo, resume."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from companion.errors import IllegalActionError
from companion.games.bluff_pirate import rules as R
from companion.games.bluff_pirate.record import rule_record
from companion.games.bluff_pirate.table import BluffPirateTable, demo_intent, play_demo_step
from companion.secrets import SecretRound


def snapshot(t: BluffPirateTable) -> str:
    return json.dumps(t.to_json(), sort_keys=True)


def refused(t: BluffPirateTable, fn, *args, match: str):
    before = snapshot(t)
    with pytest.raises(IllegalActionError, match=match):
        fn(*args)
    assert snapshot(t) == before


def test_set_up_players_track_and_treasure_from_a_seed():
    t = BluffPirateTable(["Ann", "Ben", "Cy"], seed=1)
    v = t.public_view()
    assert v["track"] == R.DEFAULT_TRACK == 30 and v["pile"] == 75 and v["hand_sizes"] == {"Ann": 5, "Ben": 5, "Cy": 5}
    assert v["islands"] == ["unknown", "unknown"] and v["step"] == "draw" and v["current"] == "Ann"
    assert BluffPirateTable(["A", "B"], track=12).public_view()["track"] == 12
    treasures = {BluffPirateTable(["A", "B"], seed=s)._treasure for s in range(20)}
    assert treasures == {0, 1}
    assert BluffPirateTable(["A", "B"], seed=7)._treasure == BluffPirateTable(["A", "B"], seed=7)._treasure
    for bad, msg in [(["A"], "2-5 players"), (list("ABCDEF"), "2-5 players"), (["A", "A"], "distinct"),
                     (["A", ""], "cannot be empty"), (["A", "B\x00"], "control or invisible character")]:
        with pytest.raises(IllegalActionError, match=msg):
            BluffPirateTable(bad)
    for track in (0, -3, 1001, True, 2.5):
        with pytest.raises(IllegalActionError, match="track"):
            BluffPirateTable(["A", "B"], track=track)


def test_a_turn_as_one_guided_flow_with_one_vote_revealed():
    t = BluffPirateTable(["Ann", "Ben", "Cy"], seed=0)
    assert t.draw() == 2 and t.step == "choose"
    t.lay_set(["hat", "hat"], ["sword"])
    v = t.public_view()
    assert v["step"] == "votes" and v["set"] == {"setter": "Ann", "visible": ["hat", "hat"], "hidden_count": 1,
                                                 "size": 3, "waiting": ["Ben", "Cy"], "voters": ["Ben", "Cy"]}
    assert t.next_voter() == "Ben"
    assert t.vote("Ben", "bluffing") is False
    assert t.next_voter() == "Cy"
    assert t.vote("Cy", "not bluffing") is True and t.step == "pick"
    r = t.pick("Ben")
    assert (r.vote, r.bluff, r.outcome, r.hidden) == ("bluffing", True, "caught", ("sword",))
    assert r.moves == {"Ben": (0, 3)} and "Caught" in r.words
    v = t.public_view()
    assert v["positions"] == {"Ann": 0, "Ben": 3, "Cy": 0} and v["hand_sizes"]["Ann"] == 7
    assert v["current"] == "Ben" and v["step"] == "draw"
    # Cy's vote was never revealed: not in the view, the history or the export
    text = json.dumps(v) + json.dumps(t.export_record())
    assert "not bluffing" not in text
    assert rule_record(t.export_record())["positions"] == v["positions"]


def test_bad_input_is_refused_with_a_clear_message_and_nothing_changes():
    t = BluffPirateTable(["Ann", "Ben", "Cy"], seed=0)
    refused(t, t.keep, match="must draw two cards first")
    refused(t, t.board, "Ben", match="nobody is ahead")
    t.draw()
    refused(t, t.draw, match="already drawn")
    refused(t, t.keep, match="7 cards after drawing")
    refused(t, t.lay_set, ["hat", "map"], ["hat"], match="visible cards must all be the same")
    refused(t, t.lay_set, ["hat"], ["hat"], match="3, 4 or 5 cards")
    refused(t, t.lay_set, ["hat"] * 3, ["hat"], match="1 or 2 cards face up")
    refused(t, t.lay_set, ["hat"], ["hat"] * 5, match="3, 4 or 5")
    refused(t, t.discard, "", match="cannot be empty")
    t.lay_set(["hat"], ["hat", "hat"])
    refused(t, t.vote, "Ann", "bluffing", match="Ann laid the set and does not vote")
    refused(t, t.vote, "Zed", "bluffing", match="unknown player")
    refused(t, t.vote, "Ben", "maybe", match="not one of the choices")
    refused(t, t.pick, "Ben", match="still waiting for the votes of Ben, Cy")
    refused(t, t.discard, "hat", match="still being voted on")
    t.vote("Ben", "not bluffing")
    refused(t, t.vote, "Ben", "bluffing", match="already answered")
    t.vote("Cy", "bluffing")
    refused(t, t.pick, "Ann", match="cannot be picked")
    t.pick("Cy")                                                   # wrongly accused: Ann +3, Cy stays on 0
    assert t.state.positions_map() == {"Ann": 3, "Ben": 0, "Cy": 0}
    # Ben: Ann is the leader; boarding the leader is fine for Ben, but the leader cannot board
    assert t.board_options() == {"Ann": None, "Cy": "Cy is level with Ben (both on 0)"}
    t.draw()
    t.discard("map")
    assert t.board_options()["Ann"] is None and t.board_options()["Ben"].startswith("Ben is level")
    t.board("Ann")                                                  # Cy boards the leader
    assert t.state.hands_map() == {"Ann": 1, "Ben": 6, "Cy": 7}
    assert t.board_options() == {"Ben": "Ann is in the lead (on 3); the leader cannot board",
                                 "Cy": "Ann is in the lead (on 3); the leader cannot board"}
    refused(t, t.board, "Cy", match="Ann is in the lead")


def test_undo_of_the_last_turn_and_of_a_turn_in_progress():
    t = BluffPirateTable(["Ann", "Ben"], seed=0)
    start = t.public_view()
    t.draw()
    t.lay_set(["hat"], ["hat", "hat"])
    t.vote("Ben", "bluffing")
    t.undo()                                                       # the turn in progress: back to its start
    assert t.public_view() == start and t.pending is None
    t.draw()
    t.discard("hat")
    after_one = t.public_view()
    t.draw()
    t.keep() if t.state.hand("Ben") < 5 else t.discard("map")
    t.undo()
    assert t.public_view() == after_one
    t.undo()
    assert t.public_view() == start
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        t.undo()


def test_treasure_found_on_the_first_island_wins():
    t = _to_the_islands(seed_for_treasure(0))
    assert t.step == "land" and t.current == "Ann"
    assert t.public_view()["islands"] == ["unknown", "unknown"]
    assert t.land(0) is True
    v = t.public_view()
    assert v["winner"] == "Ann" and v["step"] == "over" and v["islands"][0] == "treasure"
    assert "the treasure! Ann wins" in v["history"][-1]
    assert t.why_no_undo() == "an island token was turned over in that turn; it cannot be hidden again"


def test_empty_island_and_the_race_goes_on_to_the_other():
    t = _to_the_islands(seed_for_treasure(1))
    assert t.land(0) is False
    v = t.public_view()
    assert v["islands"] == ["empty", "unknown"] and v["winner"] is None and v["step"] == "draw"
    assert "empty" in v["history"][-1] and "island 2" in v["history"][-1]
    # Ben's next forward move that ends on the islands reaches the other island... Ann is on 8 (the track),
    # Ben on 0: Ann's next forward move wins
    t.draw()
    t.keep() if t.state.hand("Ben") < 5 else t.discard("map")
    t.draw()
    t.lay_set(["hat"], ["hat", "hat"])
    t.vote("Ben", "not bluffing")
    t.pick("Ben")
    v = t.public_view()
    assert v["winner"] == "Ann" and v["islands"] == ["empty", "treasure"] and v["step"] == "over"
    with pytest.raises(IllegalActionError, match="game is over"):
        t.draw()


def seed_for_treasure(island: int) -> int:
    return next(s for s in range(100) if BluffPirateTable(["A", "B"], seed=s)._treasure == island)


def _to_the_islands(seed: int) -> BluffPirateTable:
    t = BluffPirateTable(["Ann", "Ben"], track=8, seed=seed)
    t.draw()
    t.lay_set(["hat"], ["hat", "hat", "hat", "hat"])               # Ann 5
    t.vote("Ben", "not bluffing")
    t.pick("Ben")
    t.draw()
    t.discard("map")
    t.draw()
    t.lay_set(["hat"], ["hat", "hat"])                             # Ann 8 = the islands
    t.vote("Ben", "not bluffing")
    t.pick("Ben")
    return t


def test_resume_from_the_saved_session_mid_vote():
    t = BluffPirateTable(["Ann", "Ben", "Cy"], seed=3)
    t.draw()
    t.lay_set(["hat"], ["map", "hat"])
    t.vote("Ben", "bluffing")
    saved = json.loads(json.dumps(t.to_json()))
    u = BluffPirateTable.from_json(saved)
    assert u.public_view() == t.public_view() and u._treasure == t._treasure
    u.vote("Cy", "not bluffing")
    r = u.pick("Ben")
    assert r.outcome == "caught" and r.hidden == ("map", "hat")
    with pytest.raises(IllegalActionError, match="saved session"):
        BluffPirateTable.from_json({"version": 1, "game": "bluff-pirate"})


def test_votes_go_through_one_secret_round_per_voter():
    """Phones and the passed tablet submit through the same SecretRound objects."""
    t = BluffPirateTable(["Ann", "Ben", "Cy"], seed=0)
    t.draw()
    t.lay_set(["hat"], ["hat", "hat"])
    rounds = t.secret_rounds("Cy")
    assert len(rounds) == 1 and isinstance(rounds[0], SecretRound) and rounds[0].kind == "vote"
    assert t.secret_rounds("Ann") == []
    rounds[0].submit("Cy", "bluffing")                              # as a phone would
    assert t.public_view()["set"]["waiting"] == ["Ben"]
    assert "bluffing" not in repr(rounds[0]) and "bluffing" not in repr(t)


# ------------------------------------------------------------------------------------ no secret leaks


def _drive(t: BluffPirateTable, script: list[tuple[str, tuple]]) -> list[str]:
    views = []
    for name, args in script:
        getattr(t, name)(*args)
        views.append(json.dumps(t.public_view(), sort_keys=True) + repr(t) + json.dumps(t.export_record()))
    return views


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5))
def test_no_secret_reaches_a_public_view_history_or_export_before_its_reveal(seed, n):
    """Differential: two tables that differ only in their secrets (treasure island; every unpicked vote; the
    hidden cards until the pick) show exactly the same public view, history, repr and export until the reveal."""
    players = ["Ann", "Ben", "Cy", "Dee", "Eve"][:n]
    rng = random.Random(seed)
    a = BluffPirateTable(players, track=15, seed=seed_for_treasure(0))
    b = BluffPirateTable(players, track=15, seed=seed_for_treasure(1))
    for _ in range(400):
        if a.step == "over" or b.step == "over":
            break
        name, args = demo_intent(a, rng)
        if name == "land":
            break                                                  # the treasure is revealed here
        if name == "vote":
            seat, v = args
            other = R.BLUFFING if v == R.NOT_BLUFFING else R.NOT_BLUFFING
            getattr(a, name)(seat, v)
            getattr(b, name)(seat, other)                          # a different secret vote
            assert _public(a) == _public(b)
            continue
        if name == "pick":
            voter = args[0]
            # make the picked vote equal in both before the reveal (only the unpicked ones differ)
            va = a.pending.votes[voter].to_json()["values"][voter]
            b.pending.votes[voter].withdraw(voter)
            b.pending.votes[voter].submit(voter, va)
            assert _public(a) == _public(b)
        if name == "lay_set":
            assert _public(a) == _public(b)
            vis, hid = args
            a.lay_set(vis, hid)
            b.lay_set(vis, tuple(reversed(hid)) if len(set(hid)) > 1 else hid)
            assert _public(a) == _public(b)                        # hidden cards differ, nothing shows it
            if hid != tuple(reversed(hid)):
                b.pending.hidden.withdraw(b.pending.setter)
                b.pending.hidden.submit(b.pending.setter, hid)
            continue
        getattr(a, name)(*args)
        getattr(b, name)(*args)
        assert _public(a) == _public(b)


def _public(t: BluffPirateTable) -> str:
    return json.dumps(t.public_view(), sort_keys=True) + repr(t) + json.dumps(t.export_record()) + "\n".join(
        t.history)


def test_demo_plays_whole_games_and_the_export_rules_the_same():
    for seed in range(30):
        t = BluffPirateTable(["Ann", "Ben", "Cy", "Dee"][: 2 + seed % 3], seed=seed)
        rng = random.Random(seed)
        for _ in range(5000):
            if t.step == "over":
                break
            play_demo_step(t, rng)
            assert t.state.total == 90
        assert t.step == "over" and t.public_view()["winner"]
        r = rule_record(t.export_record())
        assert r["positions"] == t.state.positions_map() and r["hand_sizes"] == t.state.hands_map()
        u = BluffPirateTable.from_json(json.loads(json.dumps(t.to_json())))
        assert u.public_view() == t.public_view()


def test_a_saved_dict_never_changes_after_later_actions():
    t = BluffPirateTable(["Ann", "Ben"], seed=2)
    t.draw()
    saved = t.to_json()
    frozen = json.dumps(saved, sort_keys=True)
    t.discard("hat")
    t.draw()
    assert json.dumps(saved, sort_keys=True) == frozen
