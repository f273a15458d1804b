"""What every Pirate Whist screen shares: the running app, the Whist session (or None), colours."""

from __future__ import annotations

from typing import Any

from kivy.app import App

GOLD = (0.98, 0.78, 0.25, 1)
PALE = (0.85, 0.90, 0.90, 1)
RED = (0.95, 0.40, 0.35, 1)
GREEN_BG = (0.15, 0.50, 0.30, 1)
RED_BG = (0.60, 0.18, 0.16, 1)
SUIT_COLOURS = {"S": (0.20, 0.22, 0.26, 1), "C": (0.20, 0.22, 0.26, 1), "H": (0.62, 0.16, 0.16, 1),
                "D": (0.62, 0.16, 0.16, 1)}


def app() -> Any:
    return App.get_running_app()


def whist() -> tuple[Any, Any] | tuple[None, None]:
    """(session, model) when the session in play is Pirate Whist, else (None, None)."""
    a = app()
    s = getattr(a, "session", None)
    if s is None or s.game != "pirate-whist":
        return None, None
    return s, s.model


def sheet_table(s: Any) -> Any:
    """The Whist table of the session: the finished rounds and the round in play."""
    return s.model.sheet_table(s.history)


def header(s: Any) -> str:
    """Round k of n, cards, dealer, leader (the plan is always visible)."""
    m = s.model
    if m.round is not None:
        return m.round.header()
    n = len(s.history)
    if n >= m.setup.n_rounds:
        return f"Game over after {m.setup.n_rounds} rounds"
    return m.round_intro(n + 1)


def export_csv(s: Any) -> Any:
    """Write the score sheet as CSV under the data folder's exports/ (whole or not at all); the path."""
    import os
    import time

    from companion.ui import services

    text = sheet_table(s).csv()
    out = services.data_dir() / "exports" / f"pirate-whist-{time.strftime('%Y%m%d-%H%M%S')}.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, out)
    return out

# Kivy ships DejaVu Sans beside Roboto; it has the suit symbols and arrows Roboto lacks.
SYMBOL_FONT = "data/fonts/DejaVuSans.ttf"
