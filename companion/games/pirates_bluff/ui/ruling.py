"""Pirate's Bluff: the ruling of the hand (stacks before, change, after). Layout in ruling.kv beside this module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.pirates_bluff import SPEC
from companion.games.pirates_bluff.rules import bid_name
from companion.ui.widgets import label as _lab


def _app():
    return App.get_running_app()


class RulingScreen(Screen):
    def refresh(self):
        app = _app()
        if app.session is None or app.session.game != SPEC.id:
            return  # no Pirate's Bluff session: nothing to show
        r = app.session.current_ruling()
        if r is None:
            return
        fb = r["final_bid"]
        bid = bid_name(fb["quantity"], fb["rank"])
        if r["end"] == "countdown":
            self.ids.banner.text = f"Dead! {' & '.join(r['winners'])} takes the pot ({bid})"
        else:
            verdict = "HOLDS" if r["bid_holds"] else "FAILS"
            self.ids.banner.text = f"{bid} {verdict}: {r['count']} in play"
        memos = [e["memo"] for e in r["entries"] if e["kind"] != "ante"]
        self.ids.memo.text = "\n".join(memos + r["flags"][-2:])
        t = self.ids.table
        t.clear_widgets()
        for head in ("", "before", "change", "after"):
            t.add_widget(_lab(head, "20sp", bold=True, color=(0.75, 0.85, 0.85, 1)))
        for p in r["players"]:
            before, after = r["stacks_before"][p], r["stacks"][p]
            d = after - before
            col = (0.45, 0.85, 0.45, 1) if d > 0 else (0.95, 0.45, 0.40, 1) if d < 0 else (1, 1, 1, 1)
            t.add_widget(_lab(p, "22sp", bold=True))
            t.add_widget(_lab(str(before), "22sp"))
            t.add_widget(_lab(f"{d:+d}", "24sp", bold=True, color=col))
            t.add_widget(_lab(str(after) + ("  (short)" if after < 0 else ""), "22sp"))
        t.add_widget(_lab("pot", "22sp", bold=True))
        t.add_widget(_lab(str(r["pot_carry_before"]), "22sp"))
        t.add_widget(_lab(f"{r['pot_carry'] - r['pot_carry_before']:+d}", "24sp"))
        t.add_widget(_lab(str(r["pot_carry"]), "22sp"))
