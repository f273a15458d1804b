"""Pirate's Bluff: the bidding, the CALL buttons and the countdown's six beats. Layout in bid.kv beside this
module."""

from __future__ import annotations

from kivy.app import App
from kivy.clock import Clock
from kivy.uix.screenmanager import Screen

from companion.decks.pirates72 import rank_name
from companion.games.pirates_bluff import SPEC
from companion.games.pirates_bluff.rules import bid_name
from companion.ui.widgets import CallButton, FlatButton, FlatToggle, label as _lab

BEATS = ("going", "going", "going", "dead", "dead", "dead")


def _app():
    return App.get_running_app()


class BidScreen(Screen):
    ROWS = 5

    def on_kv_post(self, base):
        self.bidder = None
        self.q0 = 1
        self._beat_ev = None
        self.beat_no = 0
        self.beat_labels = []
        for w in BEATS:
            lab = _lab(w, "22sp", bold=True, color=(0.5, 0.5, 0.55, 1))
            self.beat_labels.append(lab)
            self.ids.beats.add_widget(lab)

    def pick_bidder(self, p):
        self.bidder = p
        self.q0 = None
        self.refresh()

    def page(self, d):
        self.q0 = max(1, (self.q0 or 1) + d * (self.ROWS - 1))
        self.refresh()

    def bid(self, q, r):
        if self.bidder is not None:
            _app().bid(self.bidder, q, r)

    def countdown(self):
        _app().countdown_start()

    # ---------------------------------------------------------------- the six beats
    def start_beats(self, pace_s):
        self.stop_beats()
        self.beat_no = 1
        self._show_beats()
        _app().buzz_beat(1)
        self._beat_ev = Clock.schedule_interval(self._beat, pace_s)

    def _beat(self, dt):
        self.beat_no += 1
        self._show_beats()
        _app().beep(660 if self.beat_no <= 3 else 440)
        _app().buzz_beat(self.beat_no)
        if self.beat_no >= len(BEATS):
            self.stop_beats(keep=True)
            _app().countdown_dead()
            return False

    def before_undo(self):
        self.stop_beats()

    def stop_beats(self, keep=False):
        if self._beat_ev is not None:
            self._beat_ev.cancel()
            self._beat_ev = None
        if not keep:
            self.beat_no = 0
        self._show_beats()

    def _show_beats(self):
        for i, lab in enumerate(self.beat_labels):
            lit = i < self.beat_no
            lab.color = ((0.95, 0.35, 0.30, 1) if i >= 3 else (0.98, 0.78, 0.25, 1)) if lit else (0.5, 0.5, 0.55, 1)
            lab.font_size = "28sp" if lit else "22sp"

    # ---------------------------------------------------------------- refresh
    def refresh(self):
        app = _app()
        if app.session is None or app.session.game != SPEC.id:
            return  # no Pirate's Bluff session: nothing to show
        s = app.session
        h = s.hand
        if h is None or h.phase == "starting":
            return
        bid = h.standing_bid
        if h.phase == "called":
            self.ids.banner.text = "CALLED by " + " & ".join(h.callers)
        elif bid is None:
            fb = h.first_bidder
            self.ids.banner.text = f"First bidder: {fb}  ({h.starting_cards[fb]})"
        else:
            self.ids.banner.text = f"{' & '.join(h.bidders)}:  {bid_name(*bid)}"
        sub = f"Pot {h.pot}.  Hands of {h.hand_size}.  Most possible: {h.max_quantity} of a rank."
        if h.countdown_by:
            sub = f"{h.countdown_by} is counting down: bid or CALL to stop it.  " + sub
        self.ids.subline.text = sub
        # seats
        legal_by = {p: h.legal_bids(p) for p in s.players}
        if self.bidder is not None and not legal_by.get(self.bidder):
            self.bidder = None
        if self.bidder is None and bid is None and h.phase == "bidding":
            self.bidder = h.first_bidder
        seats = self.ids.seats
        seats.clear_widgets()
        stacks = h.stacks
        for i, p in enumerate(s.players):
            b = FlatToggle(text=f"{p}  ({stacks[p]})", group="bid_seat", tag=f"seat:{p}",
                           state="down" if p == self.bidder else "normal", font_size="22sp")
            b.disabled = not legal_by[p]
            b.bind(on_press=lambda b, p=p: self.pick_bidder(p))
            seats.add_widget(b)
        # grid of legal bids for the chosen bidder
        legal = set(legal_by.get(self.bidder, [])) if self.bidder else set()
        if self.q0 is None:
            self.q0 = min((q for q, _ in legal), default=(bid[0] if bid else 1))
        grid = self.ids.grid
        grid.clear_widgets()
        grid.add_widget(_lab("", "18sp"))
        for r in range(1, 9):
            grid.add_widget(_lab(rank_name(r, plural=True), "17sp", bold=True))
        for q in range(self.q0, self.q0 + self.ROWS):
            grid.add_widget(_lab(str(q), "26sp", bold=True, color=(0.98, 0.78, 0.25, 1)))
            for r in range(1, 9):
                b = FlatButton(text=f"{q}x{r}", font_size="22sp", tag=f"bid:{q}x{r}")
                b.disabled = (q, r) not in legal
                b.bind(on_press=lambda b, q=q, r=r: self.bid(q, r))
                grid.add_widget(b)
        self.ids.grid_title.text = (f"Bids for {self.bidder}" if self.bidder else "Choose who bids")
        self.ids.q_down.disabled = self.q0 <= 1
        # CALL buttons
        # CALL buttons stay in place (never rebuilt under a finger); only their state changes
        calls = self.ids.calls
        if [b.tag for b in reversed(calls.children)] != [f"call:{p}" for p in s.players]:
            calls.clear_widgets()
            for i, p in enumerate(s.players):
                b = CallButton(text=f"CALL  {i + 1}  {p}", seat=i, tag=f"call:{p}")
                b.bind(on_press=lambda b, p=p: app.press_call(p, b.press_t))
                calls.add_widget(b)
        for b in calls.children:
            p = b.tag[5:]
            b.disabled = not (p not in h.bidders and p not in h.callers and h.standing_bid is not None
                              and h.phase in ("bidding", "called"))
        self.ids.countdown.disabled = not (h.phase == "bidding" and bid is not None and h.countdown_by is None)
        self.ids.undo.disabled = len(h.moves) <= 1
