"""The ledger's one exception."""

from companion.errors import PirateTableError


class LedgerError(PirateTableError):
    """A refused ledger action or a broken ledger file. Nothing was written."""
