"""Pirate's Bluff: the showdown counts after a call. Layout in showdown.kv beside this module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.decks.pirates72 import rank_name
from companion.games.pirates_bluff import SPEC
from companion.games.pirates_bluff.rules import Showdown, bid_name, hand_count
from companion.ui.widgets import FlatButton, label as _lab


def _app():
    return App.get_running_app()


class ShowdownScreen(Screen):
    def ensure_started(self):
        if not hasattr(self, "counts"):
            self.start()

    def after_undo(self, action):
        if isinstance(action, Showdown):
            self.ensure_started()

    def start(self):
        s = _app().session
        self.counts = {p: [0, 0] for p in s.players}
        self.refresh()

    def bump(self, p, k, d):
        h = _app().session.hand
        n, w = self.counts[p]
        v = self.counts[p][k] + d
        if v < 0 or (n + w + d) > h.hand_size:
            return
        self.counts[p][k] = v
        self.refresh()

    def rule(self):
        _app().showdown({p: tuple(v) for p, v in self.counts.items()})

    def refresh(self):
        app = _app()
        if app.session is None or app.session.game != SPEC.id:
            return  # no Pirate's Bluff session: nothing to show
        h = app.session.hand
        if h is None or h.phase != "called":
            return
        q, r = h.standing_bid
        self.ids.banner.text = f"SHOWDOWN: {' & '.join(h.bidders)} bid {bid_name(q, r)}"
        if len(h.callers) > 1:
            self.ids.subline.text = f"{' and '.join(h.callers)} called at the same time."
        else:
            self.ids.subline.text = f"{h.callers[0]} called.  Count the {rank_name(r, plural=True)} and wilds."
        rows = self.ids.rows
        rows.clear_widgets()
        for head in ("Player", "", rank_name(r, plural=True), "", "", "Wilds", "", "Counts"):
            rows.add_widget(_lab(head, "20sp", bold=True, color=(0.75, 0.85, 0.85, 1)))
        total = 0
        for p in app.session.players:
            n, w = self.counts[p]
            c = hand_count(n, w, h.options.super_wilds)
            total += c
            rows.add_widget(_lab(p, "24sp", bold=True))
            for k, v in ((0, n), (1, w)):
                minus = FlatButton(text="-", font_size="28sp", tag=f"{p}:{'nw'[k]}-")
                minus.bind(on_press=lambda b, p=p, k=k: self.bump(p, k, -1))
                plus = FlatButton(text="+", font_size="28sp", tag=f"{p}:{'nw'[k]}+")
                plus.bind(on_press=lambda b, p=p, k=k: self.bump(p, k, 1))
                rows.add_widget(minus)
                rows.add_widget(_lab(str(v), "30sp", bold=True))
                rows.add_widget(plus)
            rows.add_widget(_lab(str(c), "30sp", bold=True, color=(0.98, 0.78, 0.25, 1)))
        self.ids.total.text = f"In play: {total} of {q}"
