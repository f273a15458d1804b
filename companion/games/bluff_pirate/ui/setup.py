"""Set up a race: the players in turn order (the youngest first; tap a name to start with them) and the track
length (the board's default, 30). Layout in setup.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.metrics import dp
from kivy.uix.screenmanager import Screen

from companion.games.bluff_pirate.rules import DEFAULT_TRACK, MAX_PLAYERS, MIN_PLAYERS
from companion.ui.widgets import FlatButton


class BluffPirateSetupScreen(Screen):
    players: list

    def on_kv_post(self, base):
        self.players = []
        self.ids.track.value = DEFAULT_TRACK

    def setup(self, players):
        self.players = list(players)
        self.refresh()

    def refresh(self):
        box = self.ids.order
        box.clear_widgets()
        for k, p in enumerate(self.players):
            b = FlatButton(text=f"{k + 1}. {p}", tag=f"bp:first:{p}", size_hint_y=None, height=dp(52))
            b.bind(on_press=lambda b, k=k: self.first(k))
            box.add_widget(b)
        n = len(self.players)
        ok = MIN_PLAYERS <= n <= MAX_PLAYERS
        self.ids.note.text = ("Turn order, clockwise from the youngest. Tap a name to start with them." if ok else
                              f"Bluff Pirate is for {MIN_PLAYERS}-{MAX_PLAYERS} players (now {n}): "
                              "go back and change the names.")
        self.ids.start.disabled = not ok

    def first(self, k):
        self.players = self.players[k:] + self.players[:k]
        self.refresh()

    def start(self):
        App.get_running_app().new_session(players=list(self.players), game="bluff-pirate",
                                          options={"track": int(self.ids.track.value)})
