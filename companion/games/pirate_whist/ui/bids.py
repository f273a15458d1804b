"""Secret bids on the passed tablet: the screen is blank between players ("pass the tablet to Ben"); the player
opens their own bid pad, picks a number and confirms; the pad closes and blanks again. Only who is still to bid
is ever shown: no screen can show another player's bid before the reveal."""

from __future__ import annotations

from kivy.uix.screenmanager import Screen

from companion.games.pirate_whist.ui.common import app, header, whist
from companion.ui.widgets import FlatButton


class WhistBidScreen(Screen):
    bidder: str | None = None  # whose pad is open (None: the blank hand-off view)
    choice: int | None = None

    def start(self):
        self.bidder, self.choice = None, None

    def before_undo(self):
        self.start()

    def open_pad(self):
        s, m = whist()
        if m is None or m.round is None:
            return
        self.bidder = m.round.next_bidder()
        self.choice = None
        self.refresh()

    def hide(self):
        self.bidder, self.choice = None, None
        self.refresh()

    def pick(self, n):
        self.choice = n
        self.refresh()

    def confirm(self):
        if self.bidder is None or self.choice is None:
            return
        who, n = self.bidder, self.choice
        self.bidder, self.choice = None, None  # blank at once, whatever happens next
        app().act({"e": "bid", "player": who, "bid": n})
        self.refresh()

    def refresh(self):
        ids = self.ids
        s, m = whist()
        t = m.round if m is not None else None
        ids.pad.clear_widgets()
        if t is None or t.phase != "bid":
            self.bidder, self.choice = None, None
            ids.header.text = header(s) if s is not None else "Pirate Whist"
            ids.big.text = "No bids to take now." if s is not None else "Start a Pirate Whist game first."
            ids.small.text = ""
            ids.open.disabled = True
            ids.open.text = "Bid"
            ids.confirm.disabled = ids.hide.disabled = True
            ids.confirm.opacity = ids.hide.opacity = 0
            ids.undo.disabled = not (m is not None and m.can_undo())
            return
        ids.header.text = t.header()
        status = t.bid_status()
        done = [p for p in status["seats"] if p not in status["waiting"]]
        nxt = t.next_bidder()
        if self.bidder is not None and self.bidder != nxt:
            self.bidder, self.choice = None, None
        cards = t.now()["cards"]
        ids.small.text = ("Bid: " + (", ".join(done) if done else "nobody yet") + "      Still to bid: "
                          + ", ".join(status["waiting"])
                          + (f"      {t.now()['dealer']} (dealer) bids last, in the open" if m.setup.hook else ""))
        ids.undo.disabled = not m.can_undo()
        if self.bidder is None:  # the blank hand-off view: nothing of anyone's bid
            ids.big.text = f"Pass the tablet to {nxt}"
            ids.open.text = f"I am {nxt}: bid"
            ids.open.disabled = False
            ids.open.opacity = 1
            ids.confirm.disabled = ids.hide.disabled = True
            ids.confirm.opacity = ids.hide.opacity = 0
            return
        ids.big.text = f"{self.bidder}: how many tricks of {cards} will you take?"
        ids.open.disabled = True
        ids.open.opacity = 0
        for n in range(cards + 1):
            b = FlatButton(text=str(n), font_size="34sp", tag=f"whist:bid:{n}",
                           bg=(0.85, 0.60, 0.15, 1) if n == self.choice else (0.20, 0.32, 0.36, 1))
            b.bind(on_press=lambda b, n=n: self.pick(n))
            ids.pad.add_widget(b)
        ids.confirm.disabled = self.choice is None
        ids.confirm.text = "Confirm my bid" if self.choice is None else f"Bid {self.choice}: confirm"
        ids.confirm.opacity = ids.hide.opacity = 1
        ids.hide.disabled = False
