"""The leak test: a whole Pirate Whist bid round, then a Bluff Pirate vote and the setter's pick of a voter,
driven by four phones over 127.0.0.1 — twice, with different secrets. Everything the tablet side emits (every
WebSocket frame to every phone, every HTTP response, every log line at DEBUG) is recorded. Up to each reveal,
the two runs must be indistinguishable: the same content (apart from a seat's own answer in its own view) and
the same sizes. Log lines never carry an answer at all."""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
from typing import Any, Mapping, Sequence

from companion.secrets import SecretRound
from companion.table_server import PublicState, SeatState, encode
from companion.table_server.client import PhoneClient
from companion.table_server.server import TableServer

SEATS = ("Ann", "Bob", "Cy", "Dee")
VOTES = ("bluffing", "not bluffing")


class ScriptSource:
    """Whist bids (everyone, 0..5), then Ann sets a set down: Bob, Cy and Dee vote, Ann picks a voter."""

    def __init__(self) -> None:
        self.plan = [
            ("bid", SEATS, tuple(range(6)), "Pirate Whist", "Bids for round 1 (5 cards)"),
            ("vote", ("Bob", "Cy", "Dee"), VOTES, "Bluff Pirate", "Ann set down 3 cards: bluffing?"),
            ("pick", ("Ann",), ("Bob", "Cy", "Dee"), "Bluff Pirate", "Ann picks a voter"),
        ]
        self.history: list[dict[str, Any]] = []
        self._open: SecretRound | None = self._next()

    def _next(self) -> SecretRound | None:
        if len(self.history) >= len(self.plan):
            return None
        kind, seats, choices, _, _ = self.plan[len(self.history)]
        return SecretRound(kind, seats, choices)

    def seats(self) -> Sequence[str]:
        return SEATS

    def public_state(self) -> PublicState:
        i = min(len(self.history), len(self.plan) - 1)
        return PublicState(self.plan[i][3], self.plan[i][4], None)

    def seat_state(self, seat: str) -> SeatState:
        return SeatState(50, "chips", "Your answer, in secret")

    def open_secret(self) -> SecretRound | None:
        return self._open

    def secret_revealed(self, rnd: SecretRound, answers: Mapping[str, Any]) -> None:
        self.history.append(dict(answers))
        self._open = self._next()


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


def _get_view(port: int, tid: str, token: str) -> str:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", f"/t/{tid}/view", headers={"Authorization": f"Bearer {token}"})
        r = c.getresponse()
        assert r.status == 200
        return r.read().decode()
    finally:
        c.close()


async def scenario(bids: dict[str, int], votes: dict[str, int], pick: int) -> dict[str, Any]:
    cap = Capture()
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(cap)
    root.setLevel(logging.DEBUG)
    src = ScriptSource()
    srv = TableServer(src, host="127.0.0.1", table_id="leaktest")
    http_bodies: dict[str, list[str]] = {s: [] for s in SEATS}
    try:
        await srv.start()
        port = srv.port
        urls = {s: srv.url_for(s) for s in SEATS}
        phones: dict[str, PhoneClient] = {}

        async def settle() -> None:
            for p in phones.values():
                await p.wait_for(lambda c: c.view is not None and c.view["rev"] == srv.table.rev)
            for s, p in phones.items():
                http_bodies[s].append(await asyncio.to_thread(_get_view, port, "leaktest", p.token))

        for s in SEATS:
            phones[s] = await PhoneClient(urls[s]).join()
            await settle()
        steps = [(s, 1, c) for s, c in bids.items()] + [(s, 2, c) for s, c in votes.items()] + [("Ann", 3, pick)]
        for seat, rid, choice in steps:
            await phones[seat].answer(rid, choice)
            await phones[seat].wait_for(lambda c, r=rid: c.view["question"] is None or c.view["question"]["id"] > r
                                        or c.view["question"]["mine"]["answered"] == 1)
            await settle()
        for p in phones.values():
            await p.close()
        await srv.stop()
    finally:
        root.removeHandler(cap)
        root.setLevel(old_level)
    return {"frames": {s: list(p.frames) for s, p in phones.items()}, "http": http_bodies,
            "logs": [ln.replace(str(port), "PORT") for ln in cap.lines], "history": src.history,
            "errors": {s: p.errors for s, p in phones.items()}}


def normalise(seat: str, text: str) -> tuple[str, int]:
    """(content with the seat's own answer and the revealed answers blanked, size less the revealed answers)."""
    m = json.loads(text)
    size = len(text)
    if m.get("reveal"):
        size -= len(encode(m["reveal"]["answers"]))
        m["reveal"]["answers"] = "*"
    q = m.get("question")
    if q and "mine" in q:
        q["mine"] = {k: ("*" if k in ("choice", "label", "pad") else v) for k, v in q["mine"].items()}
    return encode(m), size


def test_no_secret_reaches_any_frame_response_or_log_before_its_reveal():
    async def both():
        a = await scenario({"Ann": 0, "Bob": 1, "Cy": 2, "Dee": 3}, {"Bob": 0, "Cy": 0, "Dee": 1}, 0)
        b = await scenario({"Ann": 5, "Bob": 4, "Cy": 0, "Dee": 5}, {"Bob": 1, "Cy": 1, "Dee": 0}, 2)
        return a, b

    a, b = asyncio.run(asyncio.wait_for(both(), 120))
    assert a["history"] == [{"Ann": 0, "Bob": 1, "Cy": 2, "Dee": 3}, {"Bob": "bluffing", "Cy": "bluffing",
                                                                      "Dee": "not bluffing"}, {"Ann": "Bob"}]
    assert b["history"][0] == {"Ann": 5, "Bob": 4, "Cy": 0, "Dee": 5} and b["history"][2] == {"Ann": "Dee"}
    assert a["errors"] == b["errors"] == {s: [] for s in SEATS}
    for kind in ("frames", "http"):
        for s in SEATS:
            fa, fb = a[kind][s], b[kind][s]
            assert len(fa) == len(fb) and len(fa) >= 9, (kind, s)
            for i, (x, y) in enumerate(zip(fa, fb)):
                nx, ny = normalise(s, x), normalise(s, y)
                assert nx[0] == ny[0], f"{kind} {i} to {s} depends on a secret:\n{x}\n{y}"
                assert nx[1] == ny[1], f"{kind} {i} to {s}: its size depends on a secret:\n{x}\n{y}"
                if json.loads(x)["reveal"] is None or json.loads(x)["reveal"]["id"] < 3:
                    # before the pick is revealed no frame names the picked voter as an answer
                    assert '"answers":[["Ann","Bob"]]' not in x
    # a seat's own answer reaches its own phone before the reveal, and only its own
    bob_votes = [json.loads(f) for f in a["frames"]["Bob"]]
    assert any(v["question"] and v["question"]["id"] == 2 and v["question"]["mine"]["label"] == "bluffing"
               for v in bob_votes)
    # the reveal reaches everyone at once, with all answers
    for s in SEATS:
        last = json.loads(a["frames"][s][-1])
        assert last["reveal"] == {"id": 3, "kind": "pick", "answers": [["Ann", "Bob"]]}
        assert any(json.loads(f)["reveal"] == {"id": 2, "kind": "vote", "answers": [
            ["Bob", "bluffing"], ["Cy", "bluffing"], ["Dee", "not bluffing"]]} for f in a["frames"][s])
    # logs: the same lines whatever the secrets, none naming an answer or a token
    assert a["logs"] == b["logs"] and len(a["logs"]) > 10
    assert any("answered round" in ln for ln in a["logs"]) and any("revealed" in ln for ln in a["logs"])
    for ln in a["logs"]:
        assert "bluffing" not in ln and "choice" not in ln and "#" not in ln
