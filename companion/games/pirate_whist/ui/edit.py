"""Edit a played round: each player's bid and tricks won, ruled again through the rules (a count that does not
add up is refused with the reason); the session's totals follow."""

from __future__ import annotations

from kivy.uix.screenmanager import Screen

from companion.errors import PirateTableError
from companion.games.pirate_whist.ui.common import GOLD, app, whist
from companion.ui.widgets import FlatButton, label


class WhistEditScreen(Screen):
    number: int | None = None  # 1-based round being edited
    bids: dict[str, int] = {}
    won: dict[str, int] = {}

    def open(self, number):
        s, m = whist()
        if s is None or not 1 <= number <= len(s.history):
            return
        r = s.history[number - 1]
        self.number, self.bids, self.won = number, dict(r["bids"]), dict(r["won"])
        app().go("whist_edit")

    def change(self, which, player, step):
        s, m = whist()
        if s is None or self.number is None:
            return
        cards = s.history[self.number - 1]["cards"]
        d = self.bids if which == "bid" else self.won
        d[player] = max(0, min(cards, d[player] + step))
        self.refresh()

    def save(self):
        s, m = whist()
        if s is None or self.number is None:
            return
        i = self.number - 1
        try:
            ruling = m.edit(s.history, i, self.bids, self.won)
            s.edit_round(i, ruling)
            m.history_changed(s.history)
        except PirateTableError as exc:
            app().set_status(f"Round {self.number} not changed: {exc}", error=True)
            return
        app().save()
        app().set_status(f"Round {self.number} corrected; totals recomputed.")
        self.number = None
        app().go("whist_sheet")

    def cancel(self):
        self.number = None
        app().go("whist_sheet")

    def refresh(self):
        ids = self.ids
        ids.grid.clear_widgets()
        s, m = whist()
        ids.save.disabled = True
        if s is None or self.number is None or self.number > len(s.history):
            ids.header.text = "Edit a round"
            ids.note.text = "Tap a played round's number on the score sheet."
            return
        r = s.history[self.number - 1]
        ids.header.text = (f"Edit round {self.number}: {r['cards']} card{'s' if r['cards'] != 1 else ''}, "
                           f"{r['dealer']} dealt")
        total = sum(self.won.values())
        ids.note.text = f"Tricks won add up to {total} of {r['cards']}."
        ids.save.disabled = total != r["cards"]
        for h in ("", "", "Bid", "", "", "Won", ""):
            ids.grid.add_widget(label(h, "18sp", bold=True, color=GOLD))
        for p in m.players:
            ids.grid.add_widget(label(p, "22sp", bold=True))
            for which, d in (("bid", self.bids), ("won", self.won)):
                minus = FlatButton(text="-", font_size="26sp", tag=f"whist:edit-{which}-:{p}")
                minus.bind(on_press=lambda b, w=which, p=p: self.change(w, p, -1))
                plus = FlatButton(text="+", font_size="26sp", tag=f"whist:edit-{which}+:{p}")
                plus.bind(on_press=lambda b, w=which, p=p: self.change(w, p, 1))
                ids.grid.add_widget(minus)
                ids.grid.add_widget(label(str(d[p]), "28sp", bold=True))
                ids.grid.add_widget(plus)
