"""SQLite schema of the ledger and its migrations (schema version in ``PRAGMA user_version``).

v1 kept each entry's postings as a JSON text column. v2 (current) normalises postings into their own table
(one row per account and amount, amounts never zero) so that balances are a ``GROUP BY`` and SQLite itself
enforces that an amount is a whole number. The hash chain is computed over the *logical* entry (see
``companion.ledger.core.entry_digest``), not over the storage layout, so a migration keeps every hash.
"""

from __future__ import annotations

import json
import sqlite3

from companion.ledger.errors import LedgerError

SCHEMA_VERSION = 2

# Kept verbatim so that tests can build a genuine v1 file and migrate it.
V1_DDL = """
CREATE TABLE entries (
    id        INTEGER PRIMARY KEY,
    ts        TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    memo      TEXT    NOT NULL DEFAULT '',
    reverses  INTEGER REFERENCES entries(id),
    meta      TEXT    NOT NULL DEFAULT '{}',
    postings  TEXT    NOT NULL,
    prev_hash TEXT    NOT NULL,
    hash      TEXT    NOT NULL UNIQUE
);
"""

V2_DDL = """
CREATE TABLE entries (
    id        INTEGER PRIMARY KEY,
    ts        TEXT    NOT NULL,
    kind      TEXT    NOT NULL,
    memo      TEXT    NOT NULL DEFAULT '',
    reverses  INTEGER REFERENCES entries(id),
    meta      TEXT    NOT NULL DEFAULT '{}',
    prev_hash TEXT    NOT NULL,
    hash      TEXT    NOT NULL UNIQUE
);
CREATE TABLE postings (
    entry_id  INTEGER NOT NULL REFERENCES entries(id),
    account   TEXT    NOT NULL,
    amount    INTEGER NOT NULL CHECK (typeof(amount) = 'integer' AND amount <> 0),
    PRIMARY KEY (entry_id, account)
) WITHOUT ROWID;
CREATE INDEX postings_account ON postings(account);
CREATE UNIQUE INDEX entries_reverses ON entries(reverses) WHERE reverses IS NOT NULL;
"""


def _run_ddl(conn: sqlite3.Connection, ddl: str) -> None:
    # Not executescript(): that would COMMIT the caller's open transaction first.
    for statement in ddl.split(";"):
        if statement.strip():
            conn.execute(statement)


def _migrate_1_to_2(conn: sqlite3.Connection) -> None:
    conn.execute("ALTER TABLE entries RENAME TO entries_v1")
    _run_ddl(conn, V2_DDL)
    conn.execute(
        "INSERT INTO entries (id, ts, kind, memo, reverses, meta, prev_hash, hash) "
        "SELECT id, ts, kind, memo, reverses, meta, prev_hash, hash FROM entries_v1 ORDER BY id"
    )
    rows = conn.execute("SELECT id, postings FROM entries_v1 ORDER BY id").fetchall()
    for entry_id, text in rows:
        try:
            postings = json.loads(text)
        except json.JSONDecodeError:
            raise LedgerError(f"migration v1->v2: entry {entry_id}: postings are not JSON") from None
        for account, amount in sorted(postings.items()):
            if not isinstance(amount, int) or isinstance(amount, bool):
                raise LedgerError(f"migration v1->v2: entry {entry_id}: amount {amount!r} is not whole")
            if amount:
                conn.execute(
                    "INSERT INTO postings (entry_id, account, amount) VALUES (?, ?, ?)",
                    (entry_id, account, amount),
                )
    conn.execute("DROP TABLE entries_v1")


MIGRATIONS = {1: _migrate_1_to_2}


def create(conn: sqlite3.Connection) -> None:
    """Create the current schema in an empty database (caller holds the transaction)."""
    _run_ddl(conn, V2_DDL)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def migrate(conn: sqlite3.Connection) -> int:
    """Bring an existing database up to SCHEMA_VERSION, one step per transaction. Returns the old version."""
    old = conn.execute("PRAGMA user_version").fetchone()[0]
    if old > SCHEMA_VERSION:
        raise LedgerError(
            f"ledger schema version {old} is newer than this program understands ({SCHEMA_VERSION})"
        )
    version = old
    while version < SCHEMA_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise LedgerError(f"ledger schema version {version} has no migration")
        conn.execute("BEGIN IMMEDIATE")
        try:
            step(conn)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        version += 1
    return old
