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
    p.add_argument("file", help="the ledger file (SQLite), e.g. tonight.db")
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
    acts.add_parser("verify", help="recompute the hash chain and every invariant")
    a = acts.add_parser("settle", help="the fewest transfers that square everyone")
    a.add_argument("--json", action="store_true", help="print JSON")
    a = acts.add_parser("export", help="export every entry")
    a.add_argument("--csv", action="store_true", required=True, help="as CSV (one row per posting)")
    a.add_argument("-o", "--output", help="file to write (default: stdout)")
    a = acts.add_parser("import", help="build this (new) ledger file from an exported CSV")
    a.add_argument("--csv", required=True, metavar="FILE.csv", help="the CSV to import ('-' for stdin)")
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


def run(args: argparse.Namespace) -> int:
    import sqlite3

    from companion.ledger import Ledger, LedgerError

    try:
        return _run(args, Ledger)
    except sqlite3.Error as exc:
        raise LedgerError(f"{args.file}: database error: {exc}") from None


def _run(args: argparse.Namespace, Ledger) -> int:
    from companion.ledger import LedgerError

    if args.action == "new":
        players = [p.strip() for p in args.players.split(",")]
        with Ledger.create(args.file, players, args.buy_in, args.minutes, args.rounds) as led:
            _show(led.summary())
        return 0
    if args.action == "import":
        from companion.ledger.csvio import import_csv

        if args.csv == "-":
            led = import_csv(sys.stdin, args.file)
        else:
            try:
                with open(args.csv, encoding="utf-8", newline="") as f:
                    led = import_csv(f, args.file)
            except OSError as exc:
                raise LedgerError(f"{args.csv}: cannot read: {exc.strerror}") from None
        with led:
            info = led.verify()
        print(f"imported {info['entries']} entries into {args.file}; verified, head {info['head'][:16]}")
        return 0

    with Ledger.open(args.file) as led:
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
            info = led.verify()
            print(f"ok: {info['entries']} entries, chain head {info['head']}, {info['coins_on_table']} coins "
                  f"on the table, {info['rounds_played']} rounds")
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
                try:
                    with open(args.output, "w", encoding="utf-8", newline="") as f:
                        n = export_csv(led, f)
                except OSError as exc:
                    raise LedgerError(f"{args.output}: cannot write: {exc.strerror}") from None
                print(f"wrote {n} entries to {args.output}", file=sys.stderr)
            else:
                export_csv(led, sys.stdout)
        elif act == "loan":
            _print_entries(led.loan(args.player, args.coins))
        elif act == "repay":
            _print_entries(led.repay(args.player, args.coins))
        elif act == "join":
            _print_entries(led.join(args.player, args.buy_in))
        elif act == "rejoin":
            _print_entries(led.rejoin(args.player, args.buy_in))
        elif act == "leave":
            _print_entries(led.leave(args.player))
        elif act == "undo":
            _print_entries(led.undo(args.entry))
        elif act == "end":
            _print_entries(led.end())
            _show(led.summary())
    return 0
