"""Play: the revealed bids and "bids vs cards", then the tricks either as counts at the end of the round
(a stepper per player) or trick by trick (tap who won each trick; optionally enter each card, refused with the
rules' revoke warning; or read the trick laid in front of the seats with the camera: companion/games/pirate_whist/
camera.py). When the round is over: its scores and "Next round"."""

from __future__ import annotations

from kivy.uix.screenmanager import Screen

from companion.decks.standard52 import RANK_TEXT, SUIT_SYMBOLS
from companion.games.pirate_whist.ui.common import GOLD, PALE, RED, SUIT_COLOURS, SYMBOL_FONT, app, header, whist
from companion.ui.widgets import FlatButton, FlatToggle, label


class WhistPlayScreen(Screen):
    counts: dict[str, int] = {}
    rank: int | None = None
    warning: str = ""

    def on_kv_post(self, base):
        # The counts panel and the trick panel take turns in ``body`` (a hidden panel is out of the tree, so
        # none of its buttons can catch a touch meant for the other).
        self._panels = {"counts": self.ids.counts_box.__self__, "tricks": self.ids.tricks_box.__self__}
        self.ids.body.clear_widgets()
        for r in range(2, 15):
            b = FlatToggle(text=RANK_TEXT[r], group="whist_rank", font_size="26sp", tag=f"whist:rank:{RANK_TEXT[r]}")
            b.bind(on_press=lambda b, r=r: self.pick_rank(r))
            self.ids.ranks.add_widget(b)
        for suit in "SHDC":
            b = FlatButton(text=SUIT_SYMBOLS[suit], font_size="34sp", bg=SUIT_COLOURS[suit], tag=f"whist:suit:{suit}",
                           font_name=SYMBOL_FONT)
            b.bind(on_press=lambda b, suit=suit: self.pick_suit(suit))
            self.ids.suits.add_widget(b)

    def start(self):
        self.counts, self.rank, self.warning = {}, None, ""

    def before_undo(self):
        self.rank, self.warning = None, ""

    def set_mode(self, mode):
        s, m = whist()
        if m is not None:
            m.set_mode(mode)
            app().save()
        self.refresh()

    def change(self, player, step):
        s, m = whist()
        if m is None or m.round is None:
            return
        cards = m.round.now()["cards"] or 0
        self.counts[player] = max(0, min(cards, self.counts.get(player, 0) + step))
        self.refresh()

    def done_counts(self):
        s, m = whist()
        if m is None:
            return
        won = {p: self.counts.get(p, 0) for p in m.players}
        if app().act({"e": "counts", "won": won}):
            self.counts = {}

    def trick_to(self, player):
        self.warning = ""
        app().act({"e": "trick", "winner": player})

    def scan_request(self):
        """The camera reads the trick in front of the seats (trick by trick only; None otherwise)."""
        from companion.games.pirate_whist.camera import trick_request

        s, m = whist()
        t = m.round if m is not None else None
        return trick_request(t, seed=len(t.events) if t is not None else 0)

    def scan(self):
        self.warning = ""
        app().start_scan()

    def apply_scan(self, reading):
        """The trick the camera read: its cards entered in the order of play through the same check as a tap;
        the first that cannot be (unreadable, a revoke the camera saw) stops there, its reason shown (and returned,
        for the status line)."""
        from companion.games.pirate_whist.camera import plays_from_reading

        s, m = whist()
        if m is None or m.round is None or not reading.cards:
            return
        plan = plays_from_reading(m.round, reading.cards)
        for p, c in plan.plays:
            if not app().act({"e": "play", "player": p, "card": c}):
                break
        self.rank = None
        self.warning = plan.stop
        self.refresh()
        return plan.stop or None

    def pick_rank(self, r):
        self.rank = r
        self.refresh()

    def pick_suit(self, suit):
        s, m = whist()
        if m is None or m.round is None or self.rank is None:
            return
        t = m.round
        who = t.trick_view().get("to_play")
        card = f"{RANK_TEXT[self.rank]}{suit}"
        self.rank = None
        why = t.play_warning(who, card)
        if why:
            self.warning = ("Revoke! " if why.startswith("revoke") else "") + why
            app().set_status(self.warning, error=True)
            self.refresh()
            return
        self.warning = ""
        app().act({"e": "play", "player": who, "card": card})

    def refresh(self):
        ids = self.ids
        s, m = whist()
        for box in (ids.bids, ids.counts, ids.winners, ids.result):
            box.clear_widgets()
        ids.trick.text = ids.vs.text = ""
        ids.warning.text = self.warning
        t = m.round if m is not None else None
        ids.undo.disabled = not (m is not None and m.can_undo())
        ids.next_round.disabled = not (m is not None and m.round_over())
        ids.camera.disabled = t is None or t.mode != "tricks" or t.phase != "play"
        if t is None or (t.phase != "play" and not m.round_over()):
            ids.header.text = header(s) if s is not None else "Pirate Whist"
            ids.note.text = "Start a Pirate Whist game first." if s is None else "No round in play."
            self._show(counts=False, tricks=False)
            return
        if m.round_over():
            self._round_over(s, m)
            return
        ids.header.text = t.header()
        bids = t.bids()
        tv = t.trick_view()
        won = tv["won"]
        for h in ("", "bid", "won"):
            ids.bids.add_widget(_cell(h, "18sp", color=PALE))
        for p in t.players:
            ids.bids.add_widget(_cell(p, "21sp", bold=True, halign="left"))
            ids.bids.add_widget(_cell(str(bids[p]), "24sp", bold=True, color=GOLD))
            ids.bids.add_widget(_cell(str(won[p]) if t.mode == "tricks" else "", "22sp"))
        vs = t.bids_vs_cards()
        ids.vs.text = f"Bids vs cards:\n{vs['text']}"
        ids.mode_counts.state = "down" if t.mode == "counts" else "normal"
        ids.mode_tricks.state = "down" if t.mode == "tricks" else "normal"
        entered = tv["trick"] > 1 or tv["cards"]
        ids.mode_counts.disabled = bool(entered)
        if t.mode == "counts" and not entered:
            self._show(counts=True, tricks=False)
            cards = vs["cards"]
            total = 0
            for p in t.players:
                n = self.counts.get(p, 0)
                total += n
                ids.counts.add_widget(label(p, "22sp", bold=True))
                minus = FlatButton(text="-", font_size="28sp", tag=f"whist:won-:{p}")
                minus.bind(on_press=lambda b, p=p: self.change(p, -1))
                plus = FlatButton(text="+", font_size="28sp", tag=f"whist:won+:{p}")
                plus.bind(on_press=lambda b, p=p: self.change(p, 1))
                ids.counts.add_widget(minus)
                ids.counts.add_widget(label(str(n), "30sp", bold=True))
                ids.counts.add_widget(plus)
            ids.note.text = f"Tricks won: {total} of {cards} counted"
            ids.done.disabled = total != cards
            return
        self._show(counts=False, tricks=True)
        played = ",  ".join(f"{p} {_face(c)}" for p, c in tv["cards"])
        ids.trick.text = (f"Trick {tv['trick']} of {tv['of']}: {tv['leader']} leads.   "
                          + (played if played else "Tap who won it, or enter the cards."))
        for p in t.players:
            b = FlatButton(text=f"{p} won it", tag=f"whist:trick:{p}", disabled=bool(tv["cards"]))
            b.bind(on_press=lambda b, p=p: self.trick_to(p))
            ids.winners.add_widget(b)
        ids.note.text = f"Card entry (optional): {tv['to_play']} plays" + (
            f" {RANK_TEXT[self.rank]}\u2026" if self.rank else "")
        for b in ids.ranks.children:
            b.state = "down" if self.rank is not None and b.text == RANK_TEXT[self.rank] else "normal"
        for b in ids.suits.children:
            b.disabled = self.rank is None

    def _show(self, counts, tricks):
        ids = self.ids
        want = self._panels["counts"] if counts else self._panels["tricks"] if tricks else None
        if list(ids.body.children) != ([want] if want else []):
            ids.body.clear_widgets()
            if want is not None:
                ids.body.add_widget(want)
        ids.mode_row.opacity = 1 if (counts or tricks) else 0
        ids.mode_row.disabled = not (counts or tricks)

    def _round_over(self, s, m):
        ids = self.ids
        self._show(counts=False, tricks=False)
        r = m.rule_round()
        ids.header.text = (f"Round {r['round']} of {m.setup.n_rounds} is over  \u2022  {r['cards']} card"
                           f"{'s' if r['cards'] != 1 else ''}  \u2022  {r['dealer']} dealt")
        ids.note.text = "Next round when the cards are gathered." if r["round"] < m.setup.n_rounds else \
            "That was the last round: see the Captain."
        for p in m.players:
            ids.result.add_widget(label(p, "22sp", bold=True))
            ids.result.add_widget(label(f"bid {r['bids'][p]}  won {r['won'][p]}", "22sp", color=PALE))
            sc = r["scores"][p]
            ids.result.add_widget(label(f"{sc:+d}", "28sp", bold=True, color=GOLD if sc > 0 else RED))
        if r.get("trick_winners"):
            ids.vs.text = "Tricks: " + ", ".join(r["trick_winners"])
        ids.next_round.text = "Next round" if r["round"] < m.setup.n_rounds else "Finish the game"


def _cell(text, size, halign="center", **kw):
    """A one-line cell of the bids table: names take the room, long ones are cut short with an ellipsis."""
    lab = label(text, size, halign=halign, **kw)
    lab.shorten = True
    lab.shorten_from = "right"
    lab.size_hint_x = 3 if halign == "left" else 1
    return lab


def _face(text: str) -> str:
    return text[:-1] + SUIT_SYMBOLS[text[-1]]
