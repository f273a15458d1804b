"""The chip ledger: stacks, pot, loans, settle-up, CSV export (chip games). Layout in ledger.kv beside this module."""

from __future__ import annotations

import os

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.ui import services
from companion.ui.widgets import FlatToggle, label as _lab


def _app():
    return App.get_running_app()


class LedgerScreen(Screen):
    """Stacks, pot, loans (take / repay), standings net of loans, settle-up and CSV export (companion.ledger)."""

    loan_player = None

    def allowed(self):
        s = _app().session
        if s is not None and not s.uses_chips:
            return False, f"{s.spec.title} keeps a score sheet, not a chip ledger."
        return True, ""

    def pick(self, p):
        self.loan_player = p
        self.refresh()

    def loan(self, sign):
        _app().ledger_loan(self.loan_player, int(self.ids.loan_amount.value) * sign)

    def end_and_settle(self):
        _app().ledger_end()

    def export_csv(self):
        _app().ledger_export()

    def refresh(self):
        app = _app()
        s = app.session
        t = self.ids.table
        t.clear_widgets()
        seats = self.ids.loan_seats
        seats.clear_widgets()
        if s is None:
            return
        ok, msg = services.ledger_status()
        has = ok and s.ledger_path is not None
        for w in (self.ids.take_loan, self.ids.repay, self.ids.end_settle, self.ids.export):
            w.disabled = not has
        if not has:
            self.ids.note.text = msg if not ok else "This session was started without a ledger."
            self.ids.settle.text = ""
            return
        with s.ledger() as led:
            summ = led.summary()
            ended = summ["ended"]
            transfers = led.settle() if summ["pot"] == 0 else None
        h = s.hand
        booked = len(s.history)
        pending = h is not None and h.phase == "over"
        self.ids.note.text = (f"Ledger {os.path.basename(s.ledger_path)}: {booked} hands booked"
                              + (", the ruled hand is booked on 'Next hand'" if pending else "")
                              + (".  Session ended." if ended else "."))
        for head in ("player", "stack", "loans", "net", ""):
            t.add_widget(_lab(head, "20sp", bold=True, color=(0.75, 0.85, 0.85, 1)))
        for p in s.players:
            st = summ["players"][p]
            net = st["net"]
            col = (0.45, 0.85, 0.45, 1) if net > 0 else (0.95, 0.45, 0.40, 1) if net < 0 else (1, 1, 1, 1)
            t.add_widget(_lab(p, "22sp", bold=True))
            t.add_widget(_lab(str(st["stack"]), "22sp"))
            t.add_widget(_lab(str(st["loans"]) if st["loans"] else "-", "22sp"))
            t.add_widget(_lab(f"{net:+d}", "24sp", bold=True, color=col))
            t.add_widget(_lab("", "18sp"))
        t.add_widget(_lab("pot", "22sp", bold=True))
        t.add_widget(_lab(str(summ["pot"]), "22sp"))
        for _ in range(3):
            t.add_widget(_lab("", "22sp"))
        if transfers is None:
            self.ids.settle.text = (f"Settle-up: the pot holds {summ['pot']} coins; ending the session splits "
                                    f"them among the players first.")
        elif transfers:
            self.ids.settle.text = "Settle-up:\n" + "\n".join(f"{a} pays {b} {n}" for a, b, n in transfers)
        else:
            self.ids.settle.text = "Settle-up: everyone is square."
        if self.loan_player not in s.players:
            self.loan_player = s.players[0]
        for p in s.players:
            b = FlatToggle(text=p, group="loan_seat", tag=f"loan:{p}",
                           state="down" if p == self.loan_player else "normal")
            b.bind(on_press=lambda b, p=p: self.pick(p))
            seats.add_widget(b)
        between = h is None or not h.moves
        self.ids.take_loan.disabled = self.ids.repay.disabled = ended or not between
        self.ids.end_settle.disabled = ended or not between
