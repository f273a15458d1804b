"""The phone server: HTTP for the page, a WebSocket per phone, on the app's asyncio loop (``websockets``).

Routes (``TID`` is this game's table id; anything else is 404):

- ``GET /t/TID/``            the phone page (static HTML; no state in it)
- ``GET /t/TID/phone.js``, ``phone.css``, ``icon.svg``  its script, style and icon (served from this package)
- ``GET /t/TID/view``        ``view_for(seat)`` as JSON; token in ``Authorization: Bearer TOKEN``
- ``GET /t/TID/ws``          the WebSocket; token in the offered subprotocols (``pirate-table.v1``,
  ``token.TOKEN``), since a browser cannot set headers on a WebSocket

A missing token is answered 401, a wrong one, a reset one or one for another table 403, with a short text body
and nothing else. Every view a phone receives is ``encode(table.view_for(seat))``. Messages from a phone are
JSON objects of at most 4 KB (``max_size``), rate-limited per connection (a flood closes it with 1008);
malformed or unknown ones and answers for another seat are refused to that phone only.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import http
import json
import logging
import time
from importlib import resources
from typing import Any, Callable
from urllib.parse import urlsplit

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from companion.errors import PirateTableError
from companion.table_server.net import lan_address
from companion.table_server.qr import qr_png
from companion.table_server.source import SecretSource
from companion.table_server.table import PhoneTable, Refused, encode

log = logging.getLogger("companion.table_server")

SUBPROTOCOL = "pirate-table.v1"
TOKEN_PREFIX = "token."
MAX_MESSAGE = 4096
MAX_PAD = 512
ACTIONS = {"answer": {"action", "round", "choice", "seat", "pad"}, "refresh": {"action", "seat", "pad"}}
STATIC = {"phone.js": "application/javascript; charset=utf-8", "phone.css": "text/css; charset=utf-8",
          "icon.svg": "image/svg+xml"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")

# close codes sent to a phone
CLOSE_FLOOD = 1008
CLOSE_REPLACED = 4000  # the same seat joined again from a newer connection
CLOSE_RESET = 4003  # the tablet reset this seat: the token is no longer valid


class _QuietWire(logging.LoggerAdapter):
    """websockets' logger without its DEBUG lines: at DEBUG it logs frames and headers, which would carry
    secrets and tokens. INFO and above (connection open/closed, errors) go to ``companion.table_server.wire``."""

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 - logging API
        return level > logging.DEBUG and self.logger.isEnabledFor(level)

    def debug(self, *args: Any, **kwargs: Any) -> None:
        return None

    def log(self, level: int, msg: Any, *args: Any, **kwargs: Any) -> None:
        if level > logging.DEBUG:
            self.logger.log(level, msg, *args, **kwargs)


class _Phone:
    """One phone's connection: its seat, its outgoing queue (views coalesce: only the newest unsent view is
    kept) and its rate limit (token bucket)."""

    def __init__(self, ws: ServerConnection, seat: str, token: str, rate: float, burst: int) -> None:
        self.ws = ws
        self.seat = seat
        self.token = token
        self.rate = rate
        self.burst = float(burst)
        self.allowance = float(burst)
        self.last = time.monotonic()
        self.out: collections.deque[tuple[str, str]] = collections.deque()
        self.ready = asyncio.Event()
        self.close_code: tuple[int, str] | None = None

    def allow(self) -> bool:
        now = time.monotonic()
        self.allowance = min(self.burst, self.allowance + (now - self.last) * self.rate)
        self.last = now
        if self.allowance < 1.0:
            return False
        self.allowance -= 1.0
        return True

    def push(self, kind: str, text: str) -> None:
        if kind == "view":
            self.out = collections.deque(m for m in self.out if m[0] != "view")
        self.out.append((kind, text))
        self.ready.set()

    def close_soon(self, code: int, reason: str) -> None:
        self.close_code = (code, reason)
        self.ready.set()


def _response(status: int, body: bytes, content_type: str = "text/plain; charset=utf-8",
              extra: dict[str, str] | None = None) -> Response:
    headers = Headers([
        ("Date", email.utils.formatdate(usegmt=True)),
        ("Connection", "close"),
        ("Content-Length", str(len(body))),
        ("Content-Type", content_type),
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
    ])
    for k, v in (extra or {}).items():
        headers[k] = v
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def _refuse(status: int) -> Response:
    return _response(status, {401: b"unauthorized\n", 403: b"forbidden\n", 404: b"not found\n"}[status])


def _strict_json(text: str) -> Any:
    def no_constants(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    return json.loads(text, parse_constant=no_constants)


class TableServer:
    """The phone server of one game. ``await start()`` when a game with phones begins, ``await stop()`` when it
    ends; between the two it listens on the LAN address only (``host``; tests pass 127.0.0.1).

    The app calls ``refresh()`` after any change of the game (a card turned, the tablet's own submit...),
    ``submit_from_tablet(seat, value)`` for an answer typed on the passed tablet, ``reset_seat(seat)`` for the
    seat reset button, and ``add_listener(cb)`` to get ``view_for(None)`` on every broadcast (the tablet's
    public screen). All of these run on the server's loop (with Kivy: ``App.async_run`` on the same loop).
    """

    def __init__(self, source: SecretSource, *, host: str | None = None, port: int = 0, grace_s: float = 60.0,
                 rate: float = 10.0, burst: int = 20, table_id: str | None = None) -> None:
        self.table = PhoneTable(source, table_id=table_id, grace_s=grace_s)
        self.host = host
        self.port = port
        self.rate = rate
        self.burst = burst
        self._server: Server | None = None
        self._phones: set[_Phone] = set()
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        self._timers: list[asyncio.TimerHandle] = []
        self._wire = _QuietWire(logging.getLogger("companion.table_server.wire"), {})
        pkg = resources.files("companion.table_server") / "static"
        self._page = (pkg / "phone.html").read_bytes()
        self._static = {name: (pkg / name).read_bytes() for name in STATIC}

    # ------------------------------------------------------------------ lifecycle
    @property
    def running(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        if self._server is not None:
            raise PirateTableError("phones: the server is already running")
        host = self.host or lan_address()
        self.table.sync()
        self._server = await serve(
            self._handler, host, self.port,
            process_request=self._process_request,
            select_subprotocol=self._select_subprotocol,
            max_size=MAX_MESSAGE, max_queue=8, compression=None, server_header=None,
            ping_interval=10, ping_timeout=10, open_timeout=10, close_timeout=2,
            logger=self._wire,
        )
        sock = next(iter(self._server.sockets))
        self.host, self.port = sock.getsockname()[:2]
        log.info("phones: listening on %s:%d for table %s", self.host, self.port, self.table_id)

    async def stop(self) -> None:
        if self._server is None:
            return
        srv, self._server = self._server, None
        for t in self._timers:
            t.cancel()
        self._timers.clear()
        srv.close()
        await srv.wait_closed()
        log.info("phones: stopped")

    # ------------------------------------------------------------------ the app's API
    @property
    def table_id(self) -> str:
        return self.table.table_id

    def url_for(self, seat: str) -> str:
        """The URL in ``seat``'s QR code (the token is in the fragment: never sent to a server or logged)."""
        if self._server is None:
            raise PirateTableError("phones: the server is not running")
        return f"http://{self.host}:{self.port}/t/{self.table_id}/#{self.table.tokens.token(seat)}"

    def qr_png(self, seat: str, scale: int = 8) -> bytes:
        return qr_png(self.url_for(seat), scale=scale)

    def view_for(self, seat: str | None) -> dict[str, Any]:
        return self.table.view_for(seat)

    def add_listener(self, callback: Callable[[dict[str, Any]], None]) -> None:
        self._listeners.append(callback)

    def refresh(self) -> None:
        """The game changed: catch up (new round, a reveal) and send every phone its new view."""
        self._changed()

    def submit_from_tablet(self, seat: str, value: Any) -> None:
        """An answer given on the passed tablet: the same SecretRound, the same reveal."""
        self.table.sync()
        self.table.submit(seat, value)
        self._changed()

    def reset_seat(self, seat: str) -> str:
        """New token for ``seat``; its phone is disconnected (close code 4003) and its old token refused."""
        token = self.table.reset_seat(seat)
        for ph in list(self._phones):
            if ph.seat == seat:
                self._phones.discard(ph)
                ph.close_soon(CLOSE_RESET, "seat reset")
        self._changed()
        return token

    # ------------------------------------------------------------------ broadcasting
    def _changed(self) -> None:
        self.table.sync()
        # Every phone gets its view on the same event, built the same way whatever anyone answered.
        views = {s: encode(self.table.view_for(s)) for s in self.table.seats}
        for ph in self._phones:
            ph.push("view", views[ph.seat])
        if self._listeners:
            public = self.table.view_for(None)
            for cb in list(self._listeners):
                try:
                    cb(public)
                except Exception:  # a broken tablet screen must not stop the phones
                    log.exception("phones: tablet listener failed")

    def _grace_check(self) -> None:
        if self._server is not None:
            self._changed()

    # ------------------------------------------------------------------ HTTP
    def _host_ok(self, request: Request) -> bool:
        # DNS-rebinding guard: only the address the QR codes point at
        hosts = request.headers.get_all("Host")
        return len(hosts) == 1 and hosts[0] == f"{self.host}:{self.port}"

    def _select_subprotocol(self, conn: ServerConnection, offered: Any) -> Any:
        return SUBPROTOCOL if SUBPROTOCOL in offered else None

    def _process_request(self, conn: ServerConnection, request: Request) -> Response | None:
        try:
            return self._route(conn, request)
        except Exception:  # hostile input never takes the server down; the log says where, not what
            log.warning("phones: a malformed request was refused")
            return _response(400, b"bad request\n")

    def _route(self, conn: ServerConnection, request: Request) -> Response | None:
        parts = urlsplit(request.path)
        segs = parts.path.split("/")
        # "/t/TID/xxx" -> ["", "t", TID, "xxx"]
        if len(segs) != 4 or segs[0] != "" or segs[1] != "t" or parts.query:
            return _refuse(404)
        tid, leaf = segs[2], segs[3]
        if leaf in ("ws", "view"):
            token = self._token_of(request, leaf)
            if token is None:
                return _refuse(401)
            if not self._host_ok(request) or tid != self.table_id:
                return _refuse(403)
            seat = self.table.tokens.seat_for(token)
            if seat is None:
                log.warning("phones: a %s request with an unknown token was refused", leaf)
                return _refuse(403)
            if leaf == "view":
                body = encode(self.table.view_for(seat)).encode("ascii")
                return _response(200, body, "application/json")
            conn.pt_seat = seat  # type: ignore[attr-defined]
            conn.pt_token = token  # type: ignore[attr-defined]
            return None  # go on with the WebSocket handshake
        if tid != self.table_id or not self._host_ok(request):
            return _refuse(404)
        if leaf == "":
            return _response(200, self._page, "text/html; charset=utf-8", {"Content-Security-Policy": CSP})
        if leaf in STATIC:
            return _response(200, self._static[leaf], STATIC[leaf])
        return _refuse(404)

    @staticmethod
    def _token_of(request: Request, leaf: str) -> str | None:
        if leaf == "view":
            auths = request.headers.get_all("Authorization")
            auth = auths[0] if len(auths) == 1 else ""
            if not auth.startswith("Bearer "):
                return None
            return auth[len("Bearer "):].strip() or None
        offered = ",".join(request.headers.get_all("Sec-WebSocket-Protocol"))
        for item in offered.split(","):
            item = item.strip()
            if item.startswith(TOKEN_PREFIX):
                return item[len(TOKEN_PREFIX):] or None
        return None

    # ------------------------------------------------------------------ WebSocket
    async def _handler(self, ws: ServerConnection) -> None:
        seat: str = ws.pt_seat  # type: ignore[attr-defined]
        token: str = ws.pt_token  # type: ignore[attr-defined]
        if self.table.tokens.seat_for(token) != seat:  # reset between the handshake and now
            await ws.close(CLOSE_RESET, "seat reset")
            return
        ph = _Phone(ws, seat, token, self.rate, self.burst)
        for old in [p for p in self._phones if p.seat == seat]:
            self._phones.discard(old)
            old.close_soon(CLOSE_REPLACED, "joined again elsewhere")
            self.table.disconnected(seat)
        self._phones.add(ph)
        self.table.connected(seat)
        log.info("phones: %s joined", seat)
        writer = asyncio.create_task(self._writer(ph))
        self._changed()
        try:
            async for message in ws:
                if ph not in self._phones:
                    break
                if not ph.allow():
                    log.warning("phones: %s flooded; connection closed", seat)
                    ph.close_soon(CLOSE_FLOOD, "too many messages")
                    break
                self._on_message(ph, message)
        except ConnectionClosed:
            pass
        finally:
            await self._drain(ph, writer)
            if ph in self._phones:
                self._phones.discard(ph)
                self.table.disconnected(seat)
                log.info("phones: %s left", seat)
                if self._server is not None:
                    loop = asyncio.get_running_loop()
                    self._timers.append(loop.call_later(self.table.grace_s + 0.01, self._grace_check))
                    self._changed()

    async def _drain(self, ph: _Phone, writer: asyncio.Task[None]) -> None:
        if ph.close_code is None:
            ph.close_code = (1000, "")
        ph.ready.set()
        try:
            await asyncio.wait_for(writer, timeout=3)
        except (asyncio.TimeoutError, ConnectionClosed):
            writer.cancel()

    async def _writer(self, ph: _Phone) -> None:
        try:
            while True:
                await ph.ready.wait()
                ph.ready.clear()
                while ph.out:
                    _, text = ph.out.popleft()
                    await ph.ws.send(text)
                if ph.close_code is not None:
                    await ph.ws.close(*ph.close_code)
                    return
        except ConnectionClosed:
            return

    def _on_message(self, ph: _Phone, message: str | bytes) -> None:
        try:
            action, msg = self._parse(ph, message)
            if action == "answer":
                self.table.sync()
                self.table.answer(ph.seat, msg.get("round"), msg.get("choice"))
                self._changed()
            else:  # refresh
                ph.push("view", encode(self.table.view_for(ph.seat)))
        except Refused as r:
            # only to this phone; the reason names no one else's answer. Logs get the status only.
            log.warning("phones: a message from %s was refused (%d)", ph.seat, r.code)
            ph.push("error", encode({"type": "error", "code": r.code, "error": r.what[:200]}))

    @staticmethod
    def _parse(ph: _Phone, message: str | bytes) -> tuple[str, dict[str, Any]]:
        if not isinstance(message, str):
            raise Refused(400, "text messages only")
        try:
            msg = _strict_json(message)
        except (ValueError, RecursionError):
            raise Refused(400, "malformed JSON") from None
        if not isinstance(msg, dict):
            raise Refused(400, "a message is a JSON object")
        action = msg.get("action")
        if not isinstance(action, str) or action not in ACTIONS:
            raise Refused(400, "unknown action")
        if set(msg) - ACTIONS[action]:
            raise Refused(400, "unknown field")
        if "seat" in msg and msg["seat"] != ph.seat:
            raise Refused(403, "you can only act for your own seat")
        pad = msg.get("pad", "")
        if not isinstance(pad, str) or len(pad) > MAX_PAD or pad.strip(" "):
            raise Refused(400, "pad is spaces only")
        return action, msg
