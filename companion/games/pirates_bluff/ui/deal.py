"""Pirate's Bluff: the starting cards, by touch or by the camera. Layout in deal.kv beside this module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.decks.pirates72 import PBCard
from companion.games.pirates_bluff import SPEC
from companion.games.pirates_bluff.rules import RevealStarting
from companion.games.pirates_bluff.ui.cardpicker import fill_card_picker
from companion.ui import services
from companion.ui.widgets import FlatToggle


def _app():
    return App.get_running_app()


class DealScreen(Screen):
    """Starting cards: pick a seat, a rank, then a letter. Cards dealt to another seat are not offered."""

    def on_kv_post(self, base):
        self.selected = None
        self.rank = None
        self.cards: dict[str, PBCard] = {}
        self.unreadable: set[str] = set()  # seats whose scanned card could not be read (touch entry)
        self.unsure: set[str] = set()  # ... of those, the seats whose card was read but left for a tap (not sure)
        fill_card_picker(self.ids.ranks, self.ids.letters, group="deal_rank", font_size="30sp", rank_tag="rank",
                         letter_tag="letter", on_rank=self.pick_rank, on_letter=self.pick_letter)

    def ensure_started(self):
        if not self.cards:
            self.start()

    def after_undo(self, action):
        if isinstance(action, RevealStarting):  # the cards come back for correction
            self.cards = dict(action.cards)
            self.refresh()

    def start(self):
        self.cards = {}
        self.unreadable = set()
        self.unsure = set()
        s = _app().session
        self.selected = s.players[0]
        self.rank = None
        self.refresh()

    def pick_seat(self, p):
        self.selected = p
        self.refresh()

    def pick_rank(self, r):
        self.rank = r
        self.refresh()

    def pick_letter(self, letter):
        if self.selected is None or self.rank is None:
            return
        self.cards[self.selected] = PBCard(self.rank, letter)
        self.unreadable.discard(self.selected)
        self.unsure.discard(self.selected)
        players = _app().session.players
        missing = [p for p in players if p not in self.cards]
        after = players[players.index(self.selected) + 1:] + players
        self.selected = next((p for p in after if p in missing), None)
        self.rank = None
        self.refresh()

    def reveal(self):
        _app().reveal(dict(self.cards))

    def scan(self):
        _app().start_scan()

    def scan_request(self):
        """The starting cards, one per player, lying apart; a card that could name a wrong first bidder is left for
        a tap (the game's ``reads_hold``, camera.left_for_tap)."""
        from companion.games.registry import resolve
        from companion.tablecam import ScanRequest

        return ScanRequest(SPEC.deck, tuple(_app().session.players), hold=resolve(SPEC.reads_hold))

    def apply_scan(self, reading):
        """A camera reading mapped to seats: read cards fill their seats, unreadable ones are emptied and
        marked '?' for touch entry (never guessed); a card read but left for a tap (``reading.asked``: it could name a
        wrong first bidder) is marked 'not sure'."""
        players = _app().session.players
        for p, code in reading.cards.items():
            self.unsure.discard(p)
            if code is None:
                self.cards.pop(p, None)
                self.unreadable.add(p)
                if p in reading.asked:
                    self.unsure.add(p)
            else:
                card = PBCard.parse(code)
                for q in [q for q, c in self.cards.items() if c == card and q != p]:
                    del self.cards[q]  # the same card entered by touch for another seat before
                self.cards[p] = card
                self.unreadable.discard(p)
        self.selected = next((p for p in players if p not in self.cards), None)
        self.rank = None
        self.refresh()

    def refresh(self):
        app = _app()
        if app.session is None or app.session.game != SPEC.id:
            return  # no Pirate's Bluff session: nothing to show
        s = app.session
        h = s.hand
        if h is None:
            return
        n = len(s.history) + 1
        self.ids.title.text = (f"Hand {n}: ante {h.options.ante} each, pot {h.pot}.  "
                               f"Deal {h.hand_size} cards to each player.")
        self.ids.announce.text = "  ".join(h.options.announcements()) or \
            "Each player puts one card face up: the lowest bids first."
        seats = self.ids.seats
        seats.clear_widgets()
        for i, p in enumerate(s.players):
            c = self.cards.get(p)
            shown = c if c else ("?  (not sure: touch)" if p in self.unsure else
                                 "?  (unreadable: touch)" if p in self.unreadable else "--")
            b = FlatToggle(text=f"{i + 1}. {p}:  {shown}", group="deal_seat", tag=f"deal:{p}",
                           state="down" if p == self.selected else "normal")
            b.bind(on_press=lambda b, p=p: self.pick_seat(p))
            seats.add_widget(b)
        for b in self.ids.ranks.children:
            r = 0 if b.text == "W" else int(b.text)
            b.state = "down" if r == self.rank else "normal"
        taken = {c for p, c in self.cards.items() if p != self.selected}
        for b in self.ids.letters.children:
            b.disabled = self.rank is None or PBCard(self.rank, b.text) in taken
        ok, msg = services.camera_status()
        src = app.camera_source()
        if ok and src == "off":
            ok, msg = False, "The camera is off (Settings > Camera): enter the cards by touch."
        self.ids.camera.disabled = not ok
        self.ids.camera_note.text = msg if not ok else (
            "Or scan the face-up cards with the camera" + (" (simulated table)." if src == "simulated" else "."))
        self.ids.reveal.disabled = len(self.cards) != len(s.players)
