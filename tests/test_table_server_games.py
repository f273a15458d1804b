"""Every game's secrets through phones, against the real table models and sessions (no network here: the
phone table itself, ``PhoneTable`` over a ``SessionSource``, exactly as the app wires it): Pirate Whist's secret
bids (phones and the passed tablet mixed, the reveal at once, the hook dealer in the open, undo, resume) and
Bluff Pirate's votes and the setter's pick (only the picked vote is ever revealed). Each phone's own score and
whose turn it is, for both games."""

from __future__ import annotations


import pytest

from companion.games.bluff_pirate.model import Intent
from companion.session import TableSession
from companion.table_server import PhoneTable, Refused, encode
from companion.table_server.session_source import SessionSource

P4 = ["Ann", "Bob", "Cy", "Dee"]


class App:
    """What the app does with a phone's action: through the session, then saved."""

    def __init__(self, sess: TableSession, path) -> None:
        self.sess, self.path, self.applied = sess, path, []

    def __call__(self, action) -> None:
        self.sess.apply(action)
        self.sess.save(self.path)
        self.applied.append(action)


def whist(tmp_path, **options):
    opts = {"max_cards": 3, "first_dealer": "Dee", **options}
    sess = TableSession(P4, None, "pirate-whist", opts)
    sess.new_round()
    app = App(sess, tmp_path / "s.json")
    table = PhoneTable(SessionSource(sess, app), table_id="whist-test")
    table.sync()
    return sess, app, table


def q(table, seat=None):
    return table.view_for(seat)["question"]


# ------------------------------------------------------------------ Pirate Whist
def test_whist_bids_from_phones_and_the_passed_tablet_in_one_round_revealed_at_once(tmp_path):
    sess, app, table = whist(tmp_path)
    model = sess.model
    rnd = model.round.secret_round()
    assert SessionSource.supports(sess) and table.source.open_secret() is rnd
    ann = table.view_for("Ann")
    assert ann["game"] == "Pirate Whist" and ann["phase"] == "Round 1 of 5 (3 cards): secret bids"
    assert ann["turn"] is None  # everyone bids at once
    assert ann["question"]["kind"] == "bid" and ann["question"]["asks"] == P4  # Ann leads: Dee deals
    assert ann["question"]["choices"] == ["0", "1", "2", "3"] and ann["question"]["phone"] == 1
    assert ann["me"] == {"score": 0, "label": "points",
                         "note": "Your secret bid: how many of the 3 tricks will you take?"}
    # Ann and Dee bid from their phones; Bob on the passed tablet (its screen: app.act); Cy through the server's
    # tablet path (app.phones_answer) -- all into the same SecretRound
    table.answer("Ann", ann["question"]["id"], 2)
    sess.apply({"e": "bid", "player": "Bob", "bid": 1})
    table.sync()
    table.submit("Cy", 0)
    assert rnd.waiting() == ["Dee"] and model.phase == "bid"
    assert app.applied == [{"e": "bid", "player": "Ann", "bid": 2}, {"e": "bid", "player": "Cy", "bid": 0}]
    with pytest.raises(Refused) as e:
        table.answer("Ann", ann["question"]["id"], 1)  # no second bid; nothing written
    assert e.value.code == 409 and len(app.applied) == 2
    with pytest.raises(Refused):
        table.answer("Dee", ann["question"]["id"], 4)  # no such choice (3 cards)
    for viewer in (None, *P4):
        v = table.view_for(viewer)
        assert v["reveal"] is None and v["question"]["waiting"] == ["Dee"]
    # the last bid: the game's own reveal event follows at once, once
    table.answer("Dee", ann["question"]["id"], 3)
    assert app.applied[-2:] == [{"e": "bid", "player": "Dee", "bid": 3}, {"e": "reveal"}]
    assert model.phase == "play" and rnd.revealed and model.round.bids() == {"Ann": 2, "Bob": 1, "Cy": 0, "Dee": 3}
    for viewer in (None, *P4):
        v = table.view_for(viewer)
        assert v["question"] is None
        assert v["reveal"] == {"id": 1, "kind": "bid", "answers": [["Ann", "2"], ["Bob", "1"], ["Cy", "0"],
                                                                   ["Dee", "3"]]}
    assert table.view_for("Cy")["me"]["note"] == "You bid 0"
    assert table.view_for(None)["phase"] == "Round 1 of 5 (3 cards): 6 bid for 3 tricks"
    table.sync()
    assert app.applied.count({"e": "reveal"}) == 1
    # saved like the tablet's: the bids are Whist's own events, the reveal too
    again = TableSession.load(tmp_path / "s.json")
    assert again.model.round.events == model.round.events and again.model.phase == "play"
    # the round is played out; the next round's bids are a new question; each phone shows its own total
    sess.apply({"e": "counts", "won": {"Ann": 2, "Bob": 1, "Cy": 0, "Dee": 0}})
    sess.new_round()
    table.sync()
    totals = sess.totals()
    assert totals == {"Ann": 12, "Bob": 11, "Cy": 10, "Dee": -3}
    for p in P4:
        assert table.view_for(p)["me"]["score"] == totals[p] and table.view_for(p)["me"]["label"] == "points"
    q2 = q(table, "Bob")
    assert q2["id"] == 2 and q2["choices"] == ["0", "1", "2"] and q2["asks"] == ["Bob", "Cy", "Dee", "Ann"]


def test_whist_a_round_completed_on_the_tablet_is_revealed_at_once_by_the_phone_table(tmp_path):
    sess, app, table = whist(tmp_path)
    table.answer("Ann", 1, 0)
    for p, b in (("Bob", 1), ("Cy", 2), ("Dee", 3)):  # the rest on the passed tablet
        sess.apply({"e": "bid", "player": p, "bid": b})
    assert sess.model.phase == "reveal"  # the tablet alone would now wait for its Reveal button
    table.sync()  # the app refreshes the phones after every save
    assert sess.model.phase == "play" and app.applied[-1] == {"e": "reveal"}
    assert table.view_for("Ann")["reveal"]["answers"] == [["Ann", "0"], ["Bob", "1"], ["Cy", "2"], ["Dee", "3"]]


def test_whist_undo_of_a_bid_opens_the_question_again_for_that_phone_only(tmp_path):
    sess, app, table = whist(tmp_path)
    table.answer("Ann", 1, 3)
    table.answer("Bob", 1, 1)
    sess.undo()  # Bob's bid taken back (the table replays its steps: a new SecretRound object)
    table.sync()
    qb, qa = q(table, "Bob"), q(table, "Ann")
    assert qb["id"] == 2 and qb["mine"]["answered"] == 0 and qa["mine"]["answered"] == 1
    assert qa["mine"]["label"] == "3" and qb["waiting"] == ["Bob", "Cy", "Dee"]
    with pytest.raises(Refused):
        table.answer("Bob", 1, 2)  # the old question is closed
    table.answer("Bob", 2, 2)
    table.answer("Cy", 2, 0)
    table.answer("Dee", 2, 0)
    assert sess.model.round.bids() == {"Ann": 3, "Bob": 2, "Cy": 0, "Dee": 0}


def test_whist_hook_dealer_bids_last_in_the_open_from_the_phone_or_the_tablet(tmp_path):
    sess, app, table = whist(tmp_path, hook=True)
    qa = q(table, "Ann")
    assert qa["asks"] == ["Ann", "Bob", "Cy"]  # the dealer is not asked in secret
    dee = table.view_for("Dee")
    assert dee["question"]["mine"]["asked"] == 0 and dee["me"]["note"] == "You deal: you bid last, in the open"
    for p, c in (("Ann", 1), ("Bob", 1), ("Cy", 0)):
        table.answer(p, qa["id"], c)
    assert sess.model.phase == "dealer-bid" and app.applied[-1] == {"e": "reveal"}
    # the dealer's open bid: a one-seat question without the forbidden number (the bids may not total 3)
    v = table.view_for("Dee")
    assert v["reveal"]["kind"] == "bid" and v["turn"] == "Dee"
    assert v["question"]["kind"] == "dealer bid" and v["question"]["asks"] == ["Dee"]
    assert v["question"]["choices"] == ["0", "2", "3"] and v["me"]["note"] == "Your bid, in the open (not 1: the hook rule)"
    assert "Dee (dealer) bids in the open" in v["phase"] and table.view_for("Ann")["me"]["note"] == "You bid 1"
    table.answer("Dee", v["question"]["id"], 1)  # the bid 2
    assert app.applied[-1] == {"e": "bid", "player": "Dee", "bid": 2} and sess.model.phase == "play"
    assert table.view_for("Ann")["reveal"] == {"id": 2, "kind": "dealer bid", "answers": [["Dee", "2"]]}
    assert table.view_for("Ann")["question"] is None
    # undo the dealer's bid and give it on the tablet instead: the phones see it just the same
    sess.undo()
    table.sync()
    v = table.view_for("Dee")
    assert v["question"]["kind"] == "dealer bid" and v["question"]["id"] == 3 and v["question"]["mine"]["answered"] == 0
    sess.apply({"e": "bid", "player": "Dee", "bid": 3})
    table.sync()
    assert table.view_for("Bob")["reveal"] == {"id": 3, "kind": "dealer bid", "answers": [["Dee", "3"]]}
    assert sess.model.round.bids()["Dee"] == 3


def test_whist_views_before_the_reveal_do_not_depend_on_the_bids(tmp_path):
    seen: dict[str, set[str]] = {}
    sizes: dict[str, set[int]] = {}
    for k, bids in enumerate(({"Ann": 0, "Bob": 0, "Cy": 0}, {"Ann": 3, "Bob": 2, "Cy": 1},
                              {"Ann": 1, "Bob": 3, "Cy": 3})):
        sess, app, table = whist(tmp_path / str(k), hook=True)
        for p, b in bids.items():
            table.answer(p, 1, b)
            if p == "Cy":  # the last bid: revealed at once
                assert sess.model.phase == "dealer-bid"
                break
            assert sess.model.phase == "bid"
            for viewer in (None, *P4):
                text = encode(table.view_for(viewer))
                key = f"{p}:{viewer}"
                sizes.setdefault(key, set()).add(len(text))
                if viewer in (None, "Dee") or P4.index(viewer) > P4.index(p):  # seats that have not bid
                    seen.setdefault(key, set()).add(text)
    assert len(seen) == 7 and all(len(v) == 1 for v in seen.values()) and all(len(v) == 1 for v in sizes.values())


def test_whist_turn_in_trick_by_trick_play_is_shown_on_every_phone(tmp_path):
    sess, app, table = whist(tmp_path, mode="tricks")
    for p in P4:
        table.answer(p, 1, 1)
    assert table.view_for("Ann")["turn"] == "Ann"  # the leader plays first
    sess.apply({"e": "trick", "winner": "Cy"})
    table.sync()
    for p in (None, *P4):
        assert table.view_for(p)["turn"] == "Cy" and table.view_for(p)["phase"].endswith("trick 2")


# ------------------------------------------------------------------ Bluff Pirate
def bluff(tmp_path, seed=1):
    sess = TableSession(P4, None, "bluff-pirate", {"seed": seed})
    sess.new_round()
    app = App(sess, tmp_path / "s.json")
    table = PhoneTable(SessionSource(sess, app), table_id="bluff-test")
    table.sync()
    return sess, app, table


def lay_a_set(sess, table):
    sess.apply(Intent("draw"))
    sess.apply(Intent("lay_set", (("hat",), ("map", "hat"))))  # Ann: 1 hat up, 2 down (a bluff)
    table.sync()


def test_bluff_pirate_votes_from_every_other_phone_then_the_setters_pick_reveals_only_the_picked_vote(tmp_path):
    sess, app, table = bluff(tmp_path)
    assert table.view_for("Bob")["question"] is None and table.view_for("Bob")["turn"] == "Ann"
    lay_a_set(sess, table)
    t = sess.model.round
    qv = q(table, "Bob")
    assert qv["kind"] == "vote" and qv["asks"] == ["Bob", "Cy", "Dee"] and qv["choices"] == ["bluffing",
                                                                                             "not bluffing"]
    assert table.view_for("Bob")["turn"] is None and table.view_for("Ann")["question"]["mine"]["asked"] == 0
    assert table.view_for("Ann")["me"]["note"] == "The others vote on your set"
    with pytest.raises(Refused):
        table.answer("Ann", qv["id"], 0)  # the setter does not vote
    table.answer("Bob", qv["id"], 0)  # bluffing, from his phone -- into Bob's own SecretRound
    sess.apply(Intent("vote", ("Cy", "not bluffing")))  # Cy on the passed tablet
    table.sync()
    assert t.pending.votes["Bob"].has_answered("Bob") and q(table, "Dee")["waiting"] == ["Dee"]
    with pytest.raises(Refused):
        table.answer("Bob", qv["id"], 1)  # no second vote
    table.answer("Dee", qv["id"], 0)
    # every vote is in: nothing is revealed; the setter's pick is the next question
    assert not any(r.revealed for r in t.pending.votes.values()) and t.step == "pick"
    assert [a for a in app.applied if a.name == "vote"] == [Intent("vote", ("Bob", "bluffing")),
                                                             Intent("vote", ("Dee", "bluffing"))]
    qp = q(table, "Ann")
    assert qp["kind"] == "pick" and qp["id"] == qv["id"] + 1 and qp["asks"] == ["Ann"]
    assert qp["choices"] == ["Bob", "Cy", "Dee"] and table.view_for("Ann")["turn"] == "Ann"
    for viewer in (None, *P4):
        assert table.view_for(viewer)["reveal"] is None  # the votes were never revealed as a whole
    with pytest.raises(Refused):
        table.answer("Bob", qp["id"], 0)  # only the setter picks
    table.answer("Ann", qp["id"], 1)  # Cy
    assert app.applied[-1] == Intent("pick", ("Cy",))
    r = t.last_reveal
    assert (r.voter, r.vote, r.hidden, r.outcome) == ("Cy", "not bluffing", ("map", "hat"), "trusted")
    assert t.pending is None and not t.secret_rounds("Bob")
    for viewer in (None, *P4):
        v = table.view_for(viewer)
        assert v["reveal"] == {"id": qp["id"], "kind": "pick", "answers": [["Ann", "Cy"]]}
        assert v["question"] is None and v["turn"] == "Bob"
        assert v["phase"].startswith("Cy voted not bluffing. Ann was bluffing (hidden: map, hat).")
        assert "Bob voted" not in encode(v) and "Dee voted" not in encode(v)
    again = TableSession.load(tmp_path / "s.json")  # saved like the tablet's
    assert again.model.round.to_json() == t.to_json()


def test_bluff_pirate_unpicked_votes_never_reach_any_view(tmp_path):
    """Two tables that differ only in the votes nobody picks show every phone and the tablet exactly the same
    views, before and after the pick."""
    runs = []
    for k, (bob, dee) in enumerate(((0, 0), (1, 1), (0, 1))):
        sess, app, table = bluff(tmp_path / str(k))
        lay_a_set(sess, table)
        views = []
        for seat, c in (("Bob", bob), ("Cy", 0), ("Dee", dee)):
            table.answer(seat, 1, c)
            views.append({v: encode(table.view_for(v)) for v in (None, "Ann", "Cy")})
        table.answer("Ann", 2, 1)
        views.append({v: encode(table.view_for(v)) for v in (None, *P4)})
        runs.append(views)
    assert runs[0] == runs[1] == runs[2]


def test_bluff_pirate_undo_mid_vote_closes_the_question_and_phones_follow(tmp_path):
    sess, app, table = bluff(tmp_path)
    lay_a_set(sess, table)
    table.answer("Bob", 1, 1)
    sess.undo()  # the turn in progress goes back to its start
    table.sync()
    assert table.view_for("Bob")["question"] is None and table.view_for("Bob")["turn"] == "Ann"
    lay_a_set(sess, table)
    qv = q(table, "Bob")
    assert qv["id"] == 2 and qv["mine"]["answered"] == 0 and qv["waiting"] == ["Bob", "Cy", "Dee"]


def test_bluff_pirate_each_phone_shows_its_races_won_and_whose_turn(tmp_path):
    import random

    from companion.games.bluff_pirate.table import demo_intent

    sess, app, table = bluff(tmp_path, seed=3)
    rng = random.Random(5)
    while not sess.model.round_over():
        t = sess.model.round
        for p in (None, *P4):
            v = table.view_for(p)
            want = {"votes": None, "pick": t.pending.setter if t.pending else None}.get(t.step, t.current)
            assert v["turn"] == want, (t.step, v["turn"])
        name, args = demo_intent(t, rng)
        sess.apply(Intent(name, args))
        table.sync()
    winner = sess.model.round.state.winner
    sess.new_round()
    table.sync()
    for p in P4:
        me = table.view_for(p)["me"]
        assert me["score"] == int(p == winner) == sess.totals()[p] and me["label"] == "points"
        assert me["note"].startswith("Your ship: square 0 of ")  # the next race
    assert table.view_for(None)["me"] is None


def test_a_secret_ballot_answers_like_a_round_but_is_never_revealed_as_a_whole():
    from companion.errors import IllegalActionError
    from companion.secrets import SecretBallot, SecretRound

    rounds = {s: SecretRound("vote", (s,), ("y", "n")) for s in ("Bob", "Cy")}
    b = SecretBallot("vote", rounds, ("y", "n"))
    assert b.sealed and b.seats == ("Bob", "Cy") and b.waiting() == ["Bob", "Cy"]
    assert b.why_not("Ann", "y") and b.why_not("Bob", "maybe") and b.why_not("Bob", "y") is None
    assert b.submit("Bob", "n") is False and rounds["Bob"].has_answered("Bob") and b.own_answer("Bob") == "n"
    with pytest.raises(IllegalActionError):
        b.submit("Bob", "y")
    assert b.submit("Cy", "y") is True and b.complete and not b.revealed
    with pytest.raises(IllegalActionError):
        b.reveal()
    with pytest.raises(IllegalActionError):
        b.answers()
    assert b.public_view() == {"kind": "vote", "seats": ["Bob", "Cy"], "waiting": [], "revealed": False}
    assert "'n'" not in repr(b) and "'y'" not in repr(b)
    assert b.reveal_one("Cy") == "y" and not rounds["Bob"].revealed
    with pytest.raises(IllegalActionError):
        SecretBallot("vote", {"Bob": SecretRound("vote", ("Cy",))})
