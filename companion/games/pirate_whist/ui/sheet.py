"""The score sheet: one row per round of the plan (cards, dealer), each player's bid beside tricks won, the
round's score and the running total; tap a played round to edit it. CSV export."""

from __future__ import annotations

from kivy.uix.screenmanager import Screen

from companion.games.pirate_whist.ui.common import GOLD, PALE, RED, app, export_csv, header, sheet_table, whist
from companion.ui.widgets import FlatButton, label


class WhistSheetScreen(Screen):
    def allowed(self):
        """The nav bar's "Scores" works during a Pirate Whist game only."""
        s, m = whist()
        return (True, "") if s is not None else (False, "The score sheet is for a Pirate Whist game.")

    def edit(self, number):
        app().screens["whist_edit"].open(number)

    def export(self):
        s, m = whist()
        if s is None:
            return
        try:
            path = export_csv(s)
        except OSError as exc:
            app().set_status(f"CSV export failed: {exc}", error=True)
            return
        app().last_export = path
        app().set_status(f"Score sheet exported to {path}")

    def back(self):
        app().go_hand()

    def refresh(self):
        ids = self.ids
        grid = ids.grid
        grid.clear_widgets()
        s, m = whist()
        ids.export.disabled = s is None
        if s is None:
            ids.header.text = "Pirate Whist"
            ids.note.text = "Start a Pirate Whist game first."
            grid.cols = 1
            return
        t = sheet_table(s)
        ids.back.text = "The Captain" if s.game_over() else "Back to the round"
        ids.header.text = header(s)
        ids.note.text = "Each cell: bid / won, score, total.  Tap a played round's number to edit it."
        players = list(t.players)
        grid.cols = 3 + len(players)
        for h in ("Rd", "Cards", "Dealer", *players):
            grid.add_widget(label(h, "18sp", bold=True, color=GOLD))
        played_rows = set(range(1, len(s.history) + 1))
        for row in t.sheet():
            n = row["round"]
            if n in played_rows:
                b = FlatButton(text=str(n), font_size="20sp", tag=f"whist:edit:{n}")
                b.bind(on_press=lambda b, n=n: self.edit(n))
                grid.add_widget(b)
            else:
                now = t.now()
                current = now.get("round") == n and now.get("phase") != "over"
                grid.add_widget(label(f"{n} now" if current else str(n), "18sp", bold=current,
                                      color=GOLD if current else PALE))
            grid.add_widget(label(str(row["cards"]), "18sp", color=PALE))
            grid.add_widget(label(row["dealer"], "16sp", color=PALE))
            for p in players:
                if row["played"]:
                    sc = row["scores"][p]
                    grid.add_widget(label(f"{row['bids'][p]}/{row['won'][p]}  {sc:+d}  ={row['totals'][p]}",
                                          "16sp", color=PALE if sc > 0 else RED))
                else:
                    grid.add_widget(label("", "16sp"))
        tot = t.totals()
        grid.add_widget(label("Total", "18sp", bold=True, color=GOLD))
        grid.add_widget(label("", "16sp"))
        grid.add_widget(label("", "16sp"))
        for p in players:
            grid.add_widget(label(str(tot[p]), "22sp", bold=True, color=GOLD))
