"""Bluffing Battles set-up: the two players (who is shown first), the variant with a one-line explanation of
each, and who holds the red half in the one-deck variants. Layout in setup.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.bluffing_battles.rules import VARIANTS
from companion.ui.widgets import FlatToggle, label


class BattlesSetupScreen(Screen):
    variant = "two-decks"
    red = 0

    def on_kv_post(self, base):
        self.toggles = {}
        for v in VARIANTS.values():
            b = FlatToggle(text=v.id, group="bb_variant", allow_no_selection=False, tag=f"bb:variant:{v.id}",
                           size_hint_x=0.34, state="down" if v.id == self.variant else "normal")
            b.bind(on_press=lambda b, v=v.id: self.pick_variant(v))
            self.toggles[v.id] = b
            self.ids.variants.add_widget(b)
            self.ids.variants.add_widget(label(v.summary, "19sp", halign="left"))
        self.refresh()

    def setup(self, players):
        """The names typed on the start screen (the first two)."""
        names = [p for p in players if p.strip()][:2]
        for t, name in zip((self.ids.first, self.ids.second), names):
            t.text = name

    def swap(self):
        self.ids.first.text, self.ids.second.text = self.ids.second.text, self.ids.first.text
        self.red = 1 - self.red
        self.refresh()

    def pick_variant(self, v):
        self.variant = v
        self.refresh()

    def pick_red(self, i):
        self.red = i
        self.refresh()

    def players(self):
        return [self.ids.first.text.strip(), self.ids.second.text.strip()]

    def refresh(self):
        for vid, b in self.toggles.items():
            b.state = "down" if vid == self.variant else "normal"
        one = VARIANTS[self.variant].decks == 1
        a, b = self.players()
        self.ids.red0.text = f"{a or 'first'} red"
        self.ids.red1.text = f"{b or 'second'} red"
        for i, w in enumerate((self.ids.red0, self.ids.red1)):
            w.disabled = not one
            w.state = "down" if one and i == self.red else "normal"
        v = VARIANTS[self.variant]
        self.ids.explain.text = (f"{v.summary}  Hidden prizes per battle: {v.prizes}."
                                 + (f"  Limit: a score pile of {v.limit} or fewer cannot be reshuffled."
                                    if v.limit else ""))

    def start(self):
        App.get_running_app().new_session(players=self.players(), game="bluffing-battles",
                                          options={"variant": self.variant, "red": self.red})
