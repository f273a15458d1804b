"""The chip ledger: every coin from buy-in to final standing, double-entry and hash-chained in SQLite.

Pure library (stdlib sqlite3, hashlib, json, csv). See docs/ledger.md.
"""

from companion.ledger.core import (
    DEFAULT_BUY_IN,
    POT,
    Entry,
    Ledger,
    LedgerError,
    State,
    bank,
    loan,
    stack,
    validate_ruling,
)
from companion.ledger.settle import max_zero_sum_groups, settle

__all__ = [
    "DEFAULT_BUY_IN", "POT", "Entry", "Ledger", "LedgerError", "State", "bank", "loan", "stack",
    "validate_ruling", "max_zero_sum_groups", "settle",
]
