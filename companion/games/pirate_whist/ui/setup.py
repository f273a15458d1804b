"""Set-up: seats (reorder), maximum hand size with its limit, cut for the deal or choose the dealer, the hook
option, counts or trick by trick. Starts the session with ``app.new_session``."""

from __future__ import annotations

import random

from kivy.uix.screenmanager import Screen

from companion.games.pirate_whist import rules
from companion.games.pirate_whist.table import NAME_MAX, cut_for_deal
from companion.games.pirate_whist.ui.common import SYMBOL_FONT, app
from companion.ui.widgets import FlatButton, FlatToggle, label


class WhistSetupScreen(Screen):
    players: list[str] = []
    dealer: str | None = None  # chosen; None: cut for the deal
    cut: list = []
    cut_dealer: str | None = None

    def setup(self, players):
        """The names typed on the start screen, in seat order."""
        self.players = [p.strip() for p in players]
        self.dealer = None
        self.cut, self.cut_dealer = [], None
        self.ids.max_cards.value = min(7, self.limit())
        self.refresh()

    def limit(self) -> int:
        return rules.max_cards_limit(max(2, len(self.players)))

    def move(self, i, step):
        j = i + step
        if 0 <= j < len(self.players):
            self.players[i], self.players[j] = self.players[j], self.players[i]
            self.cut, self.cut_dealer = [], None
            self.refresh()

    def choose_dealer(self, p):
        self.dealer = p
        self.refresh()

    def cut_for_deal(self, rng=None):
        self.dealer = None
        self.cut, self.cut_dealer = cut_for_deal(self.players, rng or random.Random())
        self.refresh()

    def refresh(self):
        ids = self.ids
        n = len(self.players)
        limit = self.limit()
        ids.max_cards.maximum = limit
        ids.max_cards.value = max(1, min(int(ids.max_cards.value), limit))
        m = int(ids.max_cards.value)
        ids.limit.text = (f"Limit {limit} cards for {n} players (52 / {n}).  "
                          f"Plan: {m}..1..{m}, {2 * m - 1} rounds.") if n else ""
        ids.seats.clear_widgets()
        for i, p in enumerate(self.players):
            ids.seats.add_widget(label(f"{i + 1}. {p}", "22sp", halign="left"))
            up = FlatButton(text="\u2191", tag=f"whist:seat-up:{i}", disabled=i == 0, font_name=SYMBOL_FONT)
            up.bind(on_press=lambda b, i=i: self.move(i, -1))
            down = FlatButton(text="\u2193", tag=f"whist:seat-down:{i}", disabled=i == n - 1,
                              font_name=SYMBOL_FONT)
            down.bind(on_press=lambda b, i=i: self.move(i, 1))
            ids.seats.add_widget(up)
            ids.seats.add_widget(down)
        ids.dealers.clear_widgets()
        for p in self.players:
            b = FlatToggle(text=p, group="whist_dealer", tag=f"whist:dealer:{p}",
                           state="down" if p == self.dealer else "normal")
            b.bind(on_press=lambda b, p=p: self.choose_dealer(p))
            ids.dealers.add_widget(b)
        if self.dealer:
            ids.cut_text.text = f"{self.dealer} deals first (chosen)."
        elif self.cut:
            rounds = ["  ".join(f"{p} {c.display()}" for p, c in draws) for draws in self.cut]
            ids.cut_text.text = ("Cut: " + "   |   again: ".join(rounds)
                                 + f"\nLowest card deals: {self.cut_dealer} deals first.")
        else:
            ids.cut_text.text = "Cut for the deal (lowest card deals) or tap who deals first."
        bad = [p for p in self.players if rules.name_problem(p) or len(p) > NAME_MAX]
        ids.start.disabled = n < 2 or bool(bad) or not (self.dealer or self.cut_dealer)
        ids.problem.text = (f"Fix the name {bad[0]!r} on the Session screen (1-{NAME_MAX} letters)." if bad
                            else "")

    def start(self):
        dealer = self.dealer or self.cut_dealer
        if dealer is None:
            return
        options = {"max_cards": int(self.ids.max_cards.value), "first_dealer": dealer,
                   "hook": self.ids.hook.state == "down",
                   "mode": "tricks" if self.ids.mode_tricks.state == "down" else "counts"}
        if not self.dealer and self.cut:
            options["cut"] = [[[p, str(c)] for p, c in draws] for draws in self.cut]
        app().new_session(players=list(self.players), game="pirate-whist", options=options)
