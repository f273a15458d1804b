"""CSV export/import of a whole ledger: one row per posting (an entry that moves no coins has one row with an
empty account). Import rebuilds the identical ledger (same ids, timestamps and hashes) and refuses a file whose
chain or invariants do not check out, writing nothing."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import IO

from companion.ledger import schema
from companion.ledger.core import Entry, Ledger, LedgerError, State, _fold

COLUMNS = ["entry", "ts", "kind", "memo", "reverses", "meta", "account", "amount", "prev_hash", "hash"]


def export_csv(ledger: Ledger, out: IO[str]) -> int:
    """Write the ledger as CSV to ``out``; return the number of entries."""
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
    entries = ledger.entries()
    for e in entries:
        meta = json.dumps(e.meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        rows = sorted(e.postings.items()) or [("", "")]
        for account, amount in rows:
            w.writerow([e.id, e.ts, e.kind, e.memo, "" if e.reverses is None else e.reverses, meta,
                        account, amount, e.prev_hash, e.hash])
    return len(entries)


def export_csv_text(ledger: Ledger) -> str:
    buf = io.StringIO()
    export_csv(ledger, buf)
    return buf.getvalue()


def read_csv(src: IO[str]) -> list[Entry]:
    """Parse an exported CSV into entries. Errors name the line."""
    reader = csv.reader(src)
    try:
        header = next(reader)
    except StopIteration:
        raise LedgerError("CSV: empty file") from None
    if header != COLUMNS:
        raise LedgerError(f"CSV line 1: header must be {','.join(COLUMNS)}")
    entries: list[Entry] = []
    current: dict | None = None

    def flush() -> None:
        if current is not None:
            entries.append(Entry(**current))

    for row in reader:
        line = reader.line_num
        if len(row) != len(COLUMNS):
            raise LedgerError(f"CSV line {line}: {len(row)} fields, expected {len(COLUMNS)}")
        eid, ts, kind, memo, rev, meta, account, amount, prev, h = row
        try:
            eid_i = int(eid)
            rev_i = int(rev) if rev else None
            meta_d = json.loads(meta)
            amount_i = int(amount) if account else None
        except (ValueError, json.JSONDecodeError) as exc:
            raise LedgerError(f"CSV line {line}: {exc}") from None
        if not isinstance(meta_d, dict):
            raise LedgerError(f"CSV line {line}: meta must be a JSON object")
        fields = dict(id=eid_i, ts=ts, kind=kind, memo=memo, reverses=rev_i, meta=meta_d, prev_hash=prev, hash=h)
        if current is None or current["id"] != eid_i:
            flush()
            if any(e.id == eid_i for e in entries[-1:]):
                raise LedgerError(f"CSV line {line}: entry {eid_i} is split over non-adjacent rows")
            current = {**fields, "postings": {}}
        elif any(current[k] != v for k, v in fields.items()):
            raise LedgerError(f"CSV line {line}: entry {eid_i}'s rows disagree")
        if account:
            if account in current["postings"]:
                raise LedgerError(f"CSV line {line}: account {account} posted twice in entry {eid_i}")
            current["postings"][account] = amount_i
    flush()
    return entries


def import_csv(src: IO[str], path: str | Path) -> Ledger:
    """Build a new ledger file at ``path`` from CSV, checking every hash and invariant; all or nothing."""
    entries = read_csv(src)
    if not entries:
        raise LedgerError("CSV: no entries")
    st = State()
    for e in entries:
        _fold(st, e, check_hash=True)  # refuses a tampered or inconsistent file before anything is created
    path = str(path)
    if path != ":memory:" and Path(path).exists():
        raise LedgerError(f"{path}: already exists; import writes a new ledger file")
    conn = Ledger._connect(path)
    ledger = Ledger(conn, path)
    try:
        with ledger._txn():
            schema.create(conn)
            for e in entries:
                ledger._insert(e)
    except BaseException:
        conn.close()
        if path != ":memory:":
            for suffix in ("", "-wal", "-shm"):
                Path(path + suffix).unlink(missing_ok=True)
        raise
    return ledger
