"""A counter reached the treasure islands: its player picks the island to land on, and the app (the treasure
tokens) turns that token over, with a short animation and words. Layout in land.kv."""

from __future__ import annotations

from kivy.animation import Animation
from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.bluff_pirate.model import Intent
from companion.games.bluff_pirate.ui.race import race_of


def _app():
    return App.get_running_app()


class BluffPirateLandScreen(Screen):
    def refresh(self):
        t = race_of(_app())
        if t is None or t.step != "land":
            self.ids.title.text = "Nobody is landing now."
            for b in (self.ids.i1, self.ids.i2):
                b.disabled = True
            return
        who = t.current
        self.ids.title.text = f"{who} reaches the treasure islands!"
        self.ids.words.text = (t.last_reveal.words + "\n" if t.last_reveal else "") + \
            f"{who}: on which island do you land? The app turns its token over."
        isl = t.islands_view()
        for k, b in enumerate((self.ids.i1, self.ids.i2)):
            b.disabled = isl[k] != "unknown"
            b.opacity = 1

    def land(self, island):
        b = (self.ids.i1, self.ids.i2)[island]
        anim = Animation(opacity=0.2, duration=0.25) + Animation(opacity=1, duration=0.25)
        anim.start(b)
        _app().act(Intent("land", (island,)))
