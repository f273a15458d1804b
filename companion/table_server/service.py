"""The app's handle on the phone server: start it when a game with phones begins, stop it when the game ends,
all on the running asyncio loop (the app's, through ``App.async_run``). No Kivy here."""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Callable

from companion.table_server.server import TableServer
from companion.table_server.source import SecretSource

log = logging.getLogger("companion.table_server")


class PhoneService:
    """``start(source)`` / ``stop()`` from the UI (returns at once; the work runs on the loop). ``on_view`` gets
    ``view_for(None)`` on every broadcast (the tablet's screens refresh from it)."""

    def __init__(self, on_view: Callable[[dict[str, Any]], None] | None = None, host: str | None = None,
                 grace_s: float = 60.0) -> None:
        self.on_view = on_view
        self.host = host
        self.grace_s = grace_s
        self.server: TableServer | None = None
        self.error: str | None = None
        self._task: asyncio.Task[None] | None = None

    @property
    def running(self) -> bool:
        return self.server is not None and self.server.running

    def start(self, source: SecretSource) -> asyncio.Task[None]:
        """Stop any server of a previous game, then serve this source (a new table id: old tokens refused)."""
        old = self.server
        srv = TableServer(source, host=self.host, grace_s=self.grace_s)
        if self.on_view is not None:
            srv.add_listener(self.on_view)
        self.server = srv
        self.error = None

        async def go() -> None:
            if old is not None:
                await old.stop()
            try:
                await srv.start()
            except OSError as e:  # no network, port refused: the tablet says so; the game goes on without
                self.error = f"phones: cannot listen: {e.strerror or e}"
                log.warning(self.error)
                if self.server is srv:
                    self.server = None
            if self.on_view is not None and self.server is srv:
                self.on_view(srv.view_for(None))

        self._task = asyncio.get_running_loop().create_task(go())
        return self._task

    def stop(self) -> asyncio.Task[None] | None:
        srv, self.server = self.server, None
        if srv is None:
            return None
        self._task = asyncio.get_running_loop().create_task(srv.stop())
        return self._task

    def refresh(self) -> None:
        if self.running:
            assert self.server is not None
            self.server.refresh()
