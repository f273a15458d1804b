"""Game end: the Captain (or the Captains, tied at the top), the totals, the points over the rounds as a plot,
and the CSV export of the score sheet."""

from __future__ import annotations

from kivy.uix.screenmanager import Screen

from companion.games.pirate_whist.ui.common import GOLD, PALE, app, sheet_table, whist
from companion.ui.widgets import label


class WhistEndScreen(Screen):
    def export(self):
        app().screens["whist_sheet"].export()

    def refresh(self):
        ids = self.ids
        ids.totals.clear_widgets()
        s, m = whist()
        ids.export.disabled = s is None
        if s is None:
            ids.captain.text = "Pirate Whist"
            ids.note.text = "Start a Pirate Whist game first."
            ids.plot.players, ids.plot.series = [], []
            return
        t = sheet_table(s)
        caps = t.captains() if s.game_over() else []
        n, total = len(s.history), m.setup.n_rounds
        if caps:
            ids.captain.text = ("Captain: " if len(caps) == 1 else "Captains: ") + " & ".join(caps)
            ids.note.text = f"After all {total} rounds."
        else:
            ids.captain.text = "No Captain yet"
            ids.note.text = f"{n} of {total} rounds played."
        tot = t.totals()
        for p in sorted(t.players, key=lambda p: -tot[p]):
            ids.totals.add_widget(label(p, "22sp", bold=p in caps, color=GOLD if p in caps else PALE))
            ids.totals.add_widget(label(str(tot[p]), "24sp", bold=True, color=GOLD if p in caps else PALE))
        ids.plot.players = []
        ids.plot.series = s.score_series()
        ids.plot.players = list(t.players)
