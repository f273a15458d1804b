"""`pirate-table`: one console script, one subcommand per capability.

Each module named in COMMANDS has ``register(subparsers)`` which adds its subcommand and sets ``func``.
Those modules import only light things at import time, so ``pirate-table --help`` stays fast; heavy
imports (kivy, cv2, onnxruntime, serial) happen inside the command functions.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from companion.errors import PirateTableError

COMMANDS = [
    "companion.commands.referee",
    "companion.commands.app",
    "companion.commands.odds",
    "companion.commands.ledger",
    "hardware.cli",
    "vision.cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pirate-table",
        description="Pirate Table: referee, ledger, camera and CALL buttons for a real card table.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except PirateTableError as exc:
        print(f"pirate-table: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # e.g. `pirate-table referee x.json | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
