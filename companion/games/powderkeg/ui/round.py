"""The Powderkeg round screen: dealer, dock, the reveals one by one (touched, or read by the camera:
companion/games/powderkeg/camera.py), live/die/fold per player, payouts.
Layout in round.kv (loaded by the app beside this module)."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.powderkeg import SPEC
from companion.games.powderkeg.rules import Call, Dock, Reveal
from companion.ui.widgets import FlatButton, FlatToggle, label as _lab


def _app():
    return App.get_running_app()


class PowderkegScreen(Screen):
    """A Powderkeg round: dealer, dock, the reveals one by one (touched), live/die/fold per player, payouts."""

    rank = None

    def on_kv_post(self, base):
        from companion.decks.island54 import COLOUR_OF, RANK_NAMES, SYMBOLS

        colours = {"red": (0.75, 0.18, 0.16, 1), "pink": (0.85, 0.40, 0.60, 1), "yellow": (0.75, 0.62, 0.10, 1),
                   "blue": (0.20, 0.40, 0.80, 1), "green": (0.20, 0.55, 0.25, 1),
                   "purple": (0.50, 0.30, 0.70, 1)}
        for r in RANK_NAMES:
            b = FlatToggle(text=r, group="pk_rank", font_size="30sp", tag=f"pkrank:{r}")
            b.bind(on_press=lambda b, r=r: self.pick_rank(r))
            self.ids.ranks.add_widget(b)
        for sym in SYMBOLS:
            b = FlatButton(text=f"{sym} ({COLOUR_OF[sym]})", bg=colours.get(COLOUR_OF[sym], (0.3, 0.3, 0.3, 1)),
                           tag=f"pksuit:{sym}")
            b.bind(on_press=lambda b, sym=sym: self.pick_suit(sym))
            self.ids.suits.add_widget(b)

    def pick_rank(self, r):
        self.rank = r
        self.refresh()

    def pick_suit(self, sym):
        from companion.decks.island54 import IslandCard

        if self.rank is not None:
            card = IslandCard.parse(f"{self.rank}:{sym}")
            self.rank = None
            self.play_card(card)

    def call(self, c):
        """LIVE / DIE / FOLD for the player whose turn it is (phones on: for the next player still to answer
        the secret calls, into the same SecretRound as the phones)."""
        if _app().phones_answer(c):
            return
        h = _app().session.hand
        if h.next_to_call is None:
            return
        _app().act(Call(h.next_to_call, c))

    def play_card(self, card):
        """A touched card: the dock, or the next card turned up."""
        h = _app().session.hand
        _app().act(Dock(card) if h.phase == "dock" else Reveal(card))

    def scan_request(self):
        """The camera reads the card just laid face up (None when no card is due)."""
        from companion.games.powderkeg.camera import turn_request

        s = _app().session
        h = s.hand if s is not None and s.spec is SPEC else None
        return turn_request(h, seed=len(h.moves) if h is not None else 0)

    def scan(self):
        _app().start_scan()

    def apply_scan(self, reading):
        """The new cards the camera read: the round's next moves in order, the same as taps. The rules may refuse
        one: the cards before it stay recorded (undo takes them back one by one) and the reading stops there."""
        from companion.games.powderkeg.camera import moves_from_reading

        s = _app().session
        h = s.hand if s is not None and s.spec is SPEC else None
        moves = moves_from_reading(h, reading.new)
        for k, move in enumerate(moves):
            if not _app().act(move):
                done = f"{k} card{'s' if k != 1 else ''} recorded, then s" if k else "S"
                return f"{done}topped at {move.card}: {_app().status_text} Enter the rest by touch."
        return None

    def refresh(self):
        app = _app()
        s = app.session
        h = s.hand if s is not None and s.spec is SPEC else None
        active = h is not None
        for w in (self.ids.undo, self.ids.next_round, self.ids.live, self.ids.die, self.ids.fold, self.ids.camera):
            w.disabled = not active
        for g in (self.ids.ranks, self.ids.suits):
            for b in g.children:
                b.disabled = not active
        self.ids.players.clear_widgets()
        if not active:
            self.ids.banner.text = "Powderkeg"
            self.ids.note.text = "Start a Powderkeg session on the Session screen."
            self.ids.cards.text = self.ids.result.text = ""
            return
        n = len(s.history) + 1
        self.ids.banner.text = f"Round {n}: {h.dealer} deals.  Pot {h.pot}."
        phase = h.phase
        seen = ([h.dock] if h.dock else []) + list(h.revealed)
        self.ids.cards.text = (f"dock {h.dock}   |   " if h.dock else "") + "  ".join(str(c) for c in h.revealed)
        self.ids.note.text = {
            "dock": f"{h.dealer}: dock one card face up.",
            "opening": f"Turn up card {len(h.revealed) + 1} of the set.",
            "reveal": f"Turn up card {len(h.revealed) + 1}.",
            "calling": f"{h.next_to_call}: live, die or fold on card {len(h.revealed) + 1}?",
            "showing": f"Play is over ({h.end}): turn up the rest of the hand in its row (the camera reads it "
                       f"at once), or tap card {len(h.revealed) + 1}.",
            "over": "Round settled.",
        }[phase]
        for b in self.ids.ranks.children:
            b.state = "down" if b.text == self.rank else "normal"
            b.disabled = phase not in ("dock", "opening", "reveal", "showing")
        for b in self.ids.suits.children:
            b.disabled = self.rank is None or phase not in ("dock", "opening", "reveal", "showing") or any(
                str(c) == f"{self.rank}:{b.tag[7:]}" for c in seen)
        q = app.phones_question() if phase == "calling" else None
        if q is not None:  # phones on: the calls are secret until the last is in
            self.ids.note.text = (f"Secret calls on card {len(h.revealed) + 1}: waiting for "
                                  f"{', '.join(q['waiting'])}. The buttons answer for {q['waiting'][0]}."
                                  if q["waiting"] else "All calls are in.")
        calling = phase == "calling"
        for w in (self.ids.live, self.ids.die, self.ids.fold):
            w.disabled = not calling
        pending = h.pending_calls
        out = h.out
        for p in s.players:
            status = ("dealer" if p == h.dealer else "in" if p in h.in_players else out.get(p, "out"))
            if p in pending:
                status += f": {pending[p]}"
            if p == h.next_to_call and q is None:
                status = "to call"
            elif q is not None and p in q["asks"]:
                status = "to call" if p in q["waiting"] else "called (secret)"
            self.ids.players.add_widget(_lab(p, "20sp", bold=True))
            self.ids.players.add_widget(_lab(status, "18sp", color=(0.98, 0.78, 0.25, 1) if status == "to call"
                                             else (0.85, 0.9, 0.9, 1)))
            self.ids.players.add_widget(_lab(str(h.stacks[p]), "20sp"))
        self.ids.undo.disabled = not h.moves
        self.ids.camera.disabled = phase not in ("dock", "opening", "reveal", "showing")
        self.ids.camera.text = ("Read the rest of the hand (camera)" if phase == "showing"
                                else "Read the card (camera)")
        self.ids.next_round.disabled = phase != "over"
        r = s.current_ruling()
        if r is not None:
            lines = [f"Ended: {r['end']}.  Winners: {', '.join(r['winners']) or 'nobody'}"
                     + ("  (dealer wins)" if r["dealer_wins"] else "")]
            lines += [e["memo"] for e in r["entries"] if e["kind"] not in ("ante", "bet")]
            lines.append("  ".join(f"{p} {r['stacks'][p] - r['stacks_before'][p]:+d}" for p in r["players"]))
            self.ids.result.text = "\n".join(lines)
        else:
            self.ids.result.text = ""
