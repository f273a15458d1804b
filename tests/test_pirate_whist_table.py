"""The Pirate Whist table model (pure, what the app's screens drive): set-up and the cut, secret bids never
visible before the reveal, the hook dealer, counts and trick-by-trick play with the revoke warning, the score
sheet, editing a past round, undo, resume from JSON, CSV, and the record the referee accepts."""

import csv
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from companion.errors import IllegalActionError, RecordError
from companion.games.pirate_whist import rules, sim
from companion.games.pirate_whist.record import rule_record
from companion.games.pirate_whist.table import WhistTable, cut_for_deal

ROOT = Path(__file__).resolve().parents[1]
P4 = ["Ann", "Ben", "Cy", "Dee"]


def bid_round(t, bids):
    while t.phase == "bid":
        p = t.next_bidder()
        t.submit_bid(p, bids[p])
    return t.reveal()


def test_setup_limits_and_chosen_dealer():
    t = WhistTable.new(P4, 13, dealer="Cy")
    assert t.setup.first_dealer == "Cy" and t.cut == [] and t.setup.n_rounds == 25
    assert t.now() == {"round": 1, "of": 25, "cards": 13, "dealer": "Cy", "leader": "Dee", "phase": "bid"}
    assert t.header() == "Round 1 of 25  \u2022  13 cards  \u2022  Cy deals  \u2022  Dee leads"
    with pytest.raises(IllegalActionError, match="1 to 13 for 4 players"):
        WhistTable.new(P4, 14, dealer="Cy")
    with pytest.raises(IllegalActionError, match="2-10 players"):
        WhistTable.new(["Solo"], 1)
    with pytest.raises(IllegalActionError, match="at most 24 characters"):
        WhistTable.new(["A" * 25, "B"], 1, dealer="B")
    with pytest.raises(IllegalActionError, match="control"):
        WhistTable.new(["A\x07", "B"], 1, dealer="B")
    plan = t.plan()
    assert [r["cards"] for r in plan][:3] == [13, 12, 11] and plan[0]["status"] == "now"
    assert plan[-1] == {"round": 25, "cards": 13, "dealer": "Cy", "leader": "Dee", "status": "to come"}  # 24 passes


def test_cut_for_deal_lowest_card_deals_ties_cut_again():
    for seed in range(300):
        cuts, dealer = cut_for_deal(P4, random.Random(seed))
        cards = [c for draws in cuts for _, c in draws]
        assert len(cards) == len(set(cards)) or len(cards) > 52
        for draws, nxt in zip(cuts, cuts[1:]):
            low = min(c.rank for _, c in draws)
            assert [p for p, _ in nxt] == [p for p, c in draws if c.rank == low]
        last = cuts[-1]
        low = min(c.rank for _, c in last)
        assert [p for p, c in last if c.rank == low] == [dealer]
    assert any(len(cut_for_deal(P4, random.Random(s))[0]) > 1 for s in range(300))  # ties happen
    t1, t2 = WhistTable.new(P4, 3, seed=11), WhistTable.new(P4, 3, seed=11)
    assert t1.setup.first_dealer == t2.setup.first_dealer and t1.cut == t2.cut and t1.cut


def test_secret_bids_are_never_visible_before_the_reveal():
    views = []
    for secret in (0, 3):
        t = WhistTable.new(P4, 3, dealer="Ann")
        assert t.next_bidder() == "Ben"  # clockwise from the leader
        t.submit_bid("Ben", secret)
        t.submit_bid("Cy", 1)
        views.append((t.bid_status(), repr(t), t.phase, t.next_bidder(), t.header(), t.sheet(), t.plan(),
                      t.csv(), t.record()))
        with pytest.raises(IllegalActionError, match="secret"):
            t.bids()
        with pytest.raises(IllegalActionError, match="still waiting for Dee, Ann"):
            t.reveal()
        with pytest.raises(IllegalActionError, match="already answered"):
            t.submit_bid("Ben", 2)  # and no way to look at it either
    assert views[0] == views[1]  # nothing anyone can see depends on Ben's bid
    assert views[0][0] == {"kind": "bid", "seats": ["Ben", "Cy", "Dee", "Ann"], "waiting": ["Dee", "Ann"],
                           "revealed": False}


def test_reveal_at_once_then_bids_vs_cards():
    t = WhistTable.new(P4, 3, dealer="Ann")
    for p, b in (("Ben", 1), ("Cy", 2), ("Dee", 0)):
        t.submit_bid(p, b)
    assert t.phase == "bid"
    t.submit_bid("Ann", 2)
    assert t.phase == "reveal"
    assert t.reveal() == {"Ann": 2, "Ben": 1, "Cy": 2, "Dee": 0}
    assert t.phase == "play"
    assert t.bids_vs_cards() == {"bids": 5, "cards": 3, "diff": 2, "text": "2 over: 5 bid for 3 tricks"}
    with pytest.raises(IllegalActionError):
        t.submit_bid("Ann", 1)


@pytest.mark.parametrize("bad", [-1, 4, True, 1.0, "1", None])
def test_bad_bids_are_refused_and_change_nothing(bad):
    t = WhistTable.new(P4, 3, dealer="Ann")
    before = t.to_json()
    with pytest.raises(IllegalActionError):
        t.submit_bid("Ben", bad)
    assert t.to_json() == before


def test_hook_dealer_bids_last_in_the_open():
    t = WhistTable.new(P4, 3, dealer="Ann", hook=True)
    assert t.bid_status()["seats"] == ["Ben", "Cy", "Dee"]
    bid_round(t, {"Ben": 1, "Cy": 1, "Dee": 0})
    assert t.phase == "dealer-bid" and t.hook_forbidden() == 1
    assert t.bid_choices("Ann") == [0, 2, 3]
    with pytest.raises(IllegalActionError, match="hook rule"):
        t.submit_bid("Ann", 1)
    t.submit_bid("Ann", 0)
    assert t.phase == "play" and t.bids() == {"Ann": 0, "Ben": 1, "Cy": 1, "Dee": 0}


def test_counts_and_score_sheet_with_bids_beside_scores():
    t = WhistTable.new(P4, 2, dealer="Ann")
    bid_round(t, {"Ann": 0, "Ben": 1, "Cy": 1, "Dee": 0})
    with pytest.raises(IllegalActionError, match="add up to 3"):
        t.enter_counts({"Ann": 1, "Ben": 1, "Cy": 1, "Dee": 0})
    t.enter_counts({"Ann": 0, "Ben": 1, "Cy": 0, "Dee": 1})
    row = t.sheet()[0]
    assert row["bids"] == {"Ann": 0, "Ben": 1, "Cy": 1, "Dee": 0}
    assert row["won"] == {"Ann": 0, "Ben": 1, "Cy": 0, "Dee": 1}
    assert row["scores"] == {"Ann": 10, "Ben": 11, "Cy": -1, "Dee": -1} and row["totals"] == row["scores"]
    assert t.sheet()[1] == {"round": 2, "cards": 1, "dealer": "Ben", "played": False}
    assert t.now()["round"] == 2 and t.phase == "bid"


def test_trick_by_trick_with_and_without_cards_and_the_revoke_warning():
    t = WhistTable.new(["A", "B"], 3, dealer="A", mode="tricks")
    bid_round(t, {"A": 1, "B": 1})
    assert t.trick_view() == {"trick": 1, "of": 3, "leader": "B", "cards": [], "to_play": "B",
                              "won": {"A": 0, "B": 0}}
    t.play_card("B", "ah")
    t.play_card("A", "2c")  # A shows void in hearts
    assert t.trick_view()["leader"] == "B" and t.trick_view()["won"] == {"A": 0, "B": 1}
    t.play_card("B", "KH")
    w = t.play_warning("A", "3H")
    assert w and w.startswith("revoke: A failed to follow hearts")
    with pytest.raises(IllegalActionError, match="revoke"):
        t.play_card("A", "3H")
    assert t.play_warning("A", "AH") == "AH was already played this round"
    assert t.play_warning("B", "3S").startswith("B plays out of turn")
    assert "not a standard card" in t.play_warning("A", "XX")
    t.play_card("A", "3S")  # trumps
    t.take_trick("B")  # the last trick: winner only
    r = t.results()[0]
    assert r.trick_winners == ("B", "A", "B") and r.won == {"A": 1, "B": 2}
    rec = t.record()
    assert "tricks" not in rec["rounds"][0] and rec["rounds"][0]["won"] == {"A": 1, "B": 2}


def test_edit_a_past_round_recomputes_totals():
    t = WhistTable.new(P4, 3, dealer="Ann")
    bid_round(t, {"Ann": 1, "Ben": 1, "Cy": 1, "Dee": 0})
    t.enter_counts({"Ann": 1, "Ben": 1, "Cy": 1, "Dee": 0})
    bid_round(t, {"Ann": 0, "Ben": 0, "Cy": 1, "Dee": 1})
    t.enter_counts({"Ann": 0, "Ben": 0, "Cy": 1, "Dee": 1})
    assert t.totals() == {"Ann": 21, "Ben": 21, "Cy": 22, "Dee": 21}
    t.edit_round(1, {"Ann": 2, "Ben": 1, "Cy": 1, "Dee": 0}, {"Ann": 1, "Ben": 1, "Cy": 1, "Dee": 0})
    assert t.sheet()[0]["scores"]["Ann"] == -1 and t.totals() == {"Ann": 9, "Ben": 21, "Cy": 22, "Dee": 21}
    assert t.sheet()[1]["totals"] == t.totals()
    before = t.to_json()
    with pytest.raises(IllegalActionError, match="add up to 4"):
        t.edit_round(1, {"Ann": 2, "Ben": 1, "Cy": 1, "Dee": 0}, {"Ann": 2, "Ben": 1, "Cy": 1, "Dee": 0})
    with pytest.raises(IllegalActionError, match="has not been played"):
        t.edit_round(3, {"Ann": 0, "Ben": 0, "Cy": 0, "Dee": 1}, {"Ann": 0, "Ben": 0, "Cy": 0, "Dee": 1})
    assert t.to_json() == before
    assert t.undo() == "the edit of round 1" and t.totals()["Ann"] == 21


def test_edit_keeps_entered_tricks_when_only_bids_change():
    t = WhistTable.new(["A", "B"], 1, dealer="A")
    bid_round(t, {"A": 0, "B": 0})
    t.play_card("B", "5D")
    t.play_card("A", "6D")
    t.edit_round(1, {"A": 1, "B": 0}, {"A": 1, "B": 0})
    assert t.record()["rounds"][0]["tricks"] == [["B:5D", "A:6D"]] and t.captains() == ["A"]


def test_undo_steps_back_exactly():
    t = WhistTable.new(["A", "B"], 2, dealer="A", mode="tricks")
    snaps = [t.to_json()]
    for step in (lambda: t.submit_bid("B", 1), lambda: t.submit_bid("A", 1), t.reveal,
                 lambda: t.play_card("B", "2H"), lambda: t.play_card("A", "3H"), lambda: t.take_trick("B")):
        step()
        snaps.append(t.to_json())
    assert t.now()["round"] == 2
    for snap in reversed(snaps[:-1]):
        t.undo()
        assert t.to_json() == snap
    assert not t.can_undo()
    with pytest.raises(IllegalActionError, match="nothing to undo"):
        t.undo()


def test_resume_from_json_mid_bid_and_mid_trick():
    t = WhistTable.new(P4, 3, seed=4, hook=True, mode="tricks")
    d = t.setup.first_dealer
    t.submit_bid(t.next_bidder(), 1)
    saved = json.loads(json.dumps(t.to_json()))
    r = WhistTable.from_json(saved)
    assert r.to_json() == t.to_json() and r.bid_status() == t.bid_status() and r.cut == t.cut
    with pytest.raises(IllegalActionError, match="secret"):
        r.bids()
    while r.phase == "bid":
        r.submit_bid(r.next_bidder(), 0)
    r.reveal()
    r.submit_bid(d, 1)
    lead = r.trick_view()["to_play"]
    r.play_card(lead, "QS")
    again = WhistTable.from_json(json.loads(json.dumps(r.to_json())))
    assert again.trick_view() == r.trick_view() and again.undo() == f"{lead}'s Queen of spades"


@pytest.mark.parametrize("damage,place", [
    (lambda d: d.update(game="powderkeg"), "session"),
    (lambda d: d.update(version=9), "session.version"),
    (lambda d: d["setup"].update(max_cards=99), "session.setup"),
    (lambda d: d["events"].append({"e": "bid", "player": "Ben", "bid": 7}), "session.events[1]"),
    (lambda d: d["events"].append({"e": "nonsense"}), "session.events[1]"),
    (lambda d: d["events"].append({"e": "play"}), "session.events[1]"),
    (lambda d: d.update(events="x"), "session.events"),
])
def test_a_damaged_save_is_refused_with_its_place(damage, place):
    t = WhistTable.new(P4, 3, dealer="Ann")
    t.submit_bid("Ben", 1)
    d = t.to_json()
    damage(d)
    with pytest.raises(RecordError) as exc:
        WhistTable.from_json(d)
    assert str(exc.value).startswith(place + ":")


def play_whole_game(t, seed):
    """Drive the table the way the screens do, with simulated players' choices."""
    rng = random.Random(seed)
    while not t.over:
        st = t.state
        acts = list(sim.round_actions(st, rng, "cards" if t.mode == "tricks" else "counts"))
        bids = {a.player: a.bid for a in acts if isinstance(a, rules.Bid)}
        while t.phase == "bid":
            p = t.next_bidder()
            t.submit_bid(p, bids[p])
        t.reveal()
        if t.phase == "dealer-bid":
            t.submit_bid(st.round.dealer, bids[st.round.dealer])
        for a in acts:
            if isinstance(a, rules.Counts):
                t.enter_counts(dict(a.won))
            elif isinstance(a, rules.PlayCard):
                t.play_card(a.player, str(a.card))


@pytest.mark.parametrize("mode,hook", [("counts", False), ("tricks", True)])
def test_whole_game_captain_plot_csv_and_the_referee_agrees(tmp_path, mode, hook):
    t = WhistTable.new(["Anne", "=cmd()", "Cy"], 4, seed=2, mode=mode, hook=hook)
    play_whole_game(t, 9)
    assert t.over and t.phase == "over" and t.header() == "Game over after 7 rounds"
    tot = t.totals()
    assert t.captains() == [p for p in t.players if tot[p] == max(tot.values())]
    pts = t.points_over_rounds()
    assert all(len(v) == 8 and v[0] == 0 and v[-1] == tot[p] for p, v in pts.items())
    rows = list(csv.reader(io.StringIO(t.csv())))
    assert rows[0][:4] == ["round", "cards", "dealer", "Anne bid"] and "'=cmd() bid" in rows[0]
    assert len(rows) == 1 + 7 + 2 and rows[-1][0] == "captain"
    assert [int(x) for x in rows[-2][6::4]] == [tot[p] for p in t.players]
    f = tmp_path / "game.json"
    f.write_text(json.dumps(t.record()))
    p = subprocess.run([sys.executable, "-m", "companion", "referee", str(f)], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    ruling = json.loads(p.stdout)
    assert ruling["totals"] == tot and ruling["winners"] == t.captains() and ruling["complete"]
    assert rule_record(t.record()) == ruling
    with pytest.raises(IllegalActionError, match="no bids"):
        t.submit_bid("Anne", 0)


def test_a_table_resumes_on_top_of_finished_rounds_from_their_records():
    from companion.games.pirate_whist.record import round_record, rounds_of

    contract = json.loads((ROOT / "companion/games/pirate_whist/examples/contract-example.json").read_text())
    t = WhistTable.new(P4, 3, dealer="Ann")
    base = rounds_of(t.setup, contract["rounds"][:3])
    assert [round_record(r, t.players) for r in base][1] == contract["rounds"][1]
    t2 = WhistTable(t.setup, base=base)
    assert t2.now()["round"] == 4 and t2.totals() == {"Ann": 19, "Ben": 21, "Cy": 20, "Dee": -3}
    bid_round(t2, {"Ann": 1, "Ben": 0, "Cy": 0, "Dee": 0})
    t2.enter_counts({"Ann": 1, "Ben": 0, "Cy": 0, "Dee": 1})
    assert t2.totals() == {"Ann": 30, "Ben": 31, "Cy": 30, "Dee": -4}
    t2.undo()
    t2.undo()
    assert t2.now()["round"] == 4 and t2.phase == "reveal"
    with pytest.raises(RecordError, match=r"rounds\[1\]\.won"):
        rounds_of(t.setup, [contract["rounds"][0], {"bids": contract["rounds"][1]["bids"], "won": {}}])
    with pytest.raises(IllegalActionError, match="does not fit"):
        WhistTable(t.setup, base=base[1:])


# ------------------------------------------------------------------------------------------------ the app's model


def session_with(players=("Ann", "Ben", "Cy"), **options):
    from companion.session import TableSession

    opts = {"max_cards": 2, "first_dealer": "Ann"}
    opts.update(options)
    s = TableSession(list(players), None, "pirate-whist", opts)
    s.new_round()
    return s


def play_round_in(s, bids, won):
    m = s.model
    for p in m.setup.clockwise_from(m.round.now()["leader"]):
        if p in bids and m.round.phase == "bid":
            s.apply({"e": "bid", "player": p, "bid": bids[p]})
    s.apply({"e": "reveal"})
    if m.round.phase == "dealer-bid":
        d = m.round.now()["dealer"]
        s.apply({"e": "bid", "player": d, "bid": bids[d]})
    s.apply({"e": "counts", "won": won})


def test_the_session_runs_whist_rounds_with_points_and_never_describes_a_bid(tmp_path):
    from companion.session import TableSession

    s = session_with()
    m = s.model
    assert m.screen() == "whist_bids" and m.phase == "bid" and not m.can_undo()
    s.apply({"e": "bid", "player": "Ben", "bid": 2})
    assert "2" not in m.describe({"e": "bid", "player": "Ben", "bid": 2})
    assert m.moves == [{"e": "bid", "player": "Ben", "bid": 2}]
    assert m.undo() == {"e": "bid", "player": "Ben", "bid": 2} and not m.can_undo()
    play_round_in(s, {"Ann": 0, "Ben": 2, "Cy": 0}, {"Ann": 0, "Ben": 2, "Cy": 0})
    assert m.round_over() and m.phase == "over" and m.screen() == "whist_play"
    with pytest.raises(IllegalActionError, match="round is over"):
        s.apply({"e": "bid", "player": "Ann", "bid": 0})
    r = s.finish_round()
    assert r["points"] == {"Ann": 10, "Ben": 12, "Cy": 10} and r["record"]["won"] == {"Ann": 0, "Ben": 2, "Cy": 0}
    assert "Ben 2/2 +12" in m.history_line(r)
    assert m.screen() == "whist_sheet"
    s.new_round()
    assert m.round_intro(2) == "Round 2 of 3: 1 card, Ben deals, Cy leads."
    s.apply({"e": "bid", "player": "Cy", "bid": 1})
    s.save(tmp_path / "s.json")
    back = TableSession.load(tmp_path / "s.json")
    assert back.to_dict() == s.to_dict() and back.model.round.bid_status() == m.round.bid_status()
    with pytest.raises(IllegalActionError, match="secret"):
        back.model.round.bids()
    assert back.totals() == {"Ann": 10, "Ben": 12, "Cy": 10}


def test_the_session_plays_to_the_captain_and_edits_a_round():
    s = session_with(("Ann", "Ben"), max_cards=2, hook=True)
    for bids, won in (({"Ann": 1, "Ben": 0}, {"Ann": 1, "Ben": 1}), ({"Ann": 0, "Ben": 0}, {"Ann": 1, "Ben": 0}),
                      ({"Ann": 1, "Ben": 2}, {"Ann": 0, "Ben": 2})):
        if s.model.round is None:
            s.new_round()
        play_round_in(s, bids, won)
        s.finish_round()
    assert s.game_over() and s.model.screen() == "whist_end"
    # round 1 (2 cards, Ann deals): Ann 1/1 +11, Ben 0/1 -1; round 2 (1 card, Ben deals): Ann 0/1 -1, Ben 0/0 +10;
    # round 3 (2 cards, Ann deals): Ann 1/0 -1, Ben 2/2 +12
    assert s.totals() == {"Ann": 9, "Ben": 21}
    with pytest.raises(Exception, match="over"):
        s.new_round()
    ruling = s.model.edit(s.history, 0, {"Ann": 0, "Ben": 1}, {"Ann": 1, "Ben": 1})
    s.edit_round(0, ruling)
    s.model.history_changed(s.history)
    assert s.totals() == {"Ann": -3, "Ben": 33}
    assert s.model.sheet_table(s.history).captains() == ["Ben"]
    # the hook rule holds in an edit too: Ben dealt round 2 and may not bid 1 after Ann's 0
    with pytest.raises(IllegalActionError, match="hook rule"):
        s.model.edit(s.history, 1, {"Ann": 0, "Ben": 1}, {"Ann": 1, "Ben": 0})
    assert s.totals() == {"Ann": -3, "Ben": 33}


@pytest.mark.parametrize("options,msg", [
    ({"colour": "red"}, "unknown option"),
    ({"mode": "fast"}, "mode must be"),
    ({"max_cards": 27}, "1 to 26"),
    ({"seed": "x", "first_dealer": None}, "seed"),
    ({"first_dealer": "Zed"}, "first dealer"),
    ({"hook": "yes"}, "hook"),
])
def test_bad_options_are_refused(options, msg):
    from companion.games.pirate_whist.table import WhistModel

    with pytest.raises(IllegalActionError, match=msg):
        WhistModel(["Ann", "Ben"], options)


def test_without_a_dealer_the_model_cuts_and_keeps_the_cut():
    from companion.games.pirate_whist.table import WhistModel

    m = WhistModel(["Ann", "Ben", "Cy"], {"seed": 5})
    o = m.options_json()
    assert o["cut"] and o["first_dealer"] == WhistModel(["Ann", "Ben", "Cy"], o).setup.first_dealer
    assert o["max_cards"] == 7 and WhistModel([f"P{i}" for i in range(10)], {}).setup.max_cards == 5


@pytest.mark.parametrize("damage", [
    lambda d: d["table"]["round"]["events"].append({"e": "bid", "player": "Cy", "bid": 9}),
    lambda d: d["table"]["round"].update(events="nope"),
    lambda d: d["history"][0]["record"]["won"].update(Ann=2),
    lambda d: d["history"][0].pop("record"),
])
def test_a_damaged_saved_session_is_refused_cleanly(tmp_path, damage):
    from companion.errors import PirateTableError
    from companion.session import TableSession

    s = session_with()
    play_round_in(s, {"Ann": 0, "Ben": 2, "Cy": 0}, {"Ann": 0, "Ben": 2, "Cy": 0})
    s.finish_round()
    s.new_round()
    s.apply({"e": "bid", "player": "Cy", "bid": 1})
    d = json.loads(json.dumps(s.to_dict()))
    damage(d)
    (tmp_path / "s.json").write_text(json.dumps(d))
    with pytest.raises(PirateTableError) as exc:
        TableSession.load(tmp_path / "s.json")
    assert "\n" not in str(exc.value)
