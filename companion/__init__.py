"""Pirate Table: the pure rules library (games, records, ledger, odds) and the app around it."""

__version__ = "0.1.0"
