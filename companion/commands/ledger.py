"""`pirate-table ledger FILE.db ACTION ...`: the table's chip ledger (see docs/ledger.md)."""

from __future__ import annotations

import argparse
import json
import sys

from companion.inputs import COIN_MAX, cli_int, cli_text

COINS = cli_int(1, COIN_MAX)

ACTIONS = "new, show, table, log, verify, settle, export, import, loan, repay, join, leave, rejoin, undo, end"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ledger",
        help="the chip ledger: buy-ins, loans, rounds, undo, standings, settle-up (SQLite file)",
        description="Keep a session's coins in a hash-chained SQLite ledger. Bad input: one-line error, "
        "exit code 2, nothing written.",
    )
    p.add_argument("file", type=cli_text(4096), help="the ledger file (SQLite), e.g. tonight.db")
    acts = p.add_subparsers(dest="action", metavar="ACTION", required=True, title=f"actions ({ACTIONS})")

    a = acts.add_parser("new", help="start a session in a new file")
    a.add_argument("--players", required=True, help="comma-separated names in seat order, e.g. A,B,C")
    a.add_argument("--buy-in", type=COINS, default=50, help="coins each player buys in with (default 50)")
    limit = a.add_mutually_exclusive_group()
    limit.add_argument("--minutes", type=cli_int(1, 10_000), help="fixed duration of the session")
    limit.add_argument("--rounds", type=cli_int(1, 1_000_000), help="fixed number of rounds (applied rulings)")

    a = acts.add_parser("show", help="balances and standings")
    a.add_argument("--json", action="store_true", help="print JSON")
    acts.add_parser("table", help="JSON the referee rules against: seated players, stacks, pot")
    a = acts.add_parser("log", help="every entry")
    a.add_argument("--json", action="store_true", help="print JSON lines")
    a = acts.add_parser("verify", help="recompute the hash chain and every invariant")
    a.add_argument("--expect-head", metavar="HASH", help="a head hash printed by an earlier write (64 or at least "
                   "16 hex digits): refuse if the chain no longer holds it (entries removed or rewritten)")
    a = acts.add_parser("settle", help="the fewest transfers that square everyone")
    a.add_argument("--json", action="store_true", help="print JSON")
    a = acts.add_parser("export", help="export every entry")
    a.add_argument("--csv", action="store_true", required=True, help="as CSV (one row per posting)")
    a.add_argument("-o", "--output", type=cli_text(4096), help="file to write (default: stdout)")
    a.add_argument("--good", action="store_true", help="only the entries before the first damaged one (to rescue "
                   "a ledger that `verify` refuses: import the result into a new file)")
    a = acts.add_parser("import", help="build this (new) ledger file from an exported CSV")
    a.add_argument("--csv", required=True, type=cli_text(4096), metavar="FILE.csv",
                   help="the CSV to import ('-' for stdin)")
    for name, text in (("loan", "the bank lends PLAYER N coins"), ("repay", "PLAYER repays N coins of loans")):
        a = acts.add_parser(name, help=text)
        a.add_argument("player")
        a.add_argument("coins", type=COINS)
    for name, text in (("join", "a new player sits down and buys in"), ("rejoin", "a player who left buys in again")):
        a = acts.add_parser(name, help=text)
        a.add_argument("player")
        a.add_argument("--buy-in", type=COINS, help="coins (default: the session's buy-in)")
    a = acts.add_parser("leave", help="a player repays what they can, cashes out and leaves")
    a.add_argument("player")
    a = acts.add_parser("undo", help="reverse one entry, or the latest action (with no ID)")
    a.add_argument("entry", nargs="?", type=cli_int(1, 2**62), help="entry id (see `log`)")
    acts.add_parser("end", help="end the session (the pot left is split among the seated players)")
    p.set_defaults(func=run)


def _print_entries(entries) -> None:
    for e in entries:
        moves = " ".join(f"{a}{v:+d}" for a, v in sorted(e.postings.items()))
        rev = f" (reverses {e.reverses})" if e.reverses else ""
        print(f"#{e.id} {e.kind}{rev}: {moves or '-'}  {e.memo}")


def _show(summary: dict) -> None:
    s = summary["session"]
    limit = f"{s['minutes']} minutes" if s.get("minutes") else f"{s['rounds']} rounds" if s.get("rounds") else "open"
    state = "ended" if summary["ended"] else ("time up" if summary["time_up"] else "in play")
    print(f"session started {s['started']}, {limit}, buy-in {s['buy_in']}: {state}; "
          f"{summary['rounds_played']} rounds played")
    print(f"{'player':<16}{'stack':>7}{'loans':>7}{'in':>7}{'out':>7}{'net':>7}")
    for p, v in summary["players"].items():
        mark = "" if v["seated"] else " (left)"
        print(f"{p + mark:<16}{v['stack']:>7}{v['loans']:>7}{v['bought_in']:>7}{v['cashed_out']:>7}{v['net']:>+7}")
    print(f"pot {summary['pot']}; {summary['entries']} entries; head {summary['head'][:16]}")


READ_ONLY = {"show", "table", "log", "verify", "settle", "export"}


def _head(led) -> None:
    """After every write: the new head hash (keep it; `verify --expect-head` proves nothing was removed)."""
    print(f"head {led.state().head}")


def _read_csv_arg(name: str) -> str:
    """The CSV to import, as text: strict UTF-8 (a binary file is refused with one line)."""
    from companion import inputs
    from companion.ledger import LedgerError
    from companion.ledger.csvio import MAX_CSV_BYTES

    try:
        if name == "-":
            raw = sys.stdin.buffer.read(MAX_CSV_BYTES + 1)
            if len(raw) > MAX_CSV_BYTES:
                raise LedgerError(f"stdin: larger than {MAX_CSV_BYTES // 2**20} MiB")
        else:
            raw = inputs.read_bytes(name, name, MAX_CSV_BYTES)
        return inputs.decode_text(raw, "stdin" if name == "-" else name)
    except inputs.RecordError as exc:
        raise LedgerError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from companion.ledger import Ledger, LedgerError

    try:
        return _run(args, Ledger)
    except sqlite3.Error as exc:
        raise LedgerError(f"{args.file}: database error: {exc}") from None
    except UnicodeDecodeError:  # an SQLite message quoting damaged bytes
        raise LedgerError(f"{args.file}: database error: the file is damaged (text that is not UTF-8)") from None
    except OSError as exc:
        raise LedgerError(f"{exc.filename or args.file}: {exc.strerror or exc}") from None


def _run(args: argparse.Namespace, Ledger) -> int:
    from companion.ledger import LedgerError

    if args.action == "new":
        players = [p.strip() for p in args.players.split(",")]
        with Ledger.create(args.file, players, args.buy_in, args.minutes, args.rounds) as led:
            _show(led.summary())
            _head(led)
        return 0
    if args.action == "import":
        from companion.ledger.csvio import import_csv

        text = _read_csv_arg(args.csv)
        with import_csv(text, args.file) as led:
            info = led.verify()
        print(f"imported {info['entries']} entries into {args.file}; verified")
        print(f"head {info['head']}")
        return 0

    with Ledger.open(args.file, readonly=args.action in READ_ONLY) as led:
        act = args.action
        if act == "show":
            summary = led.summary()
            if args.json:
                json.dump(summary, sys.stdout, indent=2)
                sys.stdout.write("\n")
            else:
                _show(summary)
        elif act == "table":
            json.dump(led.table(), sys.stdout, indent=2)
            sys.stdout.write("\n")
        elif act == "log":
            entries = led.entries()
            if args.json:
                for e in entries:
                    print(json.dumps(e.as_dict(), sort_keys=True))
            else:
                _print_entries(entries)
        elif act == "verify":
            try:
                info = led.verify(expect_head=args.expect_head)
            except LedgerError as exc:
                raise LedgerError(f"{args.file}: {exc}") from None
            since = ""
            if args.expect_head is not None:
                n = info["appended_since"]
                since = (f"; the expected head is the head" if n == 0 else
                         f"; the expected head is entry {info['expected_head_entry']}, {n} "
                         f"{'entry' if n == 1 else 'entries'} appended since")
            print(f"ok: {info['entries']} entries, chain head {info['head']}, {info['coins_on_table']} coins "
                  f"on the table, {info['rounds_played']} rounds{since}")
        elif act == "settle":
            transfers = led.settle()
            if args.json:
                json.dump([{"from": a, "to": b, "coins": n} for a, b, n in transfers], sys.stdout, indent=2)
                sys.stdout.write("\n")
            elif not transfers:
                print("everyone is square")
            else:
                for a, b, n in transfers:
                    print(f"{a} pays {b} {n}")
        elif act == "export":
            from companion.ledger.csvio import export_csv

            if args.output:
                _export_to_file(led, args.output, args.good)
            else:
                export_csv(led, sys.stdout, good_only=args.good)
        elif act == "loan":
            _print_entries(led.loan(args.player, args.coins))
            _head(led)
        elif act == "repay":
            _print_entries(led.repay(args.player, args.coins))
            _head(led)
        elif act == "join":
            _print_entries(led.join(args.player, args.buy_in))
            _head(led)
        elif act == "rejoin":
            _print_entries(led.rejoin(args.player, args.buy_in))
            _head(led)
        elif act == "leave":
            _print_entries(led.leave(args.player))
            _head(led)
        elif act == "undo":
            _print_entries(led.undo(args.entry))
            _head(led)
        elif act == "end":
            _print_entries(led.end())
            _show(led.summary())
            _head(led)
    return 0


def _export_to_file(led, output: str, good: bool) -> None:
    """Write the CSV beside its final name and rename it there only when whole (an existing file is replaced
    only by a complete export)."""
    import os
    import tempfile
    from pathlib import Path

    from companion.ledger import LedgerError
    from companion.ledger.csvio import export_csv

    out = Path(output)
    folder = out.parent if str(out.parent) else Path(".")
    if out.is_dir():
        raise LedgerError(f"{output}: is a folder")
    for side in ("", "-wal", "-shm", "-journal"):  # never write the CSV over the ledger itself
        try:
            same = out.exists() and os.path.samefile(out, led.path + side)
        except OSError:
            same = False
        if same:
            raise LedgerError(f"{output}: is the ledger file itself; export to another file")
    if not folder.is_dir():
        raise LedgerError(f"{output}: folder {folder} does not exist")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name[:40]}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise LedgerError(f"{output}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            n = export_csv(led, f, good_only=good)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, out)
    except OSError as exc:
        raise LedgerError(f"{output}: cannot write: {exc.strerror or exc}") from None
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    print(f"wrote {n} entries to {output}", file=sys.stderr)
