"""A scripted phone (websockets client) for the benchmark and the tests: joins a seat by its QR URL, records
every frame it receives, answers questions."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any, Callable
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect

from companion.table_server.server import SUBPROTOCOL, TOKEN_PREFIX


def split_url(url: str) -> tuple[str, str, str]:
    """(ws URL, view URL, token) from a seat's QR URL ``http://HOST:PORT/t/TID/#TOKEN``."""
    u = urlsplit(url)
    base = f"{u.netloc}{u.path}"
    return f"ws://{base}ws", f"http://{base}view", u.fragment


class PhoneClient:
    def __init__(self, url: str) -> None:
        self.ws_url, self.view_url, self.token = split_url(url)
        self.ws: ClientConnection | None = None
        self.frames: list[str] = []  # every text frame received, in order
        self.received_at: list[float] = []
        self.views: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self._new = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None
        self.closed_code: int | None = None

    async def join(self, token: str | None = None) -> "PhoneClient":
        self.ws = await connect(self.ws_url, subprotocols=[SUBPROTOCOL, TOKEN_PREFIX + (token or self.token)],
                                max_size=2**16, compression=None,
                                logger=logging.getLogger("phone.client"))
        self._reader = asyncio.create_task(self._read())
        return self

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for m in self.ws:
                t = time.monotonic()
                assert isinstance(m, str)
                self.frames.append(m)
                self.received_at.append(t)
                msg = json.loads(m)
                (self.views if msg.get("type") == "view" else self.errors).append(msg)
                self._new.set()
        except Exception:
            pass
        finally:
            if self.ws is not None and self.ws.close_code is not None:
                self.closed_code = self.ws.close_code
            self._new.set()

    @property
    def view(self) -> dict[str, Any] | None:
        return self.views[-1] if self.views else None

    async def wait_for(self, pred: Callable[["PhoneClient"], bool], timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while not pred(self):
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"phone: condition not met; last view {self.view!r}, errors {self.errors!r}")
            self._new.clear()
            if pred(self):
                return
            if self._reader is not None and self._reader.done() and not pred(self):
                raise ConnectionError(f"phone: connection closed ({self.closed_code})")
            try:
                await asyncio.wait_for(self._new.wait(), left)
            except asyncio.TimeoutError:
                pass

    async def send(self, obj: Any) -> None:
        assert self.ws is not None
        await self.ws.send(obj if isinstance(obj, (str, bytes)) else json.dumps(obj))

    async def answer(self, round_id: int, choice: int) -> None:
        await self.send({"action": "answer", "round": round_id, "choice": choice})

    async def close(self) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)
