"""Property tests for the Bluff Pirate rules and referee: cards conserved (90), positions within the track, the
leader never boards, exact undo, every random legal playout ends, the referee agrees with the rules."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.errors import IllegalActionError
from companion.games.bluff_pirate import rules as R
from companion.games.bluff_pirate.record import rule_record

NAMES = ["Ann", "Ben", "Cy", "Dee", "Eve"]


def play(seed: int, n: int, track: int, max_actions: int = 20_000, islands: bool = True):
    rng = random.Random(seed)
    g = R.Game.start(NAMES[:n], R.Options(track=track, islands=islands))
    states = [g.state]
    for _ in range(max_actions):
        if g.state.over:
            break
        a = R.random_action(g.state, rng)
        before = g.state
        if isinstance(a, R.Board):
            # the boarder is never a (joint) leader, the target strictly ahead
            assert a.target not in [before.current] and before.current not in before.leaders()
            assert before.position(a.target) > before.position(before.current)
        g.apply(a)
        states.append(g.state)
    return g, states


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5), track=st.integers(1, 60))
def test_random_playouts_conserve_cards_stay_on_the_track_and_end(seed, n, track):
    g, states = play(seed, n, track)
    assert g.state.over and g.state.winner in g.state.players
    for s in states:
        assert s.total == R.CARDS == 90
        assert s.pile >= 0 and s.board >= 0 and min(s.hands) >= 0
        assert all(0 <= x <= track for x in s.positions)
    assert g.state.position(g.state.winner) == track
    assert R.TREASURE in g.state.islands


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5))
def test_undo_is_exact(seed, n):
    g, states = play(seed, n, 30, max_actions=300)
    k = len(states) - 1
    while g.can_undo:
        k -= 1
        assert g.undo() == states[k]
    assert k == 0 and g.state == R.new_game(NAMES[:n], R.Options(track=30))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5))
def test_illegal_actions_change_nothing_and_the_leader_never_boards(seed, n):
    rng = random.Random(seed)
    g = R.Game.start(NAMES[:n])
    for _ in range(200):
        if g.state.over:
            break
        s = g.state
        if s.phase == "start":
            for p in s.leaders():
                if p == s.current:
                    for t in s.players:
                        if t != p:
                            try:
                                R.apply(s, R.Board(t))
                            except IllegalActionError:
                                pass
                            else:
                                raise AssertionError("a leader boarded")
            assert g.state is s
        g.apply(R.random_action(s, rng))


def _record_turns(seed: int, n: int, turns: int):
    """A random legal record (kept short of the islands), built from the rules' own random actions."""
    rng = random.Random(seed)
    s = R.new_game(NAMES[:n], R.Options(track=1000, islands=False))
    out = []
    for _ in range(turns):
        a = R.random_action(s, rng)
        if isinstance(a, R.Board):
            out.append({"player": s.current, "board": a.target})
            s = R.apply(s, a)
            continue
        s = R.apply(s, a)  # the draw
        b = R.random_action(s, rng)
        entry = {"player": s.current}
        if isinstance(b, R.Discard):
            entry["discard"] = b.card
        elif isinstance(b, R.LaySet):
            entry.update(set={"visible": list(b.visible), "hidden": list(b.hidden)}, voter=b.voter, vote=b.vote)
        s = R.apply(s, b)
        out.append(entry)
    return {"game": "bluff-pirate", "players": NAMES[:n], "track": 1000, "turns": out}, s


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5), turns=st.integers(0, 120))
def test_referee_rules_random_legal_records_like_the_rules(seed, n, turns):
    rec, final = _record_turns(seed, n, turns)
    r = rule_record(rec)
    assert r["positions"] == final.positions_map() and r["hand_sizes"] == final.hands_map()
    assert (r["pile"], r["board"], r["reshuffles"]) == (final.pile, final.board, final.reshuffles)
    for t in r["turns"]:
        assert t["pile"] + t["board"] + sum(t["hand_sizes"].values()) == 90
        assert min(t["positions"].values()) >= 0
    assert len(r["turns"]) == turns


def oracle(rec):
    """A second, independent reading of the contract (plain counts, no rules.py), for differential testing."""
    players, track = rec["players"], rec.get("track", 30)
    pos = {p: 0 for p in players}
    hand = {p: 5 for p in players}
    pile, board = 90 - 5 * len(players), 0
    out = []
    for t in rec["turns"]:
        me = t["player"]
        row = {"player": me}
        if "board" in t:
            tgt = t["board"]
            assert pos[tgt] > pos[me] and pos[me] < max(pos.values()) and hand[me] >= 1
            hand[me] -= 1
            board += 1
            k = min(3, hand[tgt])
            hand[tgt] -= k
            hand[me] += k
            row["action"] = "board"
        else:
            for _ in range(2):
                if pile == 0:
                    pile, board = board, 0
                if pile:
                    pile -= 1
                    hand[me] += 1
            if "set" in t:
                vis, hid = t["set"]["visible"], t["set"]["hidden"]
                size = len(vis) + len(hid)
                assert size <= hand[me]
                bluff = any(c != vis[0] for c in hid)
                v = t["voter"]
                if t["vote"] == "not bluffing":
                    outcome = "trusted"
                else:
                    outcome = "caught" if bluff else "wrongly_accused"
                if outcome == "caught":
                    pos[v] = min(track, pos[v] + size)
                else:
                    pos[me] = min(track, pos[me] + size)
                    hand[me] -= size
                    board += size
                    if outcome == "wrongly_accused":
                        pos[v] = max(0, pos[v] - 2)
                row.update(action="set", bluff=bluff, outcome=outcome)
            elif "discard" in t:
                assert hand[me] >= 5
                hand[me] -= 1
                board += 1
                row["action"] = "discard"
            else:
                assert hand[me] < 5
                row["action"] = "draw"
        row.update(positions=dict(pos), hand_sizes=dict(hand))
        out.append(row)
    return out


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 5), turns=st.integers(0, 150))
def test_referee_agrees_with_an_independent_oracle(seed, n, turns):
    rec, _ = _record_turns(seed, n, turns)
    got = [{k: t[k] for k in ("player", "action", "bluff", "outcome", "positions", "hand_sizes") if k in t}
           for t in rule_record(rec)["turns"]]
    assert got == oracle(rec)
