"""Seat tokens: one 128-bit random token per seat, compared in constant time.

A token is the only thing that binds a phone to a seat. It travels in the QR code's URL *fragment* (``#...``),
which browsers never send to a server, log or put in a Referer; the page keeps it in the phone's localStorage
and presents it in the WebSocket handshake. Resetting a seat draws a new token; the old one is refused from
then on. The table id is drawn fresh for every game with phones, so a token kept from another table (or
yesterday's game) is refused too.
"""

from __future__ import annotations

import hmac
import re
import secrets
from typing import Iterable

from companion.errors import PirateTableError

TOKEN_BYTES = 16  # 128 bits
_TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{16,64}")
_TABLE_RE = re.compile(r"[A-Za-z0-9_-]{4,32}")


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def new_table_id() -> str:
    return secrets.token_urlsafe(6)


def well_formed_token(value: object) -> bool:
    return isinstance(value, str) and _TOKEN_RE.fullmatch(value) is not None


def well_formed_table_id(value: object) -> bool:
    return isinstance(value, str) and _TABLE_RE.fullmatch(value) is not None


class SeatTokens:
    """The seats of one table and their current tokens."""

    def __init__(self, seats: Iterable[str], table_id: str | None = None) -> None:
        self.seats: tuple[str, ...] = tuple(seats)
        if not self.seats or len(set(self.seats)) != len(self.seats):
            raise PirateTableError("phones: the seats must be distinct and at least one")
        self.table_id = table_id if table_id is not None else new_table_id()
        if not well_formed_table_id(self.table_id):
            raise PirateTableError("phones: a table id is 4-32 letters, digits, '-' or '_'")
        self._tokens: dict[str, bytes] = {s: new_token().encode("ascii") for s in self.seats}

    def __repr__(self) -> str:  # never the tokens
        return f"SeatTokens(table_id={self.table_id!r}, seats={self.seats!r})"

    def token(self, seat: str) -> str:
        if seat not in self._tokens:
            raise PirateTableError(f"phones: no seat {seat!r} at this table")
        return self._tokens[seat].decode("ascii")

    def seat_for(self, token: object) -> str | None:
        """The seat this token belongs to, or None. Every seat's token is compared (hmac.compare_digest), so
        the time taken does not tell which seat, or how much of a token, matched."""
        if not well_formed_token(token):
            return None
        given = token.encode("ascii")  # type: ignore[union-attr]
        found: str | None = None
        for seat, mine in self._tokens.items():
            if hmac.compare_digest(given, mine):
                found = seat
        return found

    def reset(self, seat: str) -> str:
        """A new token for ``seat``; the old one is refused from now on."""
        if seat not in self._tokens:
            raise PirateTableError(f"phones: no seat {seat!r} at this table")
        self._tokens[seat] = new_token().encode("ascii")
        return self.token(seat)
