"""Pirate's Bluff's intents in the app: reveal, bid, call, countdown, showdown, the coach's gate, the box's buzzes.

One object per app (``GameSpec.intents``); the app answers ``app.bid(...)`` etc. from it while a Pirate's Bluff
session is on (companion/ui/app.py, ``PirateTableApp.__getattr__``). Every intent goes to the referee through
the session (``app._do``), is saved atomically, and the screens are refreshed.
"""

from __future__ import annotations

from kivy.clock import Clock

from companion.games.pirates_bluff import SPEC
from companion.games.pirates_bluff.rules import Bid, Call, Countdown, RevealStarting, Showdown


class PiratesBluffIntents:
    def __init__(self, app):
        self.app = app
        self._window_ev = None  # the simultaneity window after the first call

    def before_undo(self):
        """An undo cancels the simultaneity window in progress."""
        if self._window_ev is not None:
            self._window_ev.cancel()
            self._window_ev = None

    def coach_allowed(self) -> tuple[bool, str]:
        """The coach is for after a hand; during a live hand only when Settings turns it on."""
        s = self.app.session
        h = s.hand if s else None
        if s is None or s.game != SPEC.id or h is None:
            return False, "The coach is for a Pirate's Bluff hand in play or just ruled."
        if h.phase == "starting":
            return False, "The coach needs the starting cards revealed."
        if h.phase in ("bidding", "called") and self.app.config.get("table", "coach_live") != "1":
            return False, "The coach is off during a live hand (Settings: Coach during live hands)."
        return True, ""

    def buzz_first_bidder(self):
        if self.app._box_ok():
            self.app.box.buzz(pattern=2, freq_hz=2000, duration_ms=400)

    def buzz_beat(self, n):
        """Beat n (1..6) of the countdown: three 'going' at a high pitch, three 'dead' low and longer."""
        if self.app._box_ok():
            self.app.box.buzz(pattern=1, freq_hz=1500 if n <= 3 else 800, duration_ms=150 if n <= 3 else 300)

    @property
    def pace_s(self) -> float:
        return max(0.05, self.app.config.getfloat("table", "pace_ms") / 1000.0)

    def reveal(self, cards):
        def after():
            h = self.app.session.hand
            fb = h.first_bidder
            self.app.set_status(f"{fb} holds the lowest card ({h.starting_cards[fb]}) and bids first.")
            self.app.screens["bid"].bidder = fb
            self.app.screens["bid"].q0 = None
            self.app.go("bid")
            self.buzz_first_bidder()
        self.app._do(RevealStarting.of(cards), after)

    def bid(self, player, q, r):
        self.app.screens["bid"].stop_beats()

        def after():
            self.app.screens["bid"].bidder = None
            self.app.screens["bid"].q0 = None
            self.app.go("bid")
        self.app._do(Bid(player, q, r, self.app.hand_now_ms()), after)

    def call(self, player, wall_ms=None):
        h = self.app.session.hand if self.app.session else None
        if h is None or h.phase not in ("bidding", "called") or self.app.sm.current not in ("bid", "showdown"):
            return
        first = h.phase == "bidding"
        self.app.screens["bid"].stop_beats()
        if self.app._do(Call(player, self.app.hand_now_ms(wall_ms))):
            h = self.app.session.hand
            self.app.beep(1320)
            self.app.set_status(f"CALL: {' & '.join(h.callers)}"
                            + (" (simultaneous)" if len(h.callers) > 1 else ""))
            self.app.screens["bid"].refresh()
            if first:
                # late simultaneous presses still in flight from the box (resent every 20 ms if lost)
                wait = h.options.window_ms / 1000.0 + 0.15
                self._window_ev = Clock.schedule_once(self._window_closed, wait)
            elif self.app.sm.current == "showdown":
                self.app.screens["showdown"].refresh()

    def _window_closed(self, dt):
        self._window_ev = None
        h = self.app.session.hand
        if h is not None and h.phase == "called":
            self.app.screens["showdown"].start()
            self.app.go("showdown")

    def countdown_start(self):
        h = self.app.session.hand
        if h.standing_bid is None:
            return
        if self.app._do(Countdown(h.bidders[0], self.app.hand_now_ms(), complete=False)):
            self.app.screens["bid"].refresh()
            self.app.screens["bid"].start_beats(self.pace_s)

    def countdown_dead(self):
        h = self.app.session.hand
        if h.phase != "bidding" or h.countdown_by is None:
            return
        self.app._do(Countdown(h.countdown_by, self.app.hand_now_ms(), complete=True), lambda: self.app.go("ruling"))

    def showdown(self, counts):
        self.app._do(Showdown.of_counts(counts), lambda: self.app.go("ruling"))
