"""The phone table without the network: seat tokens, view_for (allow-list, fixed shape), the secret round's
reveal, Powderkeg's live/die/fold through phones, and the server's start/stop and rejoin over 127.0.0.1."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket

import pytest

from companion.errors import PirateTableError
from companion.games import powderkeg as pk
from companion.secrets import SecretRound
from companion.session import TableSession
from companion.table_server import PhoneTable, PublicState, Refused, SeatState, SecretSource, encode
from companion.table_server.client import PhoneClient
from companion.table_server.demo import DemoSource
from companion.table_server.net import is_lan, lan_address
from companion.table_server.session_source import SessionSource
from companion.table_server.qr import qr_png
from companion.table_server.server import TableServer
from companion.table_server.tokens import SeatTokens, well_formed_token

SEATS = ("Ann", "Bob", "Cy", "Dee")


def arun(coro, timeout: float = 60.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


# ------------------------------------------------------------------ tokens
def test_tokens_are_128_bit_distinct_and_reset_refuses_the_old_one():
    t = SeatTokens(SEATS)
    toks = [t.token(s) for s in SEATS]
    assert len(set(toks)) == 4 and all(well_formed_token(x) and len(x) == 22 for x in toks)  # 16 bytes b64
    assert [t.seat_for(x) for x in toks] == list(SEATS)
    old = t.token("Bob")
    new = t.reset("Bob")
    assert new != old and t.seat_for(old) is None and t.seat_for(new) == "Bob"
    for bad in (None, "", 5, b"x", old[:-1], old + "A", "é" * 22, "a" * 65, toks[0].upper()):
        if bad != toks[0]:
            assert t.seat_for(bad) is None
    assert "token" not in repr(t).lower() or toks[0] not in repr(t)
    assert SeatTokens(SEATS).table_id != t.table_id


def test_tokens_refuse_bad_tables():
    with pytest.raises(PirateTableError):
        SeatTokens([])
    with pytest.raises(PirateTableError):
        SeatTokens(["A", "A"])
    with pytest.raises(PirateTableError):
        SeatTokens(["A"], table_id="../x")


# ------------------------------------------------------------------ view_for
def _answer_all(table: PhoneTable, answers: dict[str, int]) -> None:
    for seat, choice in answers.items():
        table.sync()
        table.answer(seat, table._round_id, choice)


def test_view_for_is_an_allow_list_and_shows_only_the_own_answer_before_the_reveal():
    src = DemoSource(SEATS, kind="bid", choices=tuple(range(6)), rounds=2, title="Whist")
    table = PhoneTable(src, table_id="tbl1")
    table.sync()
    table.answer("Ann", 1, 4)
    ann, bob, tab = table.view_for("Ann"), table.view_for("Bob"), table.view_for(None)
    assert set(ann) == {"type", "v", "rev", "table", "seat", "game", "phase", "turn", "seats", "me", "question",
                        "reveal"}
    assert ann["question"]["mine"]["answered"] == 1 and ann["question"]["mine"]["label"] == "4"
    assert bob["question"]["mine"]["answered"] == 0 and bob["question"]["mine"]["label"] == ""
    assert "mine" not in tab["question"] and tab["me"] is None and tab["seat"] is None
    assert ann["question"]["waiting"] == ["Bob", "Cy", "Dee"] and ann["reveal"] is None
    # the same size whatever Ann answered
    sizes = set()
    for c in range(6):
        s2 = DemoSource(SEATS, kind="bid", choices=tuple(range(6)), rounds=2, title="Whist")
        t2 = PhoneTable(s2, table_id="tbl1")
        t2.sync()
        t2.answer("Ann", 1, c)
        sizes.add(len(encode(t2.view_for("Ann"))))
        assert encode(t2.view_for("Bob")) == encode(bob)
    assert len(sizes) == 1
    _answer_all(table, {"Bob": 0, "Cy": 5, "Dee": 1})
    after = table.view_for("Bob")
    assert after["reveal"] == {"id": 1, "kind": "bid", "answers": [["Ann", "4"], ["Bob", "0"], ["Cy", "5"],
                                                                   ["Dee", "1"]]}
    assert after["question"]["id"] == 2 and after["question"]["waiting"] == list(SEATS)
    assert src.history == [{"Ann": 4, "Bob": 0, "Cy": 5, "Dee": 1}]


def test_views_before_the_reveal_do_not_depend_on_the_answers():
    """Every assignment of answers: other seats' views are byte-identical, every view the same size."""
    choices = ("live", "die", "fold")
    seen: dict[tuple[str, int], set[str]] = {}
    sizes: dict[tuple[str, int], set[int]] = {}
    for combo in itertools.product(range(3), repeat=3):
        src = DemoSource(SEATS[:3], kind="live-die-fold", choices=choices, rounds=1)
        t = PhoneTable(src, table_id="tbl2")
        t.sync()
        for step, (seat, c) in enumerate(zip(SEATS[:3], combo[:2])):  # two of three in: still secret
            t.answer(seat, 1, c)
            for viewer in (*SEATS[:3], None):
                text = encode(t.view_for(viewer))
                sizes.setdefault((str(viewer), step), set()).add(len(text))
                if viewer is None or viewer not in SEATS[: step + 1]:
                    seen.setdefault((str(viewer), step), set()).add(text)
    assert all(len(v) == 1 for v in seen.values()), "a view before the reveal depended on an answer"
    assert all(len(v) == 1 for v in sizes.values()), "a view's size depended on an answer"


def test_refusals_change_nothing():
    src = DemoSource(SEATS, kind="vote", choices=("bluffing", "not bluffing"), rounds=1)
    t = PhoneTable(src, table_id="tbl3")
    t.sync()
    for rid, choice, code in ((2, 0, 409), (True, 0, 409), (1, 2, 400), (1, -1, 400), (1, True, 400),
                              (1, "0", 400), (1, 0.0, 400)):
        with pytest.raises(Refused) as e:
            t.answer("Ann", rid, choice)
        assert e.value.code == code
    t.answer("Ann", 1, 1)
    with pytest.raises(Refused) as e:
        t.answer("Ann", 1, 0)  # no second answer, no change
    assert e.value.code == 409 and t.view_for("Ann")["question"]["mine"]["label"] == "not bluffing"
    with pytest.raises(PirateTableError):
        t.view_for("Zed")


class _BadSource(DemoSource):
    def public_state(self):  # a game that hands over its whole state instead of a PublicState
        return {"game": "x", "secret": "leak"}


def test_view_for_takes_only_typed_values_from_the_game():
    t = PhoneTable(_BadSource(SEATS), table_id="tbl4")
    with pytest.raises(PirateTableError):
        t.view_for(None)
    with pytest.raises(PirateTableError):
        PublicState("game", "line\nbreak")
    with pytest.raises(PirateTableError):
        SeatState(True)
    assert isinstance(DemoSource(SEATS), SecretSource)


def test_a_round_completed_on_the_tablet_is_revealed_once_through_the_same_round():
    src = DemoSource(SEATS[:2], kind="pick", choices=("Cy", "Dee"), rounds=2)
    t = PhoneTable(src, table_id="tbl5")
    t.sync()
    t.answer("Ann", 1, 0)
    rnd = src.open_secret()
    rnd.submit("Bob", "Dee")  # the passed tablet submits into the same SecretRound
    t.sync()
    assert src.history == [{"Ann": "Cy", "Bob": "Dee"}]
    assert t.view_for("Ann")["reveal"]["answers"] == [["Ann", "Cy"], ["Bob", "Dee"]]
    t.sync()
    assert len(src.history) == 1 and t.view_for("Ann")["question"]["id"] == 2


def test_presence_grace_period():
    now = [100.0]
    t = PhoneTable(DemoSource(SEATS), table_id="tbl6", grace_s=30, clock=lambda: now[0])
    assert t.presence("Ann") == "free"
    t.connected("Ann")
    assert t.presence("Ann") == "here"
    t.disconnected("Ann")
    now[0] += 29
    assert t.presence("Ann") == "away"
    now[0] += 2
    assert t.presence("Ann") == "gone"
    t.connected("Ann")
    assert t.presence("Ann") == "here"
    t.reset_seat("Ann")
    assert t.presence("Ann") == "free"


# ------------------------------------------------------------------ Powderkeg through phones
def test_powderkeg_live_die_fold_through_phones_matches_the_referee(tmp_path):
    players = ["Ann", "Bob", "Cy", "Dee"]  # Ann deals; the others call
    sess = TableSession(players, buy_in=50, game="powderkeg")
    sess.new_round()
    saved: list[str] = []

    def apply(action):  # what the app does: through the session, then save
        sess.apply(action)
        sess.save(tmp_path / "s.json")
        saved.append(str(action))

    src = SessionSource(sess, apply)
    assert SessionSource.supports(sess)
    t = PhoneTable(src, table_id="pk001")
    legal = sess.hand.legal_actions()
    apply(next(a for a in legal if isinstance(a, pk.Dock)))
    t.sync()
    assert t.view_for(None)["question"] is None and t.view_for(None)["turn"] == "Ann"
    assert t.view_for(None)["game"] == "Powderkeg" and t.view_for("Ann")["me"]["note"] == "You deal this round"
    while sess.hand.phase == "opening":
        apply(next(a for a in sess.hand.legal_actions() if isinstance(a, pk.Reveal)))
    t.sync()
    q = t.view_for("Bob")["question"]
    assert q["kind"] == "live-die-fold" and q["asks"] == ["Bob", "Cy", "Dee"] and q["choices"] == list(pk.CALLS)
    stacks_before = dict(sess.hand.stacks)
    n_saved = len(saved)
    t.answer("Bob", q["id"], 0)  # live
    t.answer("Cy", q["id"], 1)  # die
    assert sess.hand.pending_calls == {}  # nothing reaches the referee (or the stacks, or the file) before
    assert sess.hand.stacks == stacks_before and len(saved) == n_saved
    t.answer("Dee", q["id"], 2)  # fold: the last one -> all applied at once, in calling order, and saved
    assert saved[-3:] == ["Bob calls live", "Cy calls die", "Dee calls fold"]
    assert sess.hand.phase == "reveal" and t.view_for(None)["question"] is None
    assert t.view_for("Ann")["reveal"]["answers"] == [["Bob", "live"], ["Cy", "die"], ["Dee", "fold"]]
    assert t.view_for("Bob")["me"]["score"] == stacks_before["Bob"] - 1
    assert t.view_for("Dee")["me"]["score"] == stacks_before["Dee"]
    assert t.view_for("Dee")["me"]["note"] == "You are out of this round"
    again = TableSession.load(tmp_path / "s.json")  # the calls were saved like the tablet's
    assert [str(a) for a in again.hand.moves] == [str(a) for a in sess.hand.moves]
    # the dealer turns the next card: the players still in get the next question
    apply(next(a for a in sess.hand.legal_actions() if isinstance(a, pk.Reveal)))
    t.sync()
    assert sess.hand.phase == "calling"
    q2 = t.view_for("Bob")["question"]
    assert q2["id"] == q["id"] + 1 and "Dee" not in q2["asks"]


class _EventGame:
    """A model shaped like Pirate Whist's: a SecretRound with a validate function and no choices, every bid saved
    as an event, an explicit reveal event."""

    def __init__(self):
        self.phase = "bidding"
        self.events: list[tuple] = []
        self.secret = SecretRound("bid", ("Ann", "Bob"), validate=lambda s, v: None if v in range(4) else "bad")

    def open_secret(self):
        return None if self.secret.revealed else self.secret

    def phone_choices(self, rnd):
        return tuple(range(4))

    def secret_action(self, seat, value):
        return ("bid", seat, value)

    def reveal_action(self, rnd):
        return ("reveal",)

    def apply(self, ev):
        self.events.append(ev)
        if ev[0] == "bid":
            self.secret.submit(ev[1], ev[2])
        else:
            self.secret.reveal()
            self.phase = "playing"


class _Session:
    def __init__(self, model):
        self.model, self.players, self.hand, self.uses_chips = model, ["Ann", "Bob"], None, False
        self.spec = type("Spec", (), {"title": "Pirate Whist"})()

    def totals(self):
        return {"Ann": 10, "Bob": 0}


def test_a_game_that_saves_every_answer_as_an_event_gets_them_from_phones():
    game = _EventGame()
    sess = _Session(game)
    t = PhoneTable(SessionSource(sess, game.apply), table_id="whist1")
    t.sync()
    q = t.view_for("Ann")["question"]
    assert q["choices"] == ["0", "1", "2", "3"] and q["phone"] == 1
    assert t.view_for("Ann")["me"] == {"score": 10, "label": "points", "note": ""}
    t.answer("Ann", q["id"], 3)
    assert game.events == [("bid", "Ann", 3)] and t.view_for("Ann")["question"]["mine"]["label"] == "3"
    with pytest.raises(Refused):
        t.answer("Ann", q["id"], 1)  # no second bid: refused before any event is written
    assert game.events == [("bid", "Ann", 3)]
    t.answer("Bob", q["id"], 0)
    assert game.events == [("bid", "Ann", 3), ("bid", "Bob", 0), ("reveal",)]  # the game's own reveal, once
    t.sync()
    t.sync()
    assert game.events[-1] == ("reveal",) and len(game.events) == 3
    assert t.view_for("Bob")["reveal"]["answers"] == [["Ann", "3"], ["Bob", "0"]]
    assert t.view_for("Bob")["phase"] == "playing"


# ------------------------------------------------------------------ misc parts
def test_lan_address_and_qr():
    addr = lan_address()
    assert addr == "127.0.0.1" or is_lan(addr)
    assert not is_lan("8.8.8.8") and not is_lan("127.0.0.1") and is_lan("192.168.1.20")
    png = qr_png("http://192.168.1.20:8765/t/abcd/#" + "A" * 22)
    assert png.startswith(b"\x89PNG") and len(png) > 200


def test_qr_code_keeps_the_four_module_quiet_zone():
    import cv2
    import numpy as np

    for scale in (6, 8):
        png = qr_png("http://192.168.1.20:8765/t/abcd/#" + "A" * 22, scale=scale)
        img = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_GRAYSCALE)
        dark = img < 128
        rows, cols = np.flatnonzero(dark.any(1)), np.flatnonzero(dark.any(0))
        # every finder pattern touches the symbol's edge, so the first dark module on each side ends the margin
        assert rows[0] == cols[0] == 4 * scale
        assert img.shape[0] - 1 - rows[-1] == img.shape[1] - 1 - cols[-1] == 4 * scale


# ------------------------------------------------------------------ over the network (127.0.0.1)
def _port_open(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_server_listens_only_between_start_and_stop_and_phones_rejoin_by_token():
    async def go():
        src = DemoSource(SEATS[:3], kind="vote", choices=("yes", "no"), rounds=2)
        srv = TableServer(src, host="127.0.0.1", grace_s=0.3)
        assert not srv.running
        await srv.start()
        port = srv.port
        assert _port_open(port)
        phones = {s: await PhoneClient(srv.url_for(s)).join() for s in SEATS[:3]}
        for p in phones.values():
            await p.wait_for(lambda c: c.view is not None and all(st == "here" for _, st in c.view["seats"]))
        await phones["Ann"].answer(1, 1)
        await phones["Ann"].wait_for(lambda c: c.view["question"]["mine"]["answered"] == 1)
        # Ann's phone sleeps and comes back with the same token: her answer and her seat are kept
        await phones["Ann"].close()
        await phones["Bob"].wait_for(lambda c: dict(c.view["seats"])["Ann"] == "away")
        await phones["Bob"].wait_for(lambda c: dict(c.view["seats"])["Ann"] == "gone")
        ann = await PhoneClient(srv.url_for("Ann")).join()
        await ann.wait_for(lambda c: c.view is not None and c.view["question"]["mine"]["label"] == "no")
        await phones["Bob"].wait_for(lambda c: dict(c.view["seats"])["Ann"] == "here")
        # a second connection for the same seat replaces the first (close 4000)
        ann2 = await PhoneClient(srv.url_for("Ann")).join()
        await ann.wait_for(lambda c: c.closed_code == 4000)
        await ann2.wait_for(lambda c: c.view is not None)
        await phones["Bob"].answer(1, 0)
        await phones["Cy"].answer(1, 0)
        for p in (ann2, phones["Bob"], phones["Cy"]):
            await p.wait_for(lambda c: c.view["reveal"] is not None)
        assert ann2.view["reveal"]["answers"] == [["Ann", "no"], ["Bob", "yes"], ["Cy", "yes"]]
        await srv.stop()
        assert not srv.running and not _port_open(port)
        for p in (ann2, phones["Bob"], phones["Cy"]):
            await p.wait_for(lambda c: c.closed_code is not None)
        with pytest.raises(PirateTableError):
            srv.url_for("Ann")

    arun(go())


def test_tablet_listener_and_tablet_submit_share_the_round():
    async def go():
        src = DemoSource(SEATS[:2], kind="vote", choices=("yes", "no"), rounds=1)
        srv = TableServer(src, host="127.0.0.1")
        got: list[dict] = []
        srv.add_listener(got.append)
        await srv.start()
        bob = await PhoneClient(srv.url_for("Bob")).join()
        await bob.wait_for(lambda c: c.view is not None)
        srv.submit_from_tablet("Ann", "no")  # Ann has no phone: she answers on the passed tablet
        with pytest.raises(Refused):
            srv.submit_from_tablet("Ann", "yes")
        await bob.wait_for(lambda c: c.view["question"]["waiting"] == ["Bob"])
        await bob.answer(1, 0)
        await bob.wait_for(lambda c: c.view["reveal"] is not None)
        assert got[-1]["reveal"]["answers"] == [["Ann", "no"], ["Bob", "yes"]] and got[-1]["seat"] is None
        assert all("mine" not in (v["question"] or {}) and v["me"] is None for v in got)
        assert json.loads(encode(got[-1])) == srv.view_for(None)
        await srv.stop()

    arun(go())


# ------------------------------------------------------------------ property: views never depend on secrets
from hypothesis import given, settings, strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 6),
    labels=st.lists(st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), min_size=1, max_size=12),
                    min_size=2, max_size=8, unique=True),
    data=st.data(),
)
def test_property_views_before_the_reveal_are_independent_of_the_answers(n, labels, data):
    seats = [f"S{i}" for i in range(n)]
    order = data.draw(st.permutations(seats))
    k = data.draw(st.integers(0, n - 1))  # how many answer before we look (the round stays open)
    a = [data.draw(st.integers(0, len(labels) - 1)) for _ in range(k)]
    b = [data.draw(st.integers(0, len(labels) - 1)) for _ in range(k)]
    views = []
    for answers in (a, b):
        src = DemoSource(seats, kind="bid", choices=tuple(labels), rounds=1)
        t = PhoneTable(src, table_id="prop1")
        t.sync()
        for seat, c in zip(order, answers):
            t.answer(seat, 1, c)
        views.append({v: encode(t.view_for(v)) for v in (*seats, None)})
    answered = set(order[:k])
    for v in (*seats, None):
        assert len(views[0][v]) == len(views[1][v])
        if v not in answered:
            assert views[0][v] == views[1][v]


def test_phone_service_starts_and_stops_on_the_running_loop():
    from companion.table_server.service import PhoneService

    async def go():
        seen: list[dict] = []
        svc = PhoneService(on_view=seen.append, host="127.0.0.1")
        assert not svc.running and svc.stop() is None
        await svc.start(DemoSource(SEATS[:2]))
        first = svc.server
        assert svc.running and seen and seen[-1]["seat"] is None
        port1, tid1 = first.port, first.table_id
        await svc.start(DemoSource(SEATS[:2]))  # the next game: the old server stops, a new table id
        assert not first.running and svc.server.table_id != tid1 and not _port_open(port1)
        await svc.stop()
        assert not svc.running
        bad = PhoneService(host="203.0.113.77")  # an address this machine does not have
        await bad.start(DemoSource(SEATS[:2]))
        assert not bad.running and bad.error.startswith("phones: cannot listen")

    arun(go())
