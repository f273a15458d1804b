"""Subcommands of `pirate-table`; each module has register(subparsers)."""
