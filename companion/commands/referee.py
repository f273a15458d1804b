"""`pirate-table referee HAND.json`: rule a hand record and print the ruling as JSON."""

from __future__ import annotations

import argparse
import json
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "referee",
        help="rule a hand/round record (JSON) and print the ruling (JSON)",
        description="Rule a hand record and print the ruling as JSON. A malformed record is refused "
        "with a one-line error and exit code 2.",
    )
    p.add_argument("record", nargs="?", help="the record file (JSON); see README 'Hand records'")
    p.add_argument("--demo", nargs="?", const="", metavar="GAME",
                   help="rule the example record of GAME (a registered game; default: the first game) and print it")
    p.add_argument(
        "--ledger",
        metavar="FILE.db",
        help="rule the record against this ledger's stacks and pot and apply the ruling to it atomically "
        "(all entries or none); a record that states other stacks or pot is refused",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from companion import records

    if args.demo is not None:
        from companion.games import registry

        from companion.errors import RecordError

        try:
            spec = registry.get(args.demo or registry.DEFAULT_GAME)
        except RecordError as exc:
            raise RecordError(f"--demo: {str(exc).removeprefix('game: ')}") from None
        record = spec.demo_record()
    elif args.record:
        record = records.load_record(args.record)
    else:
        from companion.errors import PirateTableError

        raise PirateTableError("referee: give a record file or --demo")
    if args.ledger:
        return _with_ledger(args.ledger, record)
    ruling = records.rule_record(record)
    json.dump(ruling, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


def _with_ledger(path: str, record: dict) -> int:
    """Fill the record's stacks and pot from the ledger, rule it, apply the ruling in one transaction."""
    import sqlite3

    from companion import records
    from companion.ledger import Ledger, LedgerError

    try:
        with Ledger.open(path) as led:
            record = led.record_for(record)
            ruling = records.rule_record(record)
            entries = led.apply_ruling(ruling)
    except sqlite3.Error as exc:
        raise LedgerError(f"{path}: database error: {exc}") from None
    except UnicodeDecodeError:  # an SQLite message quoting damaged bytes
        raise LedgerError(f"{path}: database error: the file is damaged (text that is not UTF-8)") from None
    ruling["ledger"] = {"file": path, "entries": [e.id for e in entries], "head": entries[-1].hash}
    json.dump(ruling, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0
