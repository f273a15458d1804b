"""`pirate-table`: one console script, one subcommand per capability.

Each module named in COMMANDS has ``register(subparsers)`` which adds its subcommand and sets ``func``.
Those modules import only light things at import time, so ``pirate-table --help`` stays fast; heavy
imports (kivy, cv2, onnxruntime, serial) happen inside the command functions.
"""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import sys

from companion import __version__
from companion.errors import PirateTableError
from companion.inputs import OneLineParser

COMMANDS = [
    "companion.commands.referee",
    "companion.commands.app",
    "companion.commands.odds",
    "companion.commands.ledger",
    "hardware.cli",
    "vision.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(  # usage errors are one line, exit 2
        prog="pirate-table",
        description="Pirate Table: referee, ledger, camera and CALL buttons for a real card table.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def _error(text: str) -> int:
    stream = sys.stderr
    if type(stream).__module__.startswith("kivy"):  # Kivy's logger took stderr over: the user must see this line
        stream = sys.__stderr__
    # one line, whatever the message quotes (a key of a hostile record may hold a newline or an escape)
    text = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)
    print(f"pirate-table: error: {text}", file=stream)
    return 2


def main(argv: list[str] | None = None) -> int:
    """Run one command. Bad input of any kind ends here as one line on stderr and exit code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except PirateTableError as exc:
        return _error(str(exc))
    except sqlite3.Error as exc:  # a database file that is not what it claims (commands name their file)
        return _error(f"database: {exc}")
    except BrokenPipeError:  # e.g. `pirate-table referee x.json | head`
        sys.stderr.close()
        return 0
    except OSError as exc:  # a file or device refused (permissions, disk full, a folder given for a file)
        where = exc.filename if exc.filename is not None else "system"
        return _error(f"{where}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
