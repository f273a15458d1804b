"""Players' phones as secret controllers: a small local server inside the app (see docs/phones.md).

- ``TableServer`` (server.py): HTTP page + WebSocket per phone on the app's asyncio loop (``websockets``).
- ``PhoneTable.view_for(seat)`` (table.py): the one function that builds anything a phone may see.
- ``SecretSource`` / ``PublicState`` / ``SeatState`` (source.py): what a game implements to take phone answers.
- ``SeatTokens`` (tokens.py): 128-bit seat tokens, compared in constant time.
"""

from companion.table_server.source import PublicState, SeatState, SecretSource
from companion.table_server.table import PhoneTable, Refused, encode

__all__ = ["PhoneTable", "PublicState", "Refused", "SeatState", "SecretSource", "TableServer", "encode"]


def __getattr__(name: str):  # the server pulls in websockets; the pure parts do not
    if name == "TableServer":
        from companion.table_server.server import TableServer

        return TableServer
    raise AttributeError(name)
