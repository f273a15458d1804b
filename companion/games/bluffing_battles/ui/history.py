"""Bluffing Battles history: every fight and battle of the game in play, the battle in progress last, and the
games finished in this session. Layout in history.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.bluffing_battles import SPEC


class BattlesHistoryScreen(Screen):
    def refresh(self):
        s = App.get_running_app().session
        if s is None or s.spec is not SPEC:
            self.ids.title.text = "Bluffing Battles: history"
            self.ids.lines.text = "No Bluffing Battles game in play."
            return
        lines = []
        t = s.model.round
        if t is not None:
            hist = t.history()
            self.ids.title.text = (f"Game {len(s.history) + 1} ({t.variant.id}): {len(hist)} fights")
            lines += [h.text for h in reversed(hist)] or ["No fight yet."]
        else:
            self.ids.title.text = "Bluffing Battles: history"
        done = s.history_lines()
        if done:
            lines += ["", "Games finished:"] + done
        self.ids.lines.text = "\n".join(lines)
