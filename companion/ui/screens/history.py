"""History: one line per finished round (written by the game's table model) and the stack / score plot. Layout in
history.kv beside this module."""

from __future__ import annotations

from kivy.app import App
from kivy.metrics import dp
from kivy.uix.label import Label
from kivy.uix.screenmanager import Screen

from companion.ui.widgets import label as _lab


def _app():
    return App.get_running_app()


class HistoryScreen(Screen):
    def refresh(self):
        s = _app().session
        box = self.ids.hands
        box.clear_widgets()
        if s is None:
            return
        lines = s.history_lines()  # one line per round, written by the game's table model
        if not lines:
            box.add_widget(_lab("No hand finished yet.", "20sp", size_hint_y=None, height=dp(48)))
        for line in lines:
            lab = Label(text=line, font_size="19sp", size_hint_y=None, halign="left", valign="top")
            lab.bind(width=lambda w, v: setattr(w, "text_size", (v, None)),
                     texture_size=lambda w, v: setattr(w, "height", v[1] + dp(8)))
            box.add_widget(lab)
        self.ids.plot.players = list(s.players)
        self.ids.plot.series = s.stack_series()
