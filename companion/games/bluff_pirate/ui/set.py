"""Lay a set, in private: the setter picks the accessory shown face up (1 or 2 cards) and enters the cards laid
face down. The face-down cards are a secret (the app reveals them with the picked vote); the screen forgets
them as soon as the set is laid. Layout in set.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.errors import PirateTableError
from companion.games.bluff_pirate.deck import KINDS
from companion.games.bluff_pirate.model import Intent
from companion.games.bluff_pirate.rules import NOT_BLUFFING, LaySet, why_illegal
from companion.games.bluff_pirate.ui.race import race_of
from companion.ui.widgets import FlatButton, FlatToggle


def _app():
    return App.get_running_app()


class BluffPirateSetScreen(Screen):
    claim = None
    shown = 1
    hidden: list

    def on_kv_post(self, base):
        self.hidden = []
        for k in KINDS:
            b = FlatToggle(text=k, group="bp_claim", tag=f"bp:claim:{k}", font_size="19sp")
            b.bind(on_press=lambda b, k=k: self._claim(k))
            self.ids.claims.add_widget(b)
            h = FlatButton(text=k, tag=f"bp:hide:{k}", font_size="19sp", bg=(0.25, 0.22, 0.35, 1))
            h.bind(on_press=lambda b, k=k: self.add_hidden(k))
            self.ids.hides.add_widget(h)

    def refresh(self):
        t = race_of(_app())
        if t is None or t.step != "choose":
            self.forget()
            self.ids.title.text = "No set to lay now."
            self.ids.lay.disabled = True
            for b in self.ids.claims.children + self.ids.hides.children:
                b.disabled = True
            return
        for b in self.ids.claims.children:
            b.disabled = False
        me = t.current
        hand = t.state.hand(me)
        self.ids.title.text = f"Only {me} looks: lay a set ({hand} cards in hand)"
        for b in self.ids.claims.children:
            b.state = "down" if b.text == self.claim else "normal"
        self.ids.one.state = "down" if self.shown == 1 else "normal"
        self.ids.two.state = "down" if self.shown == 2 else "normal"
        n = self.shown + len(self.hidden)
        face_up = f"{self.shown} x {self.claim}" if self.claim else f"{self.shown} x (choose)"
        self.ids.summary.text = (f"Face up: {face_up}    Face down ({len(self.hidden)}): "
                                 + (", ".join(self.hidden) or "none yet") + f"    Set of {n}")
        for b in self.ids.hides.children:
            b.disabled = n >= 5
        self.ids.reason.text = self.why_not(t) or ""
        self.ids.lay.disabled = False                # an illegal set is refused with the rules' reason

    def why_not(self, t):
        """The rules' reason this set cannot be laid (None when it can): one truth, rules.py."""
        if self.claim is None:
            return "Choose the accessory shown face up."
        probe = LaySet((self.claim,) * self.shown, tuple(self.hidden), t.voters()[0], NOT_BLUFFING)
        return why_illegal(t.state, probe)

    def _claim(self, k):
        self.claim = k
        self.refresh()

    def set_shown(self, n):
        self.shown = n
        self.refresh()

    def add_hidden(self, k):
        if self.shown + len(self.hidden) < 5:
            self.hidden.append(k)
        self.refresh()

    def clear_hidden(self):
        self.hidden = []
        self.refresh()

    def lay(self):
        app = _app()
        visible, hidden = (self.claim,) * self.shown, tuple(self.hidden)
        if self.claim is None:
            app.set_status("Choose the accessory shown face up.", error=True)
            return
        try:
            ok = app.act(Intent("lay_set", (visible, hidden)))
        except PirateTableError as exc:  # pragma: no cover - act reports errors itself
            app.set_status(str(exc), error=True)
            return
        if ok:
            self.forget()

    def cancel(self):
        self.forget()
        _app().go("bp_race")

    def forget(self):
        """Drop what was entered (the hidden cards never stay on a screen)."""
        self.claim, self.shown, self.hidden = None, 1, []
        self.ids.summary.text = ""
        self.ids.reason.text = ""
        for b in self.ids.claims.children:
            b.state = "normal"

    def before_undo(self):
        self.forget()
