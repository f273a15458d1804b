"""The reveal: everyone's bid at once (one tap, when all are in), and with the hook rule the dealer's bid in the
open, the one forbidden number shown and disabled."""

from __future__ import annotations

from kivy.uix.screenmanager import Screen

from companion.games.pirate_whist.ui.common import GOLD, app, header, whist
from companion.ui.widgets import FlatButton, label


class WhistRevealScreen(Screen):
    def reveal(self):
        app().act({"e": "reveal"})

    def dealer_bid(self, n):
        s, m = whist()
        if m is None or m.round is None:
            return
        app().act({"e": "bid", "player": m.round.now()["dealer"], "bid": n})

    def refresh(self):
        ids = self.ids
        s, m = whist()
        t = m.round if m is not None else None
        ids.bids.clear_widgets()
        ids.pad.clear_widgets()
        ids.reveal.disabled = True
        ids.reveal.opacity = 0
        if t is None or t.phase not in ("reveal", "dealer-bid"):
            ids.header.text = header(s) if s is not None else "Pirate Whist"
            ids.big.text = "Nothing to reveal now." if s is not None else "Start a Pirate Whist game first."
            ids.note.text = ""
            return
        ids.header.text = t.header()
        if t.phase == "reveal":
            ids.big.text = "All bids are in."
            ids.note.text = "Everyone look: tap to show every bid at once."
            ids.reveal.disabled = False
            ids.reveal.opacity = 1
            return
        # the hook dealer bids in the open, after the others' bids are shown
        now = t.now()
        bids = t.state.round.bid_map
        for p in t.players:
            if p in bids:
                ids.bids.add_widget(label(p, "24sp", bold=True))
                ids.bids.add_widget(label(str(bids[p]), "34sp", bold=True, color=GOLD))
        total = sum(bids.values())
        forbidden = t.hook_forbidden()
        ids.big.text = f"{now['dealer']} (dealer) bids in the open"
        ids.note.text = (f"The others bid {total} for {now['cards']} tricks."
                         + (f"  Hook rule: {now['dealer']} may not bid {forbidden}." if forbidden is not None
                            else ""))
        for n in range(now["cards"] + 1):
            b = FlatButton(text=str(n), font_size="34sp", tag=f"whist:dealer-bid:{n}", disabled=n == forbidden)
            b.bind(on_press=lambda b, n=n: self.dealer_bid(n))
            ids.pad.add_widget(b)
