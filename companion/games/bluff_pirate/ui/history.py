"""The race's turn-by-turn history (public lines only: never an unpicked vote or an unrevealed card).
Layout in history.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.bluff_pirate.ui.race import race_of


class BluffPirateHistoryScreen(Screen):
    def refresh(self):
        app = App.get_running_app()
        t = race_of(app)
        lines = t.history if t is not None else []
        past = app.session.history_lines() if getattr(app, "session", None) is not None and t is not None else []
        head = ["Races:"] + past + [""] if past else []
        self.ids.lines.text = "\n".join(head + ["This race, latest first:"] + (lines[::-1] or ["(no turn yet)"]))
