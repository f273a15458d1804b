"""The chip ledger: double-entry, hash-chained, in SQLite.

Accounts (all balances are sums of postings; nothing else is stored):
  ``stack:P``  coins in front of player P (never negative)
  ``pot``      coins in the middle (never negative)
  ``bank:P``   P's account with the bank: buy-ins take coins from it (it goes negative), cash-outs return them
  ``loan:P``   the bank's loans to P: a loan takes coins from it into P's stack, a repayment brings them back;
               its balance is minus what P owes (never positive)
Every entry's postings sum to zero, so the sum of all accounts is always zero.

Standing (net result) of P = stack:P + bank:P + loan:P
                           = stack - bought in + cashed out - loans outstanding.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import re
import sqlite3
import urllib.parse
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Iterator

from companion import inputs
from companion.inputs import COIN_MAX
from companion.ledger import schema
from companion.ledger.errors import LedgerError
from companion.ledger.settle import settle as _settle

GENESIS = "0" * 64
POT = "pot"
DEFAULT_BUY_IN = 50

# Kinds the ledger writes itself; a ruling may not use them.
STATUS_KINDS = {"session_start", "join", "leave", "rejoin", "session_end"}
MONEY_KINDS = {"buy_in", "loan", "repayment", "cash_out", "end_split"}
LEDGER_KINDS = STATUS_KINDS | MONEY_KINDS | {"undo"}
# Kinds the rules referees are known to write; any other lower_snake kind from a ruling is accepted as well.
RULING_KINDS = {"ante", "bet", "pot_award", "penalty", "split", "countdown_coin", "dock_penalty", "refund"}
_KIND_RE = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
SQLITE_MAGIC = b"SQLite format 3\x00"
MAX_PLAYERS = 16


def damaged_hint(path: str) -> str:
    return (f"nothing was written. Keep what is good: `pirate-table ledger {path} export --csv --good -o good.csv`, "
            f"then `pirate-table ledger NEW.db import --csv good.csv`")


def stack(p: str) -> str:
    return f"stack:{p}"


def bank(p: str) -> str:
    return f"bank:{p}"


def loan(p: str) -> str:
    return f"loan:{p}"


def check_name(name: Any, where: str = "player") -> str:
    """A player name: companion.inputs' rule (1-32 printable characters, NFC, no leading/trailing space) and, as
    the ledger builds account names and CSV from it, no ':', ',' or '"'; not 'pot'."""
    problem = inputs.name_problem(name)
    if problem is None and (any(c in name for c in ':,"') or name == POT):
        problem = f"bad player name {inputs.short(name)} (no ':', ',' or '\"', not 'pot')"
    if problem:
        raise LedgerError(f"{where}: {problem}")
    return name


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


@dataclass(frozen=True)
class Entry:
    id: int
    ts: str
    kind: str
    memo: str
    reverses: int | None
    meta: dict[str, Any]
    postings: dict[str, int]
    prev_hash: str = GENESIS
    hash: str = ""

    def canonical(self) -> str:
        body = {
            "id": self.id,
            "ts": self.ts,
            "kind": self.kind,
            "memo": self.memo,
            "reverses": self.reverses,
            "meta": self.meta,
            "postings": {k: self.postings[k] for k in sorted(self.postings)},
        }
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def digest(self, prev_hash: str | None = None) -> str:
        prev = self.prev_hash if prev_hash is None else prev_hash
        return hashlib.sha256((prev + "\n" + self.canonical()).encode("utf-8")).hexdigest()

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "ts": self.ts,
            "kind": self.kind,
            "memo": self.memo,
            "reverses": self.reverses,
            "meta": self.meta,
            "postings": dict(sorted(self.postings.items())),
            "prev_hash": self.prev_hash,
            "hash": self.hash,
        }


@dataclass
class State:
    """Everything derived from the entries: balances, seats, rounds, session settings."""

    session: dict[str, Any] = field(default_factory=dict)
    balances: dict[str, int] = field(default_factory=dict)
    players: list[str] = field(default_factory=list)  # everyone who ever joined, in seat order
    seated: list[str] = field(default_factory=list)
    status_entry: dict[str, int] = field(default_factory=dict)  # player -> id of their latest status entry
    undone: set[int] = field(default_factory=set)
    rounds: dict[int, list[int]] = field(default_factory=dict)  # round -> its entry ids
    round_ts: dict[int, str] = field(default_factory=dict)
    last_action: int = 0
    ended_by: int | None = None  # id of the session_end entry in force
    head: str = GENESIS
    last_id: int = 0
    by_id: dict[int, Entry] = field(default_factory=dict)
    history: dict[str, list[int]] = field(default_factory=dict)  # player -> their live status entry ids

    def bal(self, account: str) -> int:
        return self.balances.get(account, 0)

    @property
    def pot(self) -> int:
        return self.bal(POT)

    def stacks(self) -> dict[str, int]:
        return {p: self.bal(stack(p)) for p in self.players}

    @property
    def rounds_played(self) -> int:
        return sum(1 for ids in self.rounds.values() if any(i not in self.undone for i in ids))

    def deadline(self) -> datetime | None:
        minutes = self.session.get("minutes")
        if not minutes:
            return None
        return datetime.fromisoformat(self.session["started"]) + timedelta(minutes=minutes)


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise LedgerError("the file holds text that is not UTF-8 (damaged)") from None


def _snapshot(method):
    """Run a reading method inside one read transaction (see Ledger._reading)."""
    import functools

    @functools.wraps(method)
    def wrapper(self, *a, **kw):
        with self._reading():
            return method(self, *a, **kw)

    return wrapper


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _ts(dt: datetime) -> str:
    return dt.astimezone(timezone.utc).isoformat(timespec="milliseconds")


class Ledger:
    """One play session's ledger in one SQLite file. Every public mutating method is one transaction."""

    def __init__(self, conn: sqlite3.Connection, path: str, clock: Callable[[], datetime] = _now):
        self.conn = conn
        self.path = path
        self.clock = clock

    # ------------------------------------------------------------------ opening
    @staticmethod
    def _connect(path: str, readonly: bool = False, create: bool = False) -> sqlite3.Connection:
        """Open the SQLite file without changing it: never creates it (unless ``create``), and a read-only
        connection (``mode=ro``) for the commands that only read. WAL is switched on by ``_setup``, after the
        file has been checked to be a ledger."""
        if path == ":memory:":
            return sqlite3.connect(path, isolation_level=None)
        mode = "rwc" if create else "rw"
        if readonly:
            # A read-only SQLite connection on a WAL file creates the -wal/-shm side files and, being read-only,
            # cannot remove them when it closes. So where the file is writable and no side file exists yet (no
            # other connection, nothing left to checkpoint), read through a query_only read-write connection:
            # closing it removes what it created and the folder is as before. Otherwise: mode=ro.
            side = any(os.path.exists(path + x) for x in ("-wal", "-shm", "-journal"))
            writable = os.access(path, os.W_OK) and os.access(os.path.dirname(os.path.abspath(path)), os.W_OK)
            mode = "rw" if writable and not side else "ro"
        uri = "file:" + urllib.parse.quote(os.fsencode(os.path.abspath(path))) + f"?mode={mode}"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30.0)
        conn.text_factory = _text  # text that is not UTF-8 (a damaged file) is a LedgerError, not a crash
        conn.execute("PRAGMA busy_timeout = 30000")
        if readonly:
            conn.execute("PRAGMA query_only = ON")  # any write statement fails
        return conn

    @staticmethod
    def _setup(conn: sqlite3.Connection, path: str) -> None:
        """Writers: WAL (readers never block writers), full sync, foreign keys."""
        mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if path != ":memory:" and mode.lower() != "wal":
            raise LedgerError(f"{path}: cannot switch the journal to WAL (got {mode})")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")

    @staticmethod
    def _check_file(path: str, readonly: bool) -> None:
        """Refuse, before SQLite touches it, anything that is not a ledger file we may use."""
        p = Path(path)
        if not p.exists():
            raise LedgerError(f"{path}: no such ledger (create one with `ledger {path} new --players ...`)")
        if not p.is_file():
            raise LedgerError(f"{path}: not a file")
        try:
            with open(p, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except OSError as exc:
            raise LedgerError(f"{path}: cannot read: {exc.strerror or exc}") from None
        if not head:
            raise LedgerError(f"{path}: an empty file, not a ledger")
        if head != SQLITE_MAGIC:
            raise LedgerError(f"{path}: not a ledger (not an SQLite file)")
        if not readonly:
            if not os.access(p, os.W_OK) or not p.stat().st_mode & 0o222:  # root ignores the bits: we do not
                raise LedgerError(f"{path}: the ledger file is read-only; this action writes to it "
                                  "(give write permission, or use show/log/verify/export, which only read)")
            if not os.access(p.parent if str(p.parent) else ".", os.W_OK | os.X_OK):
                raise LedgerError(f"{path}: its folder is read-only; SQLite needs to write its journal "
                                  "beside the ledger")

    @staticmethod
    def _check_schema(conn: sqlite3.Connection, path: str) -> int:
        """The file holds a ledger (entries and postings tables, a known schema version); return the version."""
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            version = conn.execute("PRAGMA user_version").fetchone()[0]
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"{path}: not a ledger database ({exc})") from None
        except UnicodeDecodeError:  # SQLite's own message quotes the damaged schema
            raise LedgerError(f"{path}: not a ledger database (its schema is damaged)") from None
        if "entries" not in tables:
            raise LedgerError(f"{path}: not a ledger database (no entries table)")
        if version > schema.SCHEMA_VERSION:
            raise LedgerError(f"{path}: ledger schema version {version} is newer than this program understands "
                              f"({schema.SCHEMA_VERSION})")
        if version == schema.SCHEMA_VERSION and "postings" not in tables:
            raise LedgerError(f"{path}: not a ledger database (no postings table)")
        return version

    @classmethod
    def open(cls, path: str | Path, clock: Callable[[], datetime] = _now, readonly: bool = False) -> "Ledger":
        """Open an existing ledger. ``readonly``: a read-only SQLite connection that changes nothing in the file
        (no WAL switch, no migration written: an old schema is migrated in a copy in memory)."""
        path = str(path)
        if path == ":memory:":
            raise LedgerError(":memory:: an in-memory ledger cannot be opened again")
        cls._check_file(path, readonly)
        try:
            conn = cls._connect(path, readonly=readonly)
        except sqlite3.Error as exc:
            raise LedgerError(f"{path}: cannot open: {exc}") from None
        try:
            version = cls._check_schema(conn, path)
            if readonly:
                if version < schema.SCHEMA_VERSION:
                    mem = sqlite3.connect(":memory:", isolation_level=None)
                    conn.backup(mem)
                    conn.close()
                    conn = mem
                    schema.migrate(conn)
            else:
                cls._setup(conn, path)
                schema.migrate(conn)
        except BaseException:
            conn.close()
            raise
        return cls(conn, path, clock)

    @classmethod
    def create(
        cls,
        path: str | Path,
        players: list[str],
        buy_in: int = DEFAULT_BUY_IN,
        minutes: int | None = None,
        rounds: int | None = None,
        clock: Callable[[], datetime] = _now,
        memo: str = "",
    ) -> "Ledger":
        path = str(path)
        cls._check_session_args(players, buy_in, minutes, rounds)

        def fill(ledger: "Ledger") -> None:
            conn = ledger.conn
            schema.create(conn)
            now = _ts(clock())
            st = State()
            session = {"players": list(players), "buy_in": buy_in, "minutes": minutes, "rounds": rounds,
                       "started": now, "schema": schema.SCHEMA_VERSION}
            ledger._write(st, "session_start", {}, memo or "session started", meta={"session": session},
                          action=1, ts=now)
            for p in players:
                ledger._write(st, "join", {}, f"{p} sits down", meta={"player": p}, action=1, ts=now)
                ledger._write(st, "buy_in", {bank(p): -buy_in, stack(p): buy_in}, f"{p} buys in",
                              meta={"player": p}, action=1, ts=now)

        return cls.build_new(path, fill, clock)

    @classmethod
    def build_new(cls, path: str, fill: Callable[["Ledger"], None],
                  clock: Callable[[], datetime] = _now) -> "Ledger":
        """Make a new ledger file at ``path``, all or nothing: ``fill`` writes it inside one transaction in a
        temporary file beside ``path``, which takes the name ``path`` only when complete (an existing file is
        never replaced; on any failure nothing is left behind)."""
        if path == ":memory:":
            conn = cls._connect(path)
            ledger = cls(conn, path, clock)
            with ledger._txn():
                fill(ledger)
            return ledger
        p = Path(path)
        if p.exists() or p.is_symlink():
            raise LedgerError(f"{path}: already exists; a ledger file holds one session")
        folder = p.parent if str(p.parent) else Path(".")
        if not folder.is_dir():
            raise LedgerError(f"{path}: folder {folder} does not exist")
        tmp = str(folder / f".{p.name[:40]}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
        try:  # like mkstemp, but with the permissions a new file gets (umask), not 0600
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except OSError as exc:
            raise LedgerError(f"{path}: cannot write in {folder}: {exc.strerror or exc}") from None
        try:
            conn = cls._connect(tmp)
            try:
                cls._setup(conn, tmp)
                ledger = cls(conn, tmp, clock)
                with ledger._txn():
                    fill(ledger)
            finally:
                conn.close()  # checkpoints the WAL into the file and removes it
            with open(tmp, "rb+") as f:
                os.fsync(f.fileno())
            try:
                os.link(tmp, path)  # fails if the name was taken meanwhile: never replaces a file
            except FileExistsError:
                raise LedgerError(f"{path}: already exists; a ledger file holds one session") from None
            except OSError:  # a file system without hard links
                if p.exists():
                    raise LedgerError(f"{path}: already exists; a ledger file holds one session") from None
                os.rename(tmp, path)
        except sqlite3.Error as exc:
            raise LedgerError(f"{path}: database error: {exc}") from None
        except OSError as exc:
            raise LedgerError(f"{path}: cannot write: {exc.strerror or exc}") from None
        finally:
            for suffix in ("", "-wal", "-shm", "-journal"):
                try:
                    os.unlink(tmp + suffix)
                except FileNotFoundError:
                    pass
        try:
            dfd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:
            pass  # not every platform can sync a folder
        return cls.open(path, clock)

    @staticmethod
    def _check_session_args(players: list[str], buy_in: int, minutes: int | None, rounds: int | None) -> None:
        if not players:
            raise LedgerError("players: give at least one player")
        for p in players:
            check_name(p)
        dup = {p for p in players if players.count(p) > 1}
        if dup:
            raise LedgerError(f"players: {sorted(dup)[0]!r} is listed twice")
        if len(players) > MAX_PLAYERS:
            raise LedgerError(f"players: at most {MAX_PLAYERS} players")
        if not _is_int(buy_in) or not 0 < buy_in <= COIN_MAX:
            raise LedgerError(f"buy-in: must be a whole number of coins > 0 and <= {COIN_MAX}, got {buy_in!r}")
        if minutes is not None and rounds is not None:
            raise LedgerError("a session has a fixed duration or a number of rounds, not both")
        for label, v in (("minutes", minutes), ("rounds", rounds)):
            if v is not None and (not _is_int(v) or not 0 < v <= COIN_MAX):
                raise LedgerError(f"{label}: must be a whole number > 0 and <= {COIN_MAX}, got {v!r}")

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ storage
    @contextlib.contextmanager
    def _txn(self) -> Iterator[None]:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    @contextlib.contextmanager
    def _reading(self) -> Iterator[None]:
        """One read transaction (one snapshot of the file) around several SELECTs, so that a writer committing
        in between cannot make the reader see half of its entry. Inside a write transaction: nothing to do."""
        if self.conn.in_transaction:
            yield
            return
        self.conn.execute("BEGIN")
        try:
            yield
        finally:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")

    def entries(self) -> list[Entry]:
        with self._reading():
            return self._entries()

    def _entries(self) -> list[Entry]:
        postings: dict[int, dict[str, int]] = {}
        for eid, account, amount in self.conn.execute(
            "SELECT entry_id, account, amount FROM postings ORDER BY entry_id, account"
        ):
            postings.setdefault(eid, {})[account] = amount
        out = []
        for eid, ts, kind, memo, reverses, meta, prev, h in self.conn.execute(
            "SELECT id, ts, kind, memo, reverses, meta, prev_hash, hash FROM entries ORDER BY id"
        ):
            try:
                meta_d = inputs.loads_json(meta, f"entry {eid}: meta") if isinstance(meta, str) else None
            except inputs.RecordError as exc:
                raise LedgerError(f"{exc} (tampered)") from None
            if not isinstance(meta_d, dict):
                raise LedgerError(f"entry {eid}: meta is not a JSON object (tampered)")
            out.append(Entry(eid, ts, kind, memo, reverses, meta_d, postings.get(eid, {}), prev, h))
        return out

    def _write(self, st: State, kind: str, postings: dict[str, int], memo: str, *, meta: dict[str, Any],
               action: int, reverses: int | None = None, ts: str | None = None) -> Entry:
        """Append one entry inside the open transaction and fold it into ``st`` (checking invariants)."""
        postings = {a: v for a, v in postings.items() if v != 0}
        entry = Entry(st.last_id + 1, ts or _ts(self.clock()), kind, memo, reverses,
                      {**meta, "action": action}, postings, st.head)
        entry = dataclasses.replace(entry, hash=entry.digest())
        _fold(st, entry)  # raises LedgerError on a broken invariant: the caller's transaction rolls back
        self._insert(entry)
        return entry

    def _insert(self, e: Entry) -> None:
        self.conn.execute(
            "INSERT INTO entries (id, ts, kind, memo, reverses, meta, prev_hash, hash) VALUES (?,?,?,?,?,?,?,?)",
            (e.id, e.ts, e.kind, e.memo, e.reverses,
             json.dumps(e.meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False), e.prev_hash, e.hash),
        )
        self.conn.executemany(
            "INSERT INTO postings (entry_id, account, amount) VALUES (?,?,?)",
            [(e.id, a, v) for a, v in sorted(e.postings.items())],
        )

    def state(self) -> State:
        """Replay every entry (checking the chain and the invariants as it goes)."""
        st = State()
        with self._reading():
            for e in self._entries():
                _fold(st, e, check_hash=True)
        return st

    # ------------------------------------------------------------------ queries
    @_snapshot
    def balances(self) -> dict[str, int]:
        """Balances straight from SQL (sum of postings per account)."""
        return {a: s for a, s in self.conn.execute(
            "SELECT account, SUM(amount) FROM postings GROUP BY account ORDER BY account") if s != 0}

    @_snapshot
    def table(self) -> dict[str, Any]:
        """What the referee needs before ruling a hand: current stacks of the seated players and the pot."""
        st = self.state()
        return {"players": list(st.seated), "stacks": {p: st.bal(stack(p)) for p in st.seated},
                "pot_carry": st.pot}

    @_snapshot
    def record_for(self, record: Any) -> dict[str, Any]:
        """A copy of a hand record with ``stacks`` and ``options.pot_carry`` taken from the ledger, so that the
        referee rules against the real balances. A record that states different ones is refused."""
        if not isinstance(record, dict):
            raise LedgerError("record: a JSON object")
        t = self.table()
        players = record.get("players")
        if not isinstance(players, list):
            raise LedgerError("record.players: a list of names")
        for p in players:
            if not isinstance(p, str) or p not in t["stacks"]:
                raise LedgerError(f"record.players: {p!r} is not seated at this ledger's table")
        stacks = {p: t["stacks"][p] for p in players}
        stated = record.get("stacks")
        if stated is not None:
            if not isinstance(stated, dict):
                raise LedgerError("record.stacks: an object player -> coins")
            for p, v in stated.items():
                if p in stacks and v != stacks[p]:
                    raise LedgerError(f"record.stacks.{p}: the record says {v!r}, the ledger says {stacks[p]}")
        # Where a game's record carries the pot left from the previous hand: Pirate's Bluff has it in
        # options.pot_carry, Powderkeg (and any later game) at the top level.
        options = record.get("options", {})
        stated_pots = [("pot_carry", record["pot_carry"])] if "pot_carry" in record else []
        if isinstance(options, dict) and "pot_carry" in options:
            stated_pots.append(("options.pot_carry", options["pot_carry"]))
        for where, v in stated_pots:
            if v != t["pot_carry"]:
                raise LedgerError(f"record.{where}: the record says {v!r}, the ledger says {t['pot_carry']}")
        out = {**record, "stacks": stacks}
        from companion.games import registry  # where this game's record states the pot (GameSpec.pot_carry_at)

        if registry.get(record.get("game")).pot_carry_at == "options.pot_carry":
            if not isinstance(options, dict):
                raise LedgerError("record.options: an object")
            out["options"] = {**options, "pot_carry": t["pot_carry"]}
        else:
            out["pot_carry"] = t["pot_carry"]
        return out

    @_snapshot
    def standings(self, st: State | None = None) -> dict[str, dict[str, Any]]:
        st = st or self.state()
        bought = {p: 0 for p in st.players}
        for e in self.entries():
            if e.kind == "buy_in" and e.id not in st.undone:
                for a, v in e.postings.items():
                    if a.startswith("stack:"):
                        bought[a[6:]] += v
        out = {}
        for p in st.players:
            s, b, l = st.bal(stack(p)), st.bal(bank(p)), st.bal(loan(p))
            out[p] = {"seated": p in st.seated, "stack": s, "bought_in": bought[p],
                      "cashed_out": b + bought[p], "loans": -l, "net": s + b + l}
        return out

    @_snapshot
    def summary(self) -> dict[str, Any]:
        st = self.state()
        dl = st.deadline()
        now = self.clock()
        return {
            "file": self.path,
            "schema_version": self.conn.execute("PRAGMA user_version").fetchone()[0],
            "session": st.session,
            "ended": st.ended_by is not None,
            "rounds_played": st.rounds_played,
            "deadline": _ts(dl) if dl else None,
            "time_up": bool(dl and now > dl),
            "pot": st.pot,
            "bank": sum(v for a, v in st.balances.items() if a.startswith("bank:")),
            "players": self.standings(st),
            "balances": dict(sorted((a, v) for a, v in st.balances.items() if v)),
            "entries": st.last_id,
            "head": st.head,
        }

    @_snapshot
    def settle(self) -> list[tuple[str, str, int]]:
        st = self.state()
        if st.pot:
            raise LedgerError(f"the pot holds {st.pot} coins that belong to nobody yet; `end` the session "
                              "first (it splits the pot among the seated players)")
        return _settle({p: v["net"] for p, v in self.standings(st).items()})

    # ------------------------------------------------------------------ actions
    def _begin_action(self) -> State:
        """Inside the write transaction: replay and check the whole chain (hashes, invariants, postings of no
        entry, SQL balances) before appending; a damaged ledger takes no new entry."""
        try:
            st = self.state()
            self._check_tables(st)
        except LedgerError as exc:
            raise LedgerError(f"{self.path}: the ledger is damaged ({exc}); {damaged_hint(self.path)}") from None
        return st

    def _require_open(self, st: State) -> None:
        if st.ended_by is not None:
            raise LedgerError("the session has ended (undo the end to reopen it)")

    def _require_seated(self, st: State, p: str) -> None:
        check_name(p)
        if p not in st.players:
            raise LedgerError(f"{p!r} is not a player of this session")
        if p not in st.seated:
            raise LedgerError(f"{p!r} has left the table (rejoin first)")

    @staticmethod
    def _amount(n: Any, what: str) -> int:
        if not _is_int(n) or not 0 < n <= COIN_MAX:
            raise LedgerError(f"{what}: must be a whole number of coins > 0 and <= {COIN_MAX}, got {inputs.short(n)}")
        return n

    def loan(self, p: str, n: int, memo: str = "") -> list[Entry]:
        n = self._amount(n, "loan")
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            self._require_seated(st, p)
            a = st.last_action + 1
            return [self._write(st, "loan", {loan(p): -n, stack(p): n}, memo or f"{p} borrows {n}",
                                meta={"player": p}, action=a)]

    def repay(self, p: str, n: int, memo: str = "") -> list[Entry]:
        n = self._amount(n, "repay")
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            self._require_seated(st, p)
            owed = -st.bal(loan(p))
            if n > owed:
                raise LedgerError(f"{p} owes {owed} coins; cannot repay {n}")
            if n > st.bal(stack(p)):
                raise LedgerError(f"{p} has {st.bal(stack(p))} coins; cannot repay {n}")
            a = st.last_action + 1
            return [self._write(st, "repayment", {stack(p): -n, loan(p): n}, memo or f"{p} repays {n}",
                                meta={"player": p}, action=a)]

    def join(self, p: str, buy_in: int | None = None) -> list[Entry]:
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            check_name(p)
            if p in st.players:
                raise LedgerError(f"{p!r} already played this session (use rejoin)")
            if len(st.players) >= MAX_PLAYERS:
                raise LedgerError(f"at most {MAX_PLAYERS} players")
            n = self._amount(st.session["buy_in"] if buy_in is None else buy_in, "buy-in")
            a = st.last_action + 1
            return [self._write(st, "join", {}, f"{p} sits down", meta={"player": p}, action=a),
                    self._write(st, "buy_in", {bank(p): -n, stack(p): n}, f"{p} buys in",
                                meta={"player": p}, action=a)]

    def leave(self, p: str) -> list[Entry]:
        """P leaves: repays what the stack can of the loans, cashes out the rest, and gives up the seat."""
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            self._require_seated(st, p)
            a = st.last_action + 1
            out = []
            pay = min(st.bal(stack(p)), -st.bal(loan(p)))
            if pay > 0:
                out.append(self._write(st, "repayment", {stack(p): -pay, loan(p): pay},
                                       f"{p} repays {pay} on leaving", meta={"player": p}, action=a))
            rest = st.bal(stack(p))
            if rest > 0:
                out.append(self._write(st, "cash_out", {stack(p): -rest, bank(p): rest},
                                       f"{p} cashes out {rest}", meta={"player": p}, action=a))
            out.append(self._write(st, "leave", {}, f"{p} leaves the table", meta={"player": p}, action=a))
            return out

    def rejoin(self, p: str, buy_in: int | None = None) -> list[Entry]:
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            check_name(p)
            if p not in st.players:
                raise LedgerError(f"{p!r} never played this session (use join)")
            if p in st.seated:
                raise LedgerError(f"{p!r} is still seated")
            n = self._amount(st.session["buy_in"] if buy_in is None else buy_in, "buy-in")
            a = st.last_action + 1
            return [self._write(st, "rejoin", {}, f"{p} sits down again", meta={"player": p}, action=a),
                    self._write(st, "buy_in", {bank(p): -n, stack(p): n}, f"{p} buys in again",
                                meta={"player": p}, action=a)]

    def end(self) -> list[Entry]:
        """End the session. Coins left in the pot are split equally among the seated players; the odd coins go
        one each to the seated players in seat order."""
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            a = st.last_action + 1
            out = []
            if st.pot and st.seated:
                share, odd = divmod(st.pot, len(st.seated))
                postings = {POT: -st.pot}
                for i, p in enumerate(st.seated):
                    postings[stack(p)] = share + (1 if i < odd else 0)
                out.append(self._write(st, "end_split", postings, "the pot left at the end is split",
                                       meta={}, action=a))
            out.append(self._write(st, "session_end", {}, "session ended",
                                   meta={"rounds_played": st.rounds_played}, action=a))
            return out

    def undo(self, entry_id: int | None = None, memo: str = "") -> list[Entry]:
        """Reverse one entry (``entry_id``) or, with none, every live entry of the latest action that is not
        itself an undo. An undo is never undone (re-enter the action instead); an entry is undone at most once."""
        with self._txn():
            st = self._begin_action()
            entries = {e.id: e for e in self.entries()}
            if entry_id is None:
                targets = _last_undoable_action(entries, st)
                if not targets:
                    raise LedgerError("nothing to undo")
            else:
                if not _is_int(entry_id) or entry_id not in entries:
                    raise LedgerError(f"entry {entry_id}: no such entry")
                targets = [entries[entry_id]]
            a = st.last_action + 1
            out = []
            for t in sorted(targets, key=lambda e: -e.id):
                if t.kind == "undo":
                    raise LedgerError(f"entry {t.id} is an undo; undo is not undone (enter the action again)")
                if t.id in st.undone:
                    raise LedgerError(f"entry {t.id} is already undone")
                if t.kind in ("session_start", "join"):
                    raise LedgerError(f"entry {t.id} ({t.kind}) cannot be undone")
                if st.ended_by is not None and t.id != st.ended_by and t.kind != "end_split":
                    raise LedgerError("the session has ended; undo the end first")
                try:
                    out.append(self._write(st, "undo", {k: -v for k, v in t.postings.items()},
                                           memo or f"undo entry {t.id} ({t.kind})", meta={}, action=a,
                                           reverses=t.id))
                except LedgerError as exc:
                    raise LedgerError(f"cannot undo entry {t.id} ({t.kind}): {str(exc).split(': ', 1)[-1]}") from None
            return out

    # ------------------------------------------------------------------ rulings
    def apply_ruling(self, ruling: Any) -> list[Entry]:
        """Apply a referee's ruling: every entry of it, in one transaction, or nothing.

        The ruling's ``stacks_before``/``pot_carry_before`` must equal the ledger's balances. A player whose
        stack would go below zero at any point of the ruling first takes a loan of the shortfall (entry
        ``loan``, same transaction)."""
        checked = validate_ruling(ruling)
        digest = hashlib.sha256(json.dumps(ruling, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
        with self._txn():
            st = self._begin_action()
            self._require_open(st)
            for p in checked["players"]:
                if p not in st.players:
                    raise LedgerError(f"ruling.players: {p!r} is not a player of this session")
                if p not in st.seated:
                    raise LedgerError(f"ruling.players: {p!r} has left the table")
            self._check_limits(st)
            for p, v in checked["stacks_before"].items():
                if st.bal(stack(p)) != v:
                    raise LedgerError(f"ruling.stacks_before.{p}: the ruling says {v}, the ledger says "
                                      f"{st.bal(stack(p))} (rule against the ledger: referee --ledger)")
            if checked["pot_carry_before"] != st.pot:
                raise LedgerError(f"ruling.pot_carry_before: the ruling says {checked['pot_carry_before']}, "
                                  f"the ledger says {st.pot}")
            # the lowest point each stack reaches during the ruling
            run = {p: st.bal(stack(p)) for p in checked["players"]}
            low = dict(run)
            pot = st.pot
            for i, e in enumerate(checked["entries"]):
                for acct, v in e["postings"].items():
                    if acct == POT:
                        pot += v
                    else:
                        run[acct] += v
                        low[acct] = min(low[acct], run[acct])
                if pot < 0:
                    raise LedgerError(f"ruling.entries[{i}]: takes the pot to {pot}")
            a = st.last_action + 1
            r = max(st.rounds, default=0) + 1
            base = {"round": r, "ruling": digest}
            if "game" in ruling:
                base["game"] = ruling["game"]
            out = []
            for p in checked["players"]:
                if low[p] < 0:
                    out.append(self._write(st, "loan", {loan(p): low[p], stack(p): -low[p]},
                                           f"{p} is short {-low[p]}: automatic loan",
                                           meta={**base, "player": p, "auto": True}, action=a))
            for e in checked["entries"]:
                postings = {(POT if k == POT else stack(k)): v for k, v in e["postings"].items()}
                out.append(self._write(st, e["kind"], postings, e["memo"], meta=base, action=a))
            if not out:
                out.append(self._write(st, "round", {}, "a round with no money moved", meta=base, action=a))
            return out

    def _check_limits(self, st: State) -> None:
        limit = st.session.get("rounds")
        if limit and st.rounds_played >= limit:
            raise LedgerError(f"the session's {limit} rounds have been played; `end` it")
        dl = st.deadline()
        if dl and self.clock() > dl:
            late = [r for r, ids in st.rounds.items()
                    if any(i not in st.undone for i in ids) and datetime.fromisoformat(st.round_ts[r]) > dl]
            if late:
                raise LedgerError(f"time is up ({st.session['minutes']} minutes, at {_ts(dl)}) and the hand in "
                                  "play was finished; `end` the session")

    # ------------------------------------------------------------------ verify
    def verify(self, expect_head: str | None = None) -> dict[str, Any]:
        """Recompute the hash chain and every invariant, all in one read transaction (a writer committing
        meanwhile is not seen half-way); raise LedgerError naming the first problem.

        ``expect_head``: a head hash printed by an earlier write (all 64 hex digits, or at least the first 16).
        If no entry of the chain has it, entries were removed or rewritten since (a shorter chain verifies on
        its own: this is how truncation is caught). The result's ``appended_since`` counts the entries after it.
        """
        with self._reading():
            return self._verify(expect_head)

    def _verify(self, expect_head: str | None) -> dict[str, Any]:
        if expect_head is not None:
            h = expect_head.lower()
            if not re.fullmatch(r"[0-9a-f]{16,64}", h):
                raise LedgerError(f"--expect-head: a head hash is 16 to 64 hex digits, got {inputs.short(expect_head)}")
        try:
            ic = self.conn.execute("PRAGMA integrity_check").fetchall()
        except sqlite3.DatabaseError as exc:
            raise LedgerError(f"integrity_check failed: {exc}") from None
        if ic != [("ok",)]:
            raise LedgerError(f"integrity_check: {ic[0][0]}")
        st = self.state()
        self._check_tables(st)
        total = sum(st.balances.values())
        if total != 0:
            raise LedgerError(f"accounts sum to {total}, not 0")
        coins = sum(v for a, v in st.balances.items() if a.startswith("stack:")) + st.pot
        issued = -sum(v for a, v in st.balances.items() if a.startswith(("bank:", "loan:")))
        if coins != issued:  # pragma: no cover - implied by total == 0, kept as the table's own check
            raise LedgerError(f"{coins} coins on the table but {issued} issued")
        out = {"ok": True, "entries": st.last_id, "head": st.head, "coins_on_table": coins,
               "rounds_played": st.rounds_played}
        if expect_head is not None:
            at = next((e.id for e in st.by_id.values() if e.hash.startswith(h)), None)
            if at is None:
                raise LedgerError(f"--expect-head: {h[:16]}... is not in this ledger's chain (head {st.head[:16]}, "
                                  f"{st.last_id} entries): entries were removed or rewritten since it was the head")
            out["expected_head_entry"] = at
            out["appended_since"] = st.last_id - at
        return out

    def _check_tables(self, st: State) -> None:
        """What the replay of the entries cannot see: postings of no entry, SQL's balances, a session."""
        orphans = self.conn.execute(
            "SELECT COUNT(*) FROM postings WHERE entry_id NOT IN (SELECT id FROM entries)").fetchone()[0]
        if orphans:
            raise LedgerError(f"{orphans} postings belong to no entry")
        if not st.session:
            raise LedgerError("the ledger has no session_start entry")
        try:
            sql = self.balances()
        except sqlite3.Error as exc:
            raise LedgerError(f"balances cannot be summed in SQL ({exc})") from None
        derived = {a: v for a, v in st.balances.items() if v}
        if sql != derived:
            raise LedgerError("balances from SQL differ from the replayed entries")


def _last_undoable_action(entries: dict[int, Entry], st: State) -> list[Entry]:
    by_action: dict[int, list[Entry]] = {}
    for e in entries.values():
        by_action.setdefault(e.meta.get("action", 0), []).append(e)
    for a in sorted(by_action, reverse=True):
        group = by_action[a]
        if any(e.kind == "undo" for e in group):
            continue
        live = [e for e in group if e.id not in st.undone]
        if not live:
            continue
        if any(e.kind in ("session_start", "join") for e in live):
            return []  # reached the session's creation: nothing left to undo
        return live
    return []


def _fold(st: State, e: Entry, check_hash: bool = False) -> None:
    """Apply entry ``e`` to ``st``, checking the chain and every invariant. Raise LedgerError if broken."""
    where = f"entry {e.id}"
    if e.id != st.last_id + 1:
        raise LedgerError(f"{where}: expected id {st.last_id + 1} (an entry is missing or out of order)")
    if e.prev_hash != st.head:
        raise LedgerError(f"{where}: prev_hash does not match the previous entry's hash (chain broken)")
    if check_hash and e.digest() != e.hash:
        raise LedgerError(f"{where}: hash does not match its content (tampered)")
    try:
        if not isinstance(e.ts, str) or not e.ts.isascii() or datetime.fromisoformat(e.ts).tzinfo is None:
            raise ValueError
    except (TypeError, ValueError):
        raise LedgerError(f"{where}: bad timestamp {inputs.short(e.ts)}") from None
    if not isinstance(e.kind, str) or not _KIND_RE.match(e.kind):
        raise LedgerError(f"{where}: bad kind {inputs.short(e.kind)}")
    if not isinstance(e.memo, str) or len(e.memo) > inputs.TEXT_MAX or not e.memo.isprintable():
        raise LedgerError(f"{where}: bad memo {inputs.short(e.memo)} (printable text, at most "
                          f"{inputs.TEXT_MAX} characters)")
    if e.reverses is not None and not _is_int(e.reverses):
        raise LedgerError(f"{where}: bad reverses {inputs.short(e.reverses)}")
    for a, v in e.postings.items():
        if not isinstance(a, str):
            raise LedgerError(f"{where}: bad account {inputs.short(a)}")
        if not _is_int(v) or v == 0 or abs(v) > COIN_MAX:
            raise LedgerError(f"{where}: posting {a} = {inputs.short(v)} is not a non-zero whole number of at "
                              f"most {COIN_MAX} coins")
    if sum(e.postings.values()) != 0:
        raise LedgerError(f"{where}: postings sum to {sum(e.postings.values())}, not 0")
    action = e.meta.get("action")
    if not _is_int(action) or action < st.last_action:
        raise LedgerError(f"{where}: bad action number {action!r}")

    if e.id == 1:
        if e.kind != "session_start" or e.postings:
            raise LedgerError(f"{where}: a ledger starts with session_start")
        st.session = dict(e.meta.get("session") or {})
        try:
            datetime.fromisoformat(st.session["started"])
            ok = _is_int(st.session["buy_in"]) and all(
                st.session.get(k) is None or _is_int(st.session[k]) for k in ("minutes", "rounds"))
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise LedgerError(f"{where}: session settings are incomplete or malformed")
    elif e.kind == "session_start":
        raise LedgerError(f"{where}: a second session_start")

    player = e.meta.get("player")
    accounts = set(e.postings)

    def only(*allowed: str) -> None:
        if accounts != set(allowed):
            raise LedgerError(f"{where}: a {e.kind} entry moves {sorted(accounts)}, expected {sorted(allowed)}")

    def known(p: Any) -> str:
        if p not in st.players:
            raise LedgerError(f"{where}: {p!r} is not a player")
        return p

    if e.kind == "undo":
        t = e.reverses
        if not _is_int(t) or not 1 <= t < e.id:
            raise LedgerError(f"{where}: undo must name an earlier entry, names {t!r}")
        if t in st.undone:
            raise LedgerError(f"{where}: entry {t} is undone twice")
        target = st.by_id[t]
        if target.kind in ("undo", "session_start", "join"):
            raise LedgerError(f"{where}: a {target.kind} entry cannot be undone")
        if e.postings != {k: -v for k, v in target.postings.items()}:
            raise LedgerError(f"{where}: does not exactly reverse entry {t}")
        if target.kind in STATUS_KINDS:
            p = target.meta.get("player")
            if target.kind == "session_end":
                if st.ended_by != t:
                    raise LedgerError(f"{where}: undoes a session end that is not in force")
                st.ended_by = None
            elif st.status_entry.get(p) != t:
                raise LedgerError(f"{where}: undoes a seat change of {p!r} that is not their latest")
            else:
                _undo_status(st, p, target)
        st.undone.add(t)
    else:
        if e.reverses is not None:
            raise LedgerError(f"{where}: only an undo names an entry it reverses")
        if st.ended_by is not None and e.id != 1:
            raise LedgerError(f"{where}: {e.kind} after the session ended")
        if e.kind == "session_start":
            pass  # checked above: entry 1 and only entry 1
        elif e.kind == "join":
            p = check_name(player, where)
            if p in st.players or e.postings:
                raise LedgerError(f"{where}: bad join of {p!r}")
            st.players.append(p)
            st.seated.append(p)
            st.status_entry[p] = e.id
            st.history.setdefault(p, []).append(e.id)
        elif e.kind in ("leave", "rejoin"):
            p = known(player)
            if e.postings or (p in st.seated) != (e.kind == "leave"):
                raise LedgerError(f"{where}: bad {e.kind} of {p!r}")
            if e.kind == "leave":
                st.seated.remove(p)
            else:
                st.seated = [q for q in st.players if q in st.seated or q == p]
            st.status_entry[p] = e.id
            st.history.setdefault(p, []).append(e.id)
        elif e.kind == "session_end":
            if e.postings:
                raise LedgerError(f"{where}: session_end moves coins")
            st.ended_by = e.id
        elif e.kind == "buy_in":
            p = known(player)
            only(bank(p), stack(p))
            if e.postings[stack(p)] <= 0:
                raise LedgerError(f"{where}: a buy-in must give coins")
        elif e.kind == "loan":
            p = known(player)
            only(loan(p), stack(p))
            if e.postings[stack(p)] <= 0:
                raise LedgerError(f"{where}: a loan must give coins")
        elif e.kind == "repayment":
            p = known(player)
            only(loan(p), stack(p))
            if e.postings[stack(p)] >= 0:
                raise LedgerError(f"{where}: a repayment must take coins")
        elif e.kind == "cash_out":
            p = known(player)
            only(bank(p), stack(p))
            if e.postings[stack(p)] >= 0:
                raise LedgerError(f"{where}: a cash-out must take coins")
        else:
            # a game entry (ruling) or the end split: only stacks of seated players and the pot
            for a in accounts:
                if a == POT:
                    continue
                if not a.startswith("stack:") or a[6:] not in st.seated:
                    raise LedgerError(f"{where}: a {e.kind} entry may move only seated stacks and the pot, not {a}")
            if e.kind == "end_split" and (e.postings.get(POT, 0) >= 0 or st.pot + e.postings[POT] != 0):
                raise LedgerError(f"{where}: the end split must empty the pot")
            r = e.meta.get("round")
            if e.kind in MONEY_KINDS - {"end_split"} or e.kind in STATUS_KINDS:
                raise LedgerError(f"{where}: misplaced {e.kind}")
            if e.kind != "end_split":
                if not _is_int(r) or r < 1:
                    raise LedgerError(f"{where}: a game entry needs a round number")
        r = e.meta.get("round")
        if _is_int(r):
            if r not in st.rounds:
                st.rounds[r] = []
                st.round_ts[r] = e.ts
            st.rounds[r].append(e.id)

    for a, v in e.postings.items():
        st.balances[a] = st.balances.get(a, 0) + v
        nv = st.balances[a]
        if a.startswith("stack:") and nv < 0:
            raise LedgerError(f"{where}: {a[6:]}'s stack would be {nv}")
        if a == POT and nv < 0:
            raise LedgerError(f"{where}: the pot would be {nv}")
        if a.startswith("loan:") and nv > 0:
            raise LedgerError(f"{where}: {a[5:]} would have repaid more than was lent")
        if not (a == POT or a.split(":", 1)[0] in ("stack", "bank", "loan")):
            raise LedgerError(f"{where}: unknown account {a!r}")
        if abs(nv) > COIN_MAX:
            raise LedgerError(f"{where}: {a} would be {nv}, beyond the ledger's range of {COIN_MAX} coins")
    st.by_id[e.id] = e
    st.last_id = e.id
    st.head = e.hash
    st.last_action = action


def _undo_status(st: State, p: str, target: Entry) -> None:
    hist = st.history[p]
    hist.remove(target.id)
    st.status_entry[p] = hist[-1]
    if target.kind == "leave":
        st.seated = [q for q in st.players if q in st.seated or q == p]
    else:  # rejoin undone: away again
        st.seated.remove(p)


def validate_ruling(ruling: Any) -> dict[str, Any]:
    """Check a ruling's shape and arithmetic before anything is written. Errors name the place."""
    if not isinstance(ruling, dict):
        raise LedgerError(f"ruling: a JSON object, got {type(ruling).__name__}")
    players = ruling.get("players")
    if not isinstance(players, list) or not players:
        raise LedgerError("ruling.players: a non-empty list of names")
    for i, p in enumerate(players):
        check_name(p, f"ruling.players[{i}]")
    if len(set(players)) != len(players):
        raise LedgerError("ruling.players: a name is listed twice")
    sb = ruling.get("stacks_before")
    if not isinstance(sb, dict) or set(sb) != set(players) or not all(
            _is_int(v) and abs(v) <= COIN_MAX for v in sb.values()):
        raise LedgerError("ruling.stacks_before: whole coins for exactly the ruling's players")
    pcb = ruling.get("pot_carry_before")
    if not _is_int(pcb) or not 0 <= pcb <= COIN_MAX:
        raise LedgerError(f"ruling.pot_carry_before: a whole number >= 0, got {pcb!r}")
    entries = ruling.get("entries")
    if not isinstance(entries, list):
        raise LedgerError("ruling.entries: a list")
    out = []
    totals = {p: 0 for p in players}
    pot_total = 0
    for i, e in enumerate(entries):
        w = f"ruling.entries[{i}]"
        if not isinstance(e, dict):
            raise LedgerError(f"{w}: an object")
        kind = e.get("kind")
        if not isinstance(kind, str) or not _KIND_RE.match(kind) or kind in LEDGER_KINDS or kind == "round":
            raise LedgerError(f"{w}.kind: {kind!r} is not a game entry kind")
        memo = e.get("memo", "")
        if not isinstance(memo, str) or len(memo) > inputs.TEXT_MAX or not memo.isprintable():
            raise LedgerError(f"{w}.memo: printable text of at most {inputs.TEXT_MAX} characters")
        postings = e.get("postings")
        if not isinstance(postings, dict):
            raise LedgerError(f"{w}.postings: an object of account -> coins")
        clean = {}
        for acct, v in postings.items():
            if acct != POT and acct not in totals:
                raise LedgerError(f"{w}.postings: {acct!r} is neither a ruling player nor 'pot'")
            if not _is_int(v) or abs(v) > COIN_MAX:
                raise LedgerError(f"{w}.postings.{acct}: whole coins within ±{COIN_MAX}, got {inputs.short(v)}")
            if v:
                clean[acct] = v
                if acct == POT:
                    pot_total += v
                else:
                    totals[acct] += v
        s = sum(clean.values())
        if s != 0:
            raise LedgerError(f"{w}.postings: sum to {s}, not 0")
        out.append({"kind": kind, "postings": clean, "memo": memo})
    if "stacks" in ruling:
        want = {p: sb[p] + totals[p] for p in players}
        if ruling["stacks"] != want:
            raise LedgerError("ruling.stacks: does not equal stacks_before plus the postings")
    if "pot_carry" in ruling and ruling["pot_carry"] != pcb + pot_total:
        raise LedgerError("ruling.pot_carry: does not equal pot_carry_before plus the pot postings")
    return {"players": list(players), "stacks_before": dict(sb), "pot_carry_before": pcb, "entries": out}
