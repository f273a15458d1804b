"""Pirate's Bluff: the odds coach (companion/games/pirates_bluff/odds.py). Layout in coach.kv beside this module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.decks.pirates72 import PBCard, rank_name
from companion.games.pirates_bluff.rules import bid_name
from companion.games.pirates_bluff.ui.cardpicker import fill_card_picker
from companion.ui.widgets import FlatToggle, label as _lab


def _app():
    return App.get_running_app()


class CoachScreen(Screen):
    """The exact chance that a bid holds (companion.games.pirates_bluff.odds) for the table in play: players, the revealed starting
    cards, optionally one player's hand entered by touch, the standing bid (or any bid chosen here)."""

    QS = 10  # columns P(count >= q), q = 1..QS

    def on_kv_post(self, base):
        self.q, self.r = 1, 7
        self.hand_of = None
        self.hand: list[PBCard] = []
        self.hand_rank = None
        self._key = None
        for r in range(1, 9):
            b = FlatToggle(text=str(r), group="coach_rank", font_size="24sp", tag=f"coach_rank:{r}")
            b.bind(on_press=lambda b, r=r: self.set_bid(self.q, r))
            self.ids.bid_ranks.add_widget(b)
        fill_card_picker(self.ids.hand_ranks, self.ids.hand_letters, group="coach_hrank", font_size="22sp",
                         rank_tag="coach_hrank", letter_tag="coach_letter", on_rank=self.pick_hand_rank,
                         on_letter=self.add_hand_card)

    def allowed(self):
        """The coach is for after a hand; during a live hand only when Settings turns it on."""
        return _app().coach_allowed()

    def start(self):
        """Take the standing bid of the hand in play (called again when the hand changes)."""
        h = _app().session.hand
        key = (len(_app().session.history), tuple(h.starting_cards.items()), h.standing_bid)
        if key != self._key:
            self._key = key
            if h.standing_bid is not None:
                self.q, self.r = h.standing_bid
            self.hand_of, self.hand, self.hand_rank = None, [], None

    def set_bid(self, q, r):
        self.q, self.r = max(1, q), r
        self.refresh()

    def pick_player(self, p):
        if self.hand_of == p:
            self.hand_of, self.hand = None, []
        else:
            self.hand_of = p
            self.hand = [_app().session.hand.starting_cards[p]]
        self.hand_rank = None
        self.refresh()

    def pick_hand_rank(self, r):
        self.hand_rank = r
        self.refresh()

    def add_hand_card(self, letter):
        h = _app().session.hand
        if self.hand_of is None or self.hand_rank is None or len(self.hand) >= h.hand_size:
            return
        c = PBCard(self.hand_rank, letter)
        if c not in self.hand and c not in h.starting_cards.values():
            self.hand.append(c)
        self.hand_rank = None
        self.refresh()

    def clear_hand(self):
        if self.hand_of is not None:
            self.hand = [_app().session.hand.starting_cards[self.hand_of]]
        self.refresh()

    def odds(self):
        """(the bid's OddsResult, rank_table) for what is on screen; the hand only once it is complete."""
        from companion.games.pirates_bluff import odds

        s = _app().session
        h = s.hand
        starting = [h.starting_cards[p] for p in s.players]
        hand = self.hand if self.hand_of is not None and len(self.hand) == h.hand_size else None
        sw = h.options.super_wilds
        return (odds.bid_odds(len(s.players), starting, (self.q, self.r), hand=hand, super_wilds=sw),
                odds.rank_table(len(s.players), starting, hand=hand, super_wilds=sw))

    def refresh(self):
        app = _app()
        ok, why = app.coach_allowed()
        if not ok:
            self.ids.big.text = why
            self.ids.detail.text = ""
            self.ids.table.clear_widgets()
            return
        s = app.session
        h = s.hand
        self.start()
        for b in self.ids.bid_ranks.children:
            b.state = "down" if int(b.text) == self.r else "normal"
        self.ids.bid_label.text = bid_name(self.q, self.r)
        seats = self.ids.hand_seats
        seats.clear_widgets()
        for p in s.players:
            b = FlatToggle(text=p, group="coach_seat", font_size="18sp", tag=f"coach_seat:{p}",
                           state="down" if p == self.hand_of else "normal")
            b.bind(on_press=lambda b, p=p: self.pick_player(p))
            seats.add_widget(b)
        for b in self.ids.hand_ranks.children:
            r = 0 if b.text == "W" else int(b.text)
            b.state = "down" if r == self.hand_rank else "normal"
            b.disabled = self.hand_of is None
        seen = set(self.hand) | set(h.starting_cards.values())
        full = self.hand_of is None or len(self.hand) >= h.hand_size
        for b in self.ids.hand_letters.children:
            b.disabled = full or self.hand_rank is None or PBCard(self.hand_rank, b.text) in seen
        if self.hand_of is None:
            self.ids.hand_label.text = "No hand: only the face-up starting cards are known."
        else:
            n = len(self.hand)
            self.ids.hand_label.text = (f"{self.hand_of}'s hand: {' '.join(map(str, self.hand))}  ({n} of "
                                        f"{h.hand_size}" + (", used)" if n == h.hand_size else ": used when complete)"))
        res, table = self.odds()
        live = h.phase in ("bidding", "called")
        self.ids.title.text = (f"Coach: {len(s.players)} players, starting "
                               + " ".join(f"{h.starting_cards[p]}" for p in s.players)
                               + ("  (Super Wilds)" if h.options.super_wilds else "")
                               + ("  - live hand" if live else ""))
        self.ids.big.text = f"{bid_name(self.q, self.r)} holds: {100 * res.probability:.2f} %"
        ex = res.probability_exact
        self.ids.detail.text = (f"expected count {res.mean:.2f} (it can reach {res.max_count})"
                                + (f";  exactly {ex.numerator}/{ex.denominator}" if ex.denominator < 10**9 else ""))
        t = self.ids.table
        t.cols = 2 + self.QS
        t.clear_widgets()
        grey = (0.75, 0.85, 0.85, 1)
        for head in ["rank", "mean"] + [f">={q}" for q in range(1, self.QS + 1)]:
            t.add_widget(_lab(head, "16sp", bold=True, color=grey))
        for r in range(1, 9):
            t.add_widget(_lab(rank_name(r), "16sp", bold=True))
            t.add_widget(_lab(f"{table[r].mean:.2f}", "16sp"))
            for q in range(1, self.QS + 1):
                pr = table[r].at_least(q)
                mine = (q, r) == (self.q, self.r)
                col = (0.98, 0.78, 0.25, 1) if mine else (0.45, 0.85, 0.45, 1) if pr >= 0.5 else (1, 1, 1, 1)
                t.add_widget(_lab(f"{100 * pr:.0f}%" if pr >= 0.005 else "-", "17sp", bold=mine, color=col))
