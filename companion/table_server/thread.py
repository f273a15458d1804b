"""Run a TableServer on its own asyncio loop in a background thread (demo command, benchmark, browser tests).
The app does not need this: with ``App.async_run`` the server shares Kivy's loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Callable, TypeVar

from companion.table_server.server import TableServer

T = TypeVar("T")


class ServerThread:
    def __init__(self, make: Callable[[], TableServer]) -> None:
        self._make = make
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="table-server", daemon=True)
        self.server: TableServer | None = None

    def start(self) -> TableServer:
        self._thread.start()
        self.server = self.call(self._make)
        self.run(self.server.start())
        return self.server

    def run(self, coro: Any, timeout: float = 10.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def call(self, fn: Callable[..., T], *args: Any, timeout: float = 10.0) -> T:
        async def _call() -> T:
            return fn(*args)

        return self.run(_call(), timeout)

    def stop(self) -> None:
        if self.server is not None:
            self.run(self.server.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        self.loop.close()

    def __enter__(self) -> TableServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
