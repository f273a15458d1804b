"""Property tests (hypothesis) for Bluffing Battles: card conservation at every step, the game always ends,
the winner has the larger score pile (outside until-all; in until-all the loser could not reshuffle), exact
undo, and the referee agrees with the independent oracle on random, cut and mutated records."""

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.errors import RecordError
from companion.games.bluffing_battles import demo, rules
from companion.games.bluffing_battles.record import rule_record
from companion.games.bluffing_battles.rules import Game, Play, Reshuffle
from test_bluffing_battles_oracle import Refused, oracle

VARIANTS = st.sampled_from(sorted(rules.VARIANTS))
STYLES = st.sampled_from(["mixed", "random", "high"])
SEEDS = st.integers(0, 2**32 - 1)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(VARIANTS, SEEDS, STYLES)
def test_every_card_is_exactly_once_somewhere_and_the_game_ends(variant, seed, style):
    record, states = demo.play_game(variant, seed, style=style, max_plays=20000)
    full = rules.all_cards(variant)
    for s in states:
        assert rules.conserved(s, full)
        assert s.cards() == full
        if s.phase == rules.REVEAL:
            assert s.hands[0] and s.hands[1]
            assert not s.variant.until_all or len(s.hands[0]) == len(s.hands[1]) == 3
    end = states[-1]
    assert end.over, f"{variant} seed {seed} did not end in {len(record['plays'])} plays"
    a, b = end.score()
    v = rules.VARIANTS[variant]
    if not v.until_all:
        assert a + b == v.total and end.hands == ((), ()) and end.pot == ((), ())
        assert end.winner == ("tie" if a == b else (0 if a > b else 1))
    else:
        # the loser had to reshuffle a score pile of the limit or fewer; the score pile counts no hand
        if end.winner == "tie":
            assert a <= v.limit and b <= v.limit
        else:
            assert end.score()[1 - end.winner] <= v.limit
        assert end.hands[0] and end.hands[1]  # hands are not added to the score piles
    for f in end.fights:
        n = len(f.reveals)
        assert all(x[0].rank == x[1].rank for x in f.reveals[:-1])
        if f.winner is not None:
            assert f.reveals[-1][0].rank != f.reveals[-1][1].rank
            assert f.cards_won == 2 * n + sum(f.prizes)
        assert all(0 <= k <= v.prizes for k in f.prizes)
        if v.until_all:
            assert all(k == v.prizes for k in f.prizes)


@FAST
@given(VARIANTS, SEEDS, st.floats(0, 1))
def test_referee_agrees_with_the_oracle_on_whole_and_cut_records(variant, seed, cut):
    record, _ = demo.play_game(variant, seed)
    n = int(len(record["plays"]) * cut)
    r = copy.deepcopy(record)
    r["plays"] = r["plays"][:n]
    mine = theirs = None
    try:
        mine = rule_record(r)
    except RecordError:
        pass
    try:
        theirs = oracle(r)
    except Refused:
        pass
    assert (mine is None) == (theirs is None)
    if n == len(record["plays"]):
        assert mine is not None and mine["ended"]
    if mine is not None:
        assert {"fights": [{k: f[k] for k in ("reveals", "winner", "cards_won")} for f in mine["fights"]],
                **{k: mine[k] for k in ("score", "ended", "winner")}} == theirs
    if "reshuffles" in r:  # drop the reshuffles that the cut record never reaches: then it must be accepted
        s = rules.new_game(r["players"], variant, [tuple(map(rules.StdCard.parse, r["piles"][p]))
                                                   for p in r["players"]])
        used = [0, 0]
        for play in r["plays"]:
            while s.phase == rules.RESHUFFLE:
                p = rules.needs_reshuffle(s)[0]
                s = rules.apply(s, Reshuffle(p, tuple(map(rules.StdCard.parse, r["reshuffles"][r["players"][p]][used[p]]))))
                used[p] += 1
            s = rules.apply(s, Play(tuple(map(rules.StdCard.parse, play))))
        while s.phase == rules.RESHUFFLE:
            p = rules.needs_reshuffle(s)[0]
            s = rules.apply(s, Reshuffle(p, tuple(map(rules.StdCard.parse, r["reshuffles"][r["players"][p]][used[p]]))))
            used[p] += 1
        for i, p in enumerate(r["players"]):
            r["reshuffles"][p] = r["reshuffles"][p][:used[i]]
        mine = rule_record(r)
        assert mine["ended"] == s.over and mine["score"] == dict(zip(r["players"], s.score()))
        assert oracle(r)["score"] == mine["score"]


@FAST
@given(VARIANTS, SEEDS, st.integers(0, 10**6), st.sampled_from(["card", "extra", "drop-reshuffle", "swap"]))
def test_referee_agrees_with_the_oracle_on_mutated_records(variant, seed, where, how):
    record, _ = demo.play_game(variant, seed)
    r = copy.deepcopy(record)
    rng = random.Random(where)
    plays = r["plays"]
    if how == "card" and plays:
        i = rng.randrange(len(plays))
        plays[i][rng.randrange(2)] = rng.choice([str(c) for c in rules.shares(variant)[rng.randrange(2)]])
    elif how == "extra":
        plays.append([rng.choice(["2H", "AS", "KD"]), rng.choice(["2S", "AH", "KC"])])
    elif how == "drop-reshuffle" and r.get("reshuffles"):
        p = rng.choice(r["players"])
        if r["reshuffles"][p]:
            r["reshuffles"][p].pop(rng.randrange(len(r["reshuffles"][p])))
    elif how == "swap" and len(plays) > 1:
        i = rng.randrange(len(plays) - 1)
        plays[i], plays[i + 1] = plays[i + 1], plays[i]
    mine = theirs = None
    try:
        mine = rule_record(r)
    except RecordError:
        pass
    try:
        theirs = oracle(r)
    except Refused:
        pass
    assert (mine is None) == (theirs is None), (how, mine and mine["score"])
    if mine is not None:
        assert {"fights": [{k: f[k] for k in ("reveals", "winner", "cards_won")} for f in mine["fights"]],
                **{k: mine[k] for k in ("score", "ended", "winner")}} == theirs


@settings(max_examples=30, deadline=None)
@given(VARIANTS, SEEDS, st.lists(st.booleans(), min_size=1, max_size=200))
def test_undo_restores_every_state_exactly(variant, seed, undos):
    record, states = demo.play_game(variant, seed, max_plays=200)
    g = Game(states[0])
    trail = [states[0]]
    rng = random.Random(seed)
    for back in undos:
        if back and g.history:
            g.undo()
            trail.pop()
            assert g.state == trail[-1]
        elif not g.state.over:
            acts = rules.legal_actions(g.state)
            a = rng.choice(acts)
            if isinstance(a, Reshuffle):
                order = list(g.state.scores[a.player])
                rng.shuffle(order)
                a = Reshuffle(a.player, tuple(order))
            g.apply(a)
            trail.append(g.state)
            assert rules.conserved(g.state)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(VARIANTS, SEEDS, st.lists(st.tuples(st.integers(0, 1), st.integers(0, 51)), min_size=5, max_size=30))
def test_a_table_with_unknown_piles_accepts_every_true_card_and_refusals_change_nothing(variant, seed, pokes):
    """At a real table the piles are unknown: the table model must accept every card a real game reveals,
    keep the same counts as the game with known piles, and a refused card (any face, any time) changes
    nothing."""
    from companion.errors import IllegalActionError
    from companion.games.bluffing_battles.table import BattleTable

    record, states = demo.play_game(variant, seed, max_plays=150)
    red = 0 if record["piles"]["Ann"][0][-1] in "HD" else 1
    t = BattleTable(record["players"], variant, red=red)
    faces = rules.full_deck()
    inputs = demo.table_inputs(record)
    step = max(1, len(inputs) // len(pokes))
    for k, (kind, player, *rest) in enumerate(inputs):
        if k % step == 0 and pokes:
            p, f = pokes.pop()
            before = t.to_json()
            try:
                t.reveal(p, faces[f])
            except IllegalActionError:
                assert t.to_json() == before
            else:
                t.undo()
                assert t.to_json() == before
        if kind == "reveal":
            t.reveal(player, rest[0])
        else:
            t.reshuffle(player)
        assert rules.conserved(t.state)
    end = states[-1]
    assert t.counts()["score"] == end.score() and t.counts()["draw"] == tuple(len(x) for x in end.piles)
    assert t.over == end.over
