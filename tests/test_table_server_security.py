"""Security of the phone server over 127.0.0.1: status codes for missing, wrong, reset and foreign tokens;
oversized, malformed, unknown and flooding messages; acting for another seat. None of them may crash the
server or change the game."""

from __future__ import annotations

import asyncio
import http.client
import json
import re

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from companion.table_server.client import PhoneClient, split_url
from companion.table_server.demo import DemoSource
from companion.table_server.server import CSP, SUBPROTOCOL, TableServer

SEATS = ("Ann", "Bob", "Cy")


def arun(coro, timeout: float = 60.0):
    return asyncio.run(asyncio.wait_for(coro, timeout))


def http_get(port: int, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        c.request("GET", path, headers=headers or {})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


async def aget(port: int, path: str, headers: dict[str, str] | None = None):
    return await asyncio.to_thread(http_get, port, path, headers)


async def handshake_status(url: str, token: str | None, headers: dict[str, str] | None = None) -> int:
    protos = [SUBPROTOCOL] + ([f"token.{token}"] if token is not None else [])
    try:
        ws = await connect(url, subprotocols=protos, additional_headers=headers or {}, open_timeout=5)
    except InvalidStatus as e:
        assert e.response.body in (b"unauthorized\n", b"forbidden\n")  # and nothing else
        return e.response.status_code
    await ws.close()
    return 101


async def two_tables():
    a = TableServer(DemoSource(SEATS, rounds=3), host="127.0.0.1")
    b = TableServer(DemoSource(SEATS, rounds=3), host="127.0.0.1")
    await a.start()
    await b.start()
    return a, b


def test_http_and_handshake_status_codes():
    async def go():
        a, b = await two_tables()
        ws_url, view_url, tok = split_url(a.url_for("Ann"))
        tid, port = a.table_id, a.port
        foreign = split_url(b.url_for("Ann"))[2]
        view = f"/t/{tid}/view"
        # the view over HTTP: 401 without a token, 403 with a wrong / foreign one, 200 through view_for
        assert (await aget(port, view))[0] == 401
        assert (await aget(port, view, {"Authorization": "Basic xyz"}))[0] == 401
        for bad in ("A" * 22, tok[:-1] + ("B" if tok[-1] != "B" else "C"), foreign, "%00" * 8, "é" * 22):
            st, _, body = await aget(port, view, {"Authorization": f"Bearer {bad}".encode().decode("latin-1")})
            assert (st, body) == (403, b"forbidden\n")
        st, hdr, body = await aget(port, f"/t/{b.table_id}/view", {"Authorization": f"Bearer {tok}"})
        assert st == 403  # a real token, sent to another table's path
        st, hdr, body = await aget(port, view, {"Authorization": f"Bearer {tok}"})
        assert st == 200 and json.loads(body) == a.view_for("Ann") and hdr["cache-control"] == "no-store"
        # the WebSocket handshake
        assert await handshake_status(ws_url, None) == 401
        assert await handshake_status(ws_url, "A" * 22) == 403
        assert await handshake_status(ws_url, foreign) == 403
        assert await handshake_status(f"ws://127.0.0.1:{port}/t/{b.table_id}/ws", tok) == 403
        assert await handshake_status(ws_url, tok, {"Host": "evil.example:80"}) == 403  # DNS rebinding
        assert await handshake_status(ws_url, tok) == 101
        # the tablet resets Ann's seat: the old token is refused from then on, the new one works
        new = a.reset_seat("Ann")
        assert await handshake_status(ws_url, tok) == 403
        assert (await aget(port, view, {"Authorization": f"Bearer {tok}"}))[0] == 403
        assert await handshake_status(ws_url, new) == 101
        # the page and its files: no state, no token, nothing from outside the LAN
        st, hdr, page = await aget(port, f"/t/{tid}/")
        assert st == 200 and hdr["content-security-policy"] == CSP and hdr["referrer-policy"] == "no-referrer"
        js = (await aget(port, f"/t/{tid}/phone.js"))[2].decode()
        css = (await aget(port, f"/t/{tid}/phone.css"))[2].decode()
        for text in (page.decode(), js, css):
            assert not re.search(r"https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\(", text), "external resource"
            assert "Ann" not in text and tok not in text and new not in text
        for path in ("/", f"/t/{b.table_id}/", f"/t/{tid}/secrets", f"/t/{tid}/../../etc/passwd",
                     f"/t/{tid}/?x=1", f"/t/{tid}/view/x", "/favicon.ico"):
            assert (await aget(port, path))[0] == 404, path
        assert (await aget(port, f"/t/{tid}/", {"Host": "evil.example"}))[0] == 404
        await a.stop()
        await b.stop()

    arun(go())


def test_bad_messages_are_refused_without_crashing_and_change_nothing():
    async def go():
        src = DemoSource(SEATS, kind="vote", choices=("bluffing", "not bluffing"), rounds=1)
        srv = TableServer(src, host="127.0.0.1", rate=50, burst=100)
        await srv.start()
        ph = {s: await PhoneClient(srv.url_for(s)).join() for s in SEATS}
        ann = ph["Ann"]
        await ann.wait_for(lambda c: c.view is not None)
        bad = [
            ("{not json", 400), (b"\x00\x01binary", 400), ("[1, 2]", 400), ('"answer"', 400),
            ('{"action": "delete_everything"}', 400), ('{"action": 5}', 400), ("{}", 400),
            ('{"action": "answer", "round": 1, "choice": NaN}', 400),
            ('{"action": "answer", "round": 1, "choice": 1e999}', 400),
            ("[" * 2040 + "]" * 2040, 400),
            ('{"action": "answer", "round": 1, "choice": 0, "extra": 1}', 400),
            ('{"action": "answer", "round": 1, "choice": 0, "pad": "x"}', 400),
            ('{"action": "answer", "round": 1, "choice": 7}', 400),
            ('{"action": "answer", "round": 1, "choice": "0"}', 400),
            ('{"action": "answer", "round": 1, "choice": true}', 400),
            ('{"action": "answer", "round": 9, "choice": 0}', 409),
            ('{"action": "answer", "round": 1, "choice": 0, "seat": "Bob"}', 403),  # acting for another seat
            ('{"action": "refresh", "seat": "Cy"}', 403),
        ]
        for i, (msg, code) in enumerate(bad):
            await ann.send(msg)
            await ann.wait_for(lambda c, n=i + 1: len(c.errors) >= n)
            assert ann.errors[-1]["code"] == code, msg
        assert srv.view_for(None)["question"]["waiting"] == list(SEATS)  # nothing was recorded for anyone
        assert not src.open_secret().has_answered("Bob")
        # the same phone, still connected, answers properly; a second answer is refused (409)
        await ann.send({"action": "answer", "round": 1, "choice": 1, "seat": "Ann", "pad": "   "})
        await ann.wait_for(lambda c: c.view["question"]["mine"]["answered"] == 1)
        await ann.answer(1, 0)
        await ann.wait_for(lambda c: len(c.errors) == len(bad) + 1)
        assert ann.errors[-1]["code"] == 409
        # a message over 4 KB closes that connection (1009); the server and other phones carry on
        await ph["Bob"].send(json.dumps({"action": "answer", "round": 1, "choice": 0, "pad": " " * 5000}))
        await ph["Bob"].wait_for(lambda c: c.closed_code is not None)
        assert ph["Bob"].closed_code == 1009
        bob = await PhoneClient(srv.url_for("Bob")).join()
        await bob.wait_for(lambda c: c.view is not None)
        await bob.answer(1, 0)
        await ph["Cy"].answer(1, 1)
        await ann.wait_for(lambda c: c.view["reveal"] is not None)
        assert src.history == [{"Ann": "not bluffing", "Bob": "bluffing", "Cy": "not bluffing"}]
        await srv.stop()

    arun(go())


def test_a_flood_closes_that_connection_only():
    async def go():
        src = DemoSource(SEATS, rounds=1)
        srv = TableServer(src, host="127.0.0.1", rate=10, burst=20)
        await srv.start()
        ann = await PhoneClient(srv.url_for("Ann")).join()
        bob = await PhoneClient(srv.url_for("Bob")).join()
        await bob.wait_for(lambda c: c.view is not None)
        for _ in range(300):
            try:
                await ann.send('{"action": "refresh"}')
            except Exception:
                break
        await ann.wait_for(lambda c: c.closed_code is not None)
        assert ann.closed_code == 1008
        assert srv.running
        await bob.answer(1, 0)
        await bob.wait_for(lambda c: c.view["question"]["mine"]["answered"] == 1)
        ann2 = await PhoneClient(srv.url_for("Ann")).join()  # the seat is not lost: join again
        await ann2.wait_for(lambda c: c.view is not None and c.view["seat"] == "Ann")
        await srv.stop()

    arun(go())


def test_reset_seat_disconnects_its_phone():
    async def go():
        srv = TableServer(DemoSource(SEATS), host="127.0.0.1")
        await srv.start()
        old_url = srv.url_for("Cy")
        cy = await PhoneClient(old_url).join()
        await cy.wait_for(lambda c: c.view is not None)
        srv.reset_seat("Cy")
        await cy.wait_for(lambda c: c.closed_code is not None)
        assert cy.closed_code == 4003
        with pytest.raises(InvalidStatus) as e:
            await PhoneClient(old_url).join()
        assert e.value.response.status_code == 403
        cy2 = await PhoneClient(srv.url_for("Cy")).join()
        await cy2.wait_for(lambda c: c.view is not None and dict(c.view["seats"])["Cy"] == "here")
        await srv.stop()

    arun(go())
