"""The chip ledger's intents in the app (companion.ledger): loans, repayments, ending the session, CSV export.
Chip games only. A mixin of PirateTableApp."""

from __future__ import annotations

import os
from pathlib import Path

from companion.errors import PirateTableError
from companion.ui import services


class LedgerMixin:
    def _ledger_action(self, fn, done):
        try:
            fn()
        except PirateTableError as exc:
            self.set_status(str(exc), error=True)
            return
        self.save()
        self.set_status(done)
        for name in ("ledger", self.hand_screen_name()):
            self.screens[name].refresh()

    def ledger_loan(self, player, coins):
        if coins > 0:
            self._ledger_action(lambda: self.session.take_loan(player, coins),
                                f"The bank lends {player} {coins} coins.")
        else:
            self._ledger_action(lambda: self.session.repay(player, -coins), f"{player} repays {-coins} coins.")

    def ledger_end(self):
        def end():
            self.session._can_change_stacks()
            with self.session.ledger() as led:
                led.end()
                self.session._sync_from(led)
            self.session._restart_hand()
        self._ledger_action(end, "Session ended: the pot is split and the settle-up is shown.")

    def ledger_export(self):
        out = services.data_dir() / "exports" / (Path(self.session.ledger_path).stem + ".csv")
        out.parent.mkdir(parents=True, exist_ok=True)

        def export():
            from companion.ledger.csvio import export_csv_text

            with self.session.ledger() as led:
                text = export_csv_text(led)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, out)
        self._ledger_action(export, f"Exported the ledger to {out}")
        self.last_export = out
