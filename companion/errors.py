"""Exceptions shared by the pure library. All subclass ValueError (python-chess style)."""

from __future__ import annotations


class PirateTableError(ValueError):
    """Base of every error the rules, records and ledger raise on bad input."""


class CardError(PirateTableError):
    """A card that does not exist or cannot be parsed."""


class IllegalActionError(PirateTableError):
    """An action that the rules do not allow in the current state."""


class RecordError(PirateTableError):
    """A malformed hand/round record. The message names the place (e.g. ``events[3].bid``)."""
