"""CSV export/import of a whole ledger: one row per posting (an entry that moves no coins has one row with an
empty account). Import rebuilds the identical ledger (same ids, timestamps and hashes) and refuses a file whose
chain or invariants do not check out, writing nothing."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import IO

from companion import inputs
from companion.inputs import COIN_MAX
from companion.ledger import schema
from companion.ledger.core import Entry, Ledger, LedgerError, State, _fold

COLUMNS = ["entry", "ts", "kind", "memo", "reverses", "meta", "account", "amount", "prev_hash", "hash"]


def good_prefix(entries: list[Entry]) -> tuple[list[Entry], str | None]:
    """The longest run of entries from the first that replays cleanly (chain, hashes, invariants), and what
    is wrong with the next one (None when all are good)."""
    st = State()
    for i, e in enumerate(entries):
        try:
            _fold(st, e, check_hash=True)
        except LedgerError as exc:
            return entries[:i], str(exc)
    return entries, None


def _raw_entries(ledger: Ledger) -> list[Entry]:
    """Every entry as stored, without judging it (for exporting what is good of a damaged ledger)."""
    with ledger._reading():
        return ledger._entries()


def export_csv(ledger: Ledger, out: IO[str], good_only: bool = False) -> int:
    """Write the ledger as CSV to ``out``; return the number of entries. ``good_only``: only the entries from
    the first up to the first damaged one (a ledger whose later entries are broken keeps its good part)."""
    if good_only:
        entries, _ = good_prefix(_raw_entries(ledger))
    else:
        entries = ledger.entries()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(COLUMNS)
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


MAX_CSV_BYTES = 64 * 1024 * 1024


def read_csv(src: IO[str] | str) -> list[Entry]:
    """Parse an exported CSV (a text stream or the text itself) into entries. Errors name the line. Numbers
    are ASCII digits only; meta is strict JSON."""
    if isinstance(src, str):
        src = io.StringIO(src, newline="")
    reader = csv.reader(src, strict=True)
    try:
        try:
            header = next(reader)
        except StopIteration:
            raise LedgerError("CSV: empty file") from None
        if header != COLUMNS:
            raise LedgerError(f"CSV line 1: header must be {','.join(COLUMNS)}")
        return _read_rows(reader)
    except csv.Error as exc:
        raise LedgerError(f"CSV line {reader.line_num}: {exc}") from None


def _read_rows(reader) -> list[Entry]:
    entries: list[Entry] = []
    current: dict | None = None

    def flush() -> None:
        if current is not None:
            entries.append(Entry(**current))

    for row in reader:
        line = reader.line_num
        where = f"CSV line {line}"
        if len(row) != len(COLUMNS):
            raise LedgerError(f"{where}: {len(row)} fields, expected {len(COLUMNS)}")
        eid, ts, kind, memo, rev, meta, account, amount, prev, h = row
        try:
            eid_i = inputs.ascii_int(eid, f"{where}: entry", 1)
            rev_i = inputs.ascii_int(rev, f"{where}: reverses", 1) if rev else None
            meta_d = inputs.loads_json(meta, f"{where}: meta")
            amount_i = inputs.ascii_int(amount, f"{where}: amount", -COIN_MAX, COIN_MAX) if account else None
        except inputs.RecordError as exc:
            raise LedgerError(str(exc)) from None
        if not account and amount:
            raise LedgerError(f"{where}: an amount without an account")
        if not isinstance(meta_d, dict):
            raise LedgerError(f"{where}: meta must be a JSON object")
        fields = dict(id=eid_i, ts=ts, kind=kind, memo=memo, reverses=rev_i, meta=meta_d, prev_hash=prev, hash=h)
        if current is None or current["id"] != eid_i:
            flush()
            if any(e.id == eid_i for e in entries[-1:]):
                raise LedgerError(f"{where}: entry {eid_i} is split over non-adjacent rows")
            current = {**fields, "postings": {}}
        elif any(current[k] != v for k, v in fields.items()):
            raise LedgerError(f"{where}: entry {eid_i}'s rows disagree")
        elif not account or not current["postings"]:
            raise LedgerError(f"{where}: entry {eid_i} has a row without an account beside other rows")
        if account:
            if account in current["postings"]:
                raise LedgerError(f"{where}: account {account} posted twice in entry {eid_i}")
            current["postings"][account] = amount_i
    flush()
    return entries


def import_csv(src: IO[str] | str, path: str | Path) -> Ledger:
    """Build a new ledger file at ``path`` from CSV, checking every hash and invariant first; all or nothing
    (written to a temporary file that takes the name only when complete; see Ledger.build_new)."""
    entries = read_csv(src)
    if not entries:
        raise LedgerError("CSV: no entries")
    st = State()
    for e in entries:
        _fold(st, e, check_hash=True)  # refuses a tampered or inconsistent file before anything is created
    if not st.session:
        raise LedgerError("CSV: no session_start entry")

    def fill(ledger: Ledger) -> None:
        schema.create(ledger.conn)
        for e in entries:
            ledger._insert(e)

    return Ledger.build_new(str(path), fill)
