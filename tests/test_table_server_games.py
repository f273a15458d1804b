"""Every game's secrets through phones, against the real table models and sessions (no network here: the
phone table itself, ``PhoneTable`` over a ``SessionSource``, exactly as the app wires it): Pirate Whist's secret
bids (phones and the passed tablet mixed, the reveal at once, the hook dealer in the open, undo, resume) and
Bluff Pirate's votes and the setter's pick (only the picked vote is ever revealed). Each phone's own score and
whose turn it is, for both games."""

from __future__ import annotations

import json

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
