"""The leak test against the real games: a whole Pirate Whist round (secret bids from three phones and the
passed tablet, the reveal, the tricks, the next round's scores) and a Bluff Pirate set (votes from every other
player, one on the tablet, then the setter's pick from her phone), each driven through the real ``TableSession``,
the real table model, ``SessionSource`` and the real ``TableServer`` with websocket phones on 127.0.0.1.

Every run is recorded whole: every WebSocket frame to every phone, every HTTP ``/view`` answer, every view the
tablet's listener gets, every log line at DEBUG. Runs that differ only in their secrets must be the same (content
and size, apart from a seat's own answer in its own view) up to the reveal; logs never carry an answer at all;
Bluff Pirate's unpicked votes are never revealed, so runs that differ only in those are the same throughout.
After the reveal the game state is right."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
from typing import Any

from companion.games.bluff_pirate.model import Intent
from companion.session import TableSession
from companion.table_server import encode
from companion.table_server.client import PhoneClient
from companion.table_server.server import TableServer
from companion.table_server.session_source import SessionSource

P4 = ("Ann", "Bob", "Cy", "Dee")
TID = "leakgames"


class Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.name.startswith("phone"):  # the scripted phones' own client logs: not the tablet's
            return
        text = record.getMessage()
        if record.exc_info:
            text += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(f"{record.name}:{record.levelname}:{text}")


def _get_view(port: int, token: str) -> str:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", f"/t/{TID}/view", headers={"Authorization": f"Bearer {token}"})
        r = c.getresponse()
        assert r.status == 200
        return r.read().decode()
    finally:
        c.close()


async def drive(sess: TableSession, path, steps: list[tuple]) -> dict[str, Any]:
    """Run ``steps`` against a phone server over ``sess``: ("phone", seat, choice index) a phone answers the
    open question; ("tablet", seat, value) the passed tablet answers through the server (app.phones_answer);
    ("act", action) the tablet's own screen applies a game action (app.act); ("call", fn) the app does
    something else (a new round). After each step every phone has its newest view and every phone's HTTP view
    is fetched."""
    cap = Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(cap)
    root.setLevel(logging.DEBUG)
    applied: list[Any] = []

    def apply(action: Any) -> None:  # what the app does with a phone's action: through the session, saved
        sess.apply(action)
        sess.save(path)
        applied.append(action)

    srv = TableServer(SessionSource(sess, apply), host="127.0.0.1", table_id=TID)
    tablet: list[str] = []
    srv.add_listener(lambda v: tablet.append(encode(v)))
    bodies: dict[str, list[str]] = {s: [] for s in P4}
    phones: dict[str, PhoneClient] = {}
    try:
        await srv.start()

        async def settle() -> None:
            for p in phones.values():
                await p.wait_for(lambda c: c.view is not None and c.view["rev"] == srv.table.rev)
            for s, p in phones.items():
                bodies[s].append(await asyncio.to_thread(_get_view, srv.port, p.token))

        for s in P4:
            phones[s] = await PhoneClient(srv.url_for(s)).join()
            await settle()
        for step in steps:
            rev = srv.table.rev
            if step[0] == "phone":
                _, seat, choice = step
                await phones[seat].answer(phones[seat].view["question"]["id"], choice)
                for _ in range(500):
                    if srv.table.rev > rev or phones[seat].errors:
                        break
                    await asyncio.sleep(0.01)
            elif step[0] == "tablet":
                srv.submit_from_tablet(step[1], step[2])
            elif step[0] == "act":
                apply(step[1])
                srv.refresh()
            else:
                step[1]()
                sess.save(path)
                srv.refresh()
            await settle()
        for p in phones.values():
            await p.close()
        logs = [ln.replace(str(srv.port), "PORT") for ln in cap.lines]
        await srv.stop()
    finally:
        root.removeHandler(cap)
        root.setLevel(old_level)
    return {"frames": {s: list(p.frames) for s, p in phones.items()}, "http": bodies, "tablet": tablet,
            "logs": logs, "applied": applied, "errors": {s: p.errors for s, p in phones.items()},
            "last": {s: p.view for s, p in phones.items()}}


def normalise(text: str) -> tuple[str, int]:
    """(content with the seat's own answer blanked, size): only a phone's own answer may differ between runs."""
    m = json.loads(text)
    q = m.get("question")
    if q and "mine" in q:
        q["mine"] = {k: ("*" if k in ("choice", "label", "pad") else v) for k, v in q["mine"].items()}
    return encode(m), len(text)


def streams(run: dict[str, Any]) -> dict[str, list[str]]:
    out = {f"frames:{s}": f for s, f in run["frames"].items()}
    out.update({f"http:{s}": b for s, b in run["http"].items()})
    out["tablet"] = run["tablet"]
    return out


def before_reveal(texts: list[str]) -> list[str]:
    """Everything sent before the first reveal (a reveal, once made, stays in every later view)."""
    return [t for t in texts if json.loads(t).get("reveal") is None]


def assert_same(a: dict[str, Any], b: dict[str, Any], *, up_to_reveal: bool, at_least: int = 3) -> None:
    sa, sb = streams(a), streams(b)
    for key in sa:
        xa, xb = sa[key], sb[key]
        if up_to_reveal:
            xa, xb = before_reveal(xa), before_reveal(xb)
        assert len(xa) == len(xb) and len(xa) >= at_least, (key, len(xa), len(xb))
        for i, (x, y) in enumerate(zip(xa, xb)):
            nx, ny = normalise(x), normalise(y)
            assert nx[0] == ny[0], f"{key} [{i}] depends on a secret:\n{x}\n{y}"
            assert nx[1] == ny[1], f"{key} [{i}]: its size depends on a secret:\n{x}\n{y}"
    assert a["logs"] == b["logs"], "a log line depends on a secret"
    assert a["errors"] == b["errors"] == {s: [] for s in P4}


# ------------------------------------------------------------------ Pirate Whist: a whole round
def whist_run(tmp_path, name: str, bids: dict[str, int]) -> dict[str, Any]:
    sess = TableSession(list(P4), None, "pirate-whist", {"max_cards": 3, "first_dealer": "Dee"})
    sess.new_round()
    won = {"Ann": 2, "Bob": 1, "Cy": 0, "Dee": 0}
    steps = [("phone", "Ann", bids["Ann"]),                              # Ann leads (Dee deals)
             ("tablet", "Bob", bids["Bob"]),                             # Bob: the passed tablet, via the server
             ("act", {"e": "bid", "player": "Cy", "bid": bids["Cy"]}),   # Cy: the tablet's own bid screen
             ("phone", "Dee", bids["Dee"]),                              # the last bid: revealed at once
             ("act", {"e": "counts", "won": won}),                       # the tricks, on the tablet
             ("call", sess.new_round)]                                   # the next round: scores on the phones
    run = asyncio.run(asyncio.wait_for(drive(sess, tmp_path / f"{name}.json", steps), 120))
    run["session"] = sess
    return run


def test_a_whole_whist_round_with_phones_leaks_no_bid_before_the_reveal(tmp_path):
    ba = {"Ann": 0, "Bob": 1, "Cy": 2, "Dee": 3}
    bb = {"Ann": 3, "Bob": 0, "Cy": 3, "Dee": 1}
    a, b = whist_run(tmp_path, "a", ba), whist_run(tmp_path, "b", bb)
    assert_same(a, b, up_to_reveal=True, at_least=4)
    for run, bids in ((a, ba), (b, bb)):
        sess = run["session"]
        # the bids were saved as Whist's own events (phones, tablet alike), revealed once
        assert [x for x in run["applied"] if x.get("e") == "reveal"] == [{"e": "reveal"}]
        assert sess.history[0]["bids"] == bids and sess.history[0]["won"] == {"Ann": 2, "Bob": 1, "Cy": 0, "Dee": 0}
        totals = sess.totals()
        for s in P4:
            v = run["last"][s]
            assert v["reveal"] == {"id": 1, "kind": "bid", "answers": [[p, str(bids[p])] for p in P4]}
            assert v["me"]["score"] == totals[s] and v["me"]["label"] == "points"
            assert v["question"]["id"] == 2 and v["question"]["kind"] == "bid" and v["turn"] is None
            assert v["phase"] == "Round 2 of 5 (2 cards): secret bids"
        # the reveal reached every phone and the tablet in the same step (one frame each, no bid before it)
        for s in P4:
            first = next(json.loads(f) for f in run["frames"][s] if json.loads(f)["reveal"] is not None)
            assert first["question"] is None and first["phase"].endswith(f"{sum(bids.values())} bid for 3 tricks")
    assert a["session"].totals() != b["session"].totals()
    for ln in a["logs"]:
        assert "bid" not in ln.split(":", 2)[2].replace("(bid)", "") and "#" not in ln


# ------------------------------------------------------------------ Bluff Pirate: votes and the pick
def bluff_run(tmp_path, name: str, hidden: tuple[str, ...], votes: dict[str, str], pick: str) -> dict[str, Any]:
    sess = TableSession(list(P4), None, "bluff-pirate", {"seed": 1})
    sess.new_round()
    idx = {"bluffing": 0, "not bluffing": 1}
    steps = [("act", Intent("draw")),
             ("act", Intent("lay_set", (("hat",), hidden))),   # Ann: one hat face up, the rest face down
             ("phone", "Bob", idx[votes["Bob"]]),
             ("tablet", "Cy", votes["Cy"]),                    # Cy votes on the passed tablet
             ("phone", "Dee", idx[votes["Dee"]]),              # every vote in: the pick is the next question
             ("phone", "Ann", ["Bob", "Cy", "Dee"].index(pick))]
    run = asyncio.run(asyncio.wait_for(drive(sess, tmp_path / f"{name}.json", steps), 120))
    run["session"] = sess
    return run


def test_bluff_pirate_votes_and_the_pick_with_phones_leak_nothing_and_reveal_only_the_picked_vote(tmp_path):
    a = bluff_run(tmp_path, "a", ("map", "hat"), {"Bob": "bluffing", "Cy": "not bluffing", "Dee": "bluffing"}, "Cy")
    b = bluff_run(tmp_path, "b", ("hat", "hat"), {"Bob": "not bluffing", "Cy": "bluffing", "Dee": "not bluffing"},
                  "Dee")
    # c differs from a only in the votes nobody picks: never revealed, so everything is the same, to the end
    c = bluff_run(tmp_path, "c", ("map", "hat"), {"Bob": "not bluffing", "Cy": "not bluffing", "Dee": "not bluffing"},
                  "Cy")
    assert_same(a, b, up_to_reveal=True, at_least=4)
    assert_same(a, c, up_to_reveal=False, at_least=7)
    for run, voter, vote, hidden in ((a, "Cy", "not bluffing", ("map", "hat")), (b, "Dee", "not bluffing",
                                                                                  ("hat", "hat"))):
        t = run["session"].model.round
        r = t.last_reveal
        assert (r.voter, r.vote, r.hidden) == (voter, vote, hidden) and t.pending is None
        for s in P4:
            v = run["last"][s]
            assert v["reveal"] == {"id": 2, "kind": "pick", "answers": [["Ann", voter]]}
            assert v["phase"].startswith(f"{voter} voted {vote}. Ann was ") and f"hidden: {', '.join(hidden)}" in v["phase"]
            assert v["turn"] == "Bob" and v["question"] is None
        # the votes were never revealed as a whole: no reveal of round 1 ever reached anyone
        for texts in streams(run).values():
            assert all((json.loads(x).get("reveal") or {"id": 2})["id"] == 2 for x in texts)
    for ln in a["logs"] + b["logs"]:
        assert "bluffing" not in ln and "map" not in ln and "#" not in ln
