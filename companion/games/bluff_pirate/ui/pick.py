"""The setter picks the voter whose vote is shown; only that vote and the face-down cards are revealed, on the
race screen (with an animation and words). Layout in pick.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.metrics import dp
from kivy.uix.screenmanager import Screen

from companion.games.bluff_pirate.model import Intent
from companion.games.bluff_pirate.ui.race import race_of
from companion.ui.widgets import FlatButton


def _app():
    return App.get_running_app()


class BluffPiratePickScreen(Screen):
    def refresh(self):
        self.ids.voters.clear_widgets()
        t = race_of(_app())
        if t is None or t.step != "pick":
            self.ids.title.text = "No vote to reveal now."
            return
        v = t.public_view()["set"]
        self.ids.title.text = f"Every vote is in. {v['setter']}, whose vote do you look at?"
        self.ids.claim.text = (f"{v['setter']} laid {v['size']}: {len(v['visible'])} {v['visible'][0]} face up, "
                               f"{v['hidden_count']} face down.")
        for p in v["voters"]:
            b = FlatButton(text=p, tag=f"bp:pick:{p}", font_size="30sp", size_hint_y=None, height=dp(80))
            b.bind(on_press=lambda b, p=p: self.pick(p))
            self.ids.voters.add_widget(b)

    def pick(self, voter):
        _app().act(Intent("pick", (voter,)))
