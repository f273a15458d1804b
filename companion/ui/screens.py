"""Screen classes: each reads the app's session and sends intents to the app (kv layouts in pirate_table.kv)."""

from __future__ import annotations

import os

from kivy.app import App
from kivy.clock import Clock
from kivy.metrics import dp
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.label import Label
from kivy.uix.screenmanager import Screen
from kivy.uix.textinput import TextInput

from companion.cards import PBCard, rank_name
from companion.games.pirates_bluff import bid_name, hand_count
from companion.ui import services
from companion.ui.widgets import CallButton, FlatButton, FlatToggle, fill_card_picker

BEATS = ("going", "going", "going", "dead", "dead", "dead")
DEFAULT_NAMES = ["Arville", "Bethany", "Carter", "Douglas", "Eris", "Fenwick", "Greta", "Hollis"]


def _app():
    return App.get_running_app()


def _lab(text, size="20sp", bold=False, color=(1, 1, 1, 1), halign="center"):
    lab = Label(text=text, font_size=size, bold=bold, color=color, halign=halign, valign="middle")
    lab.bind(size=lambda w, s: setattr(w, "text_size", s))
    return lab


class Root(BoxLayout):
    pass


class StartScreen(Screen):
    def on_kv_post(self, base):
        self.count = 5
        self.name_inputs = []
        for n in range(3, 9):
            b = FlatToggle(text=f"{n} players", group="count", allow_no_selection=False,
                           state="down" if n == self.count else "normal")
            b.bind(on_press=lambda b, n=n: self.set_count(n))
            self.ids.count_row.add_widget(b)
        for i in range(8):
            t = TextInput(text=DEFAULT_NAMES[i], multiline=False, font_size="24sp", write_tab=False,
                          padding=[dp(10), dp(12)])
            self.name_inputs.append(t)
            self.ids.names.add_widget(t)
        self.set_count(self.count)

    def set_count(self, n):
        self.count = n
        for b in self.ids.count_row.children:
            b.state = "down" if b.text == f"{n} players" else "normal"
        for i, t in enumerate(self.name_inputs):
            t.disabled = i >= n
            t.opacity = 1 if i < n else 0.25

    def start_session(self):
        ids = self.ids
        cyclone = "left" if ids.cyc_left.state == "down" else "right" if ids.cyc_right.state == "down" else None
        game = "powderkeg" if ids.game_pk.state == "down" else "pirates-bluff"
        _app().new_session(
            players=[t.text for t in self.name_inputs[: self.count]],
            buy_in=int(ids.buy_in.value),
            game=game,
            super_wilds=ids.super_wilds.state == "down",
            cyclone=cyclone,
            window_ms=float(ids.window_ms.value),
            ante=int(ids.ante.value),
        )

    def refresh(self):
        app = _app()
        info = app.saved_session_info()
        self.ids.resume.disabled = info is None
        self.ids.resume_info.text = info or getattr(app, "saved_note", None) or "No saved session yet."
        ok, msg = services.powderkeg_status()
        self.ids.game_pk.disabled = not ok
        if not ok:
            self.ids.game_pk.text = "Powderkeg (not landed)"


class DealScreen(Screen):
    """Starting cards: pick a seat, a rank, then a letter. Cards dealt to another seat are not offered."""

    def on_kv_post(self, base):
        self.selected = None
        self.rank = None
        self.cards: dict[str, PBCard] = {}
        self.unreadable: set[str] = set()  # seats whose scanned card could not be read (touch entry)
        fill_card_picker(self.ids.ranks, self.ids.letters, group="deal_rank", font_size="30sp", rank_tag="rank",
                         letter_tag="letter", on_rank=self.pick_rank, on_letter=self.pick_letter)

    def start(self):
        self.cards = {}
        self.unreadable = set()
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

    def apply_scan(self, reading):
        """A camera reading mapped to seats: read cards fill their seats, unreadable ones are emptied and
        marked '?' for touch entry (never guessed)."""
        players = _app().session.players
        for p, code in reading.cards.items():
            if code is None:
                self.cards.pop(p, None)
                self.unreadable.add(p)
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
            shown = c if c else ("?  (unreadable: touch)" if p in self.unreadable else "--")
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


class ShowdownScreen(Screen):
    def start(self):
        s = _app().session
        self.counts = {p: [0, 0] for p in s.players}
        self.refresh()

    def bump(self, p, k, d):
        h = _app().session.hand
        n, w = self.counts[p]
        v = self.counts[p][k] + d
        if v < 0 or (n + w + d) > h.hand_size:
            return
        self.counts[p][k] = v
        self.refresh()

    def rule(self):
        _app().showdown({p: tuple(v) for p, v in self.counts.items()})

    def refresh(self):
        app = _app()
        h = app.session.hand
        if h is None or h.phase != "called":
            return
        q, r = h.standing_bid
        self.ids.banner.text = f"SHOWDOWN: {' & '.join(h.bidders)} bid {bid_name(q, r)}"
        if len(h.callers) > 1:
            self.ids.subline.text = f"{' and '.join(h.callers)} called at the same time."
        else:
            self.ids.subline.text = f"{h.callers[0]} called.  Count the {rank_name(r, plural=True)} and wilds."
        rows = self.ids.rows
        rows.clear_widgets()
        for head in ("Player", "", rank_name(r, plural=True), "", "", "Wilds", "", "Counts"):
            rows.add_widget(_lab(head, "20sp", bold=True, color=(0.75, 0.85, 0.85, 1)))
        total = 0
        for p in app.session.players:
            n, w = self.counts[p]
            c = hand_count(n, w, h.options.super_wilds)
            total += c
            rows.add_widget(_lab(p, "24sp", bold=True))
            for k, v in ((0, n), (1, w)):
                minus = FlatButton(text="-", font_size="28sp", tag=f"{p}:{'nw'[k]}-")
                minus.bind(on_press=lambda b, p=p, k=k: self.bump(p, k, -1))
                plus = FlatButton(text="+", font_size="28sp", tag=f"{p}:{'nw'[k]}+")
                plus.bind(on_press=lambda b, p=p, k=k: self.bump(p, k, 1))
                rows.add_widget(minus)
                rows.add_widget(_lab(str(v), "30sp", bold=True))
                rows.add_widget(plus)
            rows.add_widget(_lab(str(c), "30sp", bold=True, color=(0.98, 0.78, 0.25, 1)))
        self.ids.total.text = f"In play: {total} of {q}"


class RulingScreen(Screen):
    def refresh(self):
        app = _app()
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


def hand_summary(r) -> str:
    if r.get("game") == "powderkeg":
        deltas = ", ".join(f"{p} {r['stacks'][p] - r['stacks_before'][p]:+d}" for p in r["players"]
                           if r["stacks"][p] != r["stacks_before"][p])
        return (f"#{r.get('hand_no', '?')}: Powderkeg, {r['dealer']} dealt, {r['end']}, "
                f"winners {', '.join(r['winners']) or 'none'}.  {deltas}")
    fb = r.get("final_bid")
    if not fb:
        return f"#{r.get('hand_no', '?')}: no bid"
    bid = bid_name(fb["quantity"], fb["rank"])
    who = " & ".join(fb["bidders"])
    if r["end"] == "countdown":
        res = f"countdown: {who} wins"
    else:
        res = (f"called by {' & '.join(r['callers'])}: {'holds' if r['bid_holds'] else 'fails'} "
               f"({r['count']} in play)")
    deltas = ", ".join(f"{p} {r['stacks'][p] - r['stacks_before'][p]:+d}" for p in r["players"]
                       if r["stacks"][p] != r["stacks_before"][p])
    return f"#{r.get('hand_no', '?')}: {who} bid {bid}, {res}.  {deltas}"


class HistoryScreen(Screen):
    def refresh(self):
        s = _app().session
        box = self.ids.hands
        box.clear_widgets()
        if s is None:
            return
        rulings = list(s.history)
        cur = s.current_ruling()
        if cur:
            rulings.append(cur)
        if not rulings:
            box.add_widget(_lab("No hand finished yet.", "20sp"))
        for r in rulings:
            lab = Label(text=hand_summary(r), font_size="19sp", size_hint_y=None, halign="left", valign="top")
            lab.bind(width=lambda w, v: setattr(w, "text_size", (v, None)),
                     texture_size=lambda w, v: setattr(w, "height", v[1] + dp(8)))
            box.add_widget(lab)
        self.ids.plot.players = list(s.players)
        self.ids.plot.series = s.stack_series()


class LedgerScreen(Screen):
    """Stacks, pot, loans (take / repay), standings net of loans, settle-up and CSV export (companion.ledger)."""

    loan_player = None

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


class PowderkegScreen(Screen):
    """A Powderkeg round: dealer, dock, the reveals one by one (touched), live/die/fold per player, payouts."""

    rank = None

    def on_kv_post(self, base):
        from companion.island import COLOUR_OF, RANK_NAMES, SYMBOLS

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
        from companion.island import IslandCard

        if self.rank is not None:
            card = IslandCard.parse(f"{self.rank}:{sym}")
            self.rank = None
            _app().powderkeg_card(card)

    def call(self, c):
        _app().powderkeg_call(c)

    def refresh(self):
        app = _app()
        s = app.session
        ok, msg = services.powderkeg_status()
        h = s.hand if s is not None and s.game == "powderkeg" else None
        active = h is not None
        for w in (self.ids.undo, self.ids.next_round, self.ids.live, self.ids.die, self.ids.fold):
            w.disabled = not active
        for g in (self.ids.ranks, self.ids.suits):
            for b in g.children:
                b.disabled = not active
        self.ids.players.clear_widgets()
        if not active:
            self.ids.banner.text = "Powderkeg"
            self.ids.note.text = msg if not ok else "Start a Powderkeg session on the Session screen."
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
            "showing": f"Play is over ({h.end}): show the rest of the hand, card {len(h.revealed) + 1}.",
            "over": "Round settled.",
        }[phase]
        for b in self.ids.ranks.children:
            b.state = "down" if b.text == self.rank else "normal"
            b.disabled = phase not in ("dock", "opening", "reveal", "showing")
        for b in self.ids.suits.children:
            b.disabled = self.rank is None or phase not in ("dock", "opening", "reveal", "showing") or any(
                str(c) == f"{self.rank}:{b.tag[7:]}" for c in seen)
        calling = phase == "calling"
        for w in (self.ids.live, self.ids.die, self.ids.fold):
            w.disabled = not calling
        pending = h.pending_calls
        out = h.out
        for p in s.players:
            status = ("dealer" if p == h.dealer else "in" if p in h.in_players else out.get(p, "out"))
            if p in pending:
                status += f": {pending[p]}"
            if p == h.next_to_call:
                status = "to call"
            self.ids.players.add_widget(_lab(p, "20sp", bold=True))
            self.ids.players.add_widget(_lab(status, "18sp", color=(0.98, 0.78, 0.25, 1) if p == h.next_to_call
                                             else (0.85, 0.9, 0.9, 1)))
            self.ids.players.add_widget(_lab(str(h.stacks[p]), "20sp"))
        self.ids.undo.disabled = not h.moves
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


class SettingsScreen(Screen):
    pass


class ButtonsScreen(Screen):
    """'Press your button': each seat in turn presses its CALL button; the box's state; the software box."""

    def on_kv_post(self, base):
        self.mapping = {}
        self.prompt_seat = None
        for b in range(8):
            btn = FlatButton(text=f"button {b + 1}", tag=f"softbutton:{b + 1}", bg=(0.72, 0.16, 0.14, 1))
            btn.bind(on_press=lambda w, b=b: self.press_button(
                b, w.last_touch.time_start if w.last_touch else None))
            self.ids.softbuttons.add_widget(btn)

    def players(self):
        app = _app()
        if app.session is not None:
            return list(app.session.players)
        st = app.screens["start"]
        return [t.text.strip() or f"Seat {i + 1}" for i, t in enumerate(st.name_inputs[: st.count])]

    def press_button(self, b, touch_wall_s=None):
        box = _app().box
        if box is None or not box.simulated:
            _app().set_status("Only the software box has on-screen buttons.", error=True)
            return
        box.press_button(b, touch_wall_s)

    def assign(self):
        app = _app()
        if not app._box_ok():
            app.set_status("No button box connected.", error=True)
            return
        names = self.players()
        self.mapping = {}

        def prompt(seat):
            self.prompt_seat = seat
            self.ids.prompt.text = f"Seat {seat}: {names[seat - 1]}, press your button!"
            app.set_status(f"Press your button: seat {seat} ({names[seat - 1]}).")

        def done(mapping, error):
            self.prompt_seat = None
            if mapping is None:
                self.ids.prompt.text = "Seat assignment stopped."
                app.set_status(error, error=True)
            else:
                self.mapping = mapping
                self.ids.prompt.text = "Every seat has its button."
                app.set_status("Seats assigned: " + ", ".join(
                    f"button {b + 1} = {names[s - 1]}" for b, s in sorted(mapping.items(), key=lambda x: x[1])))
            self.refresh()
        self.ids.assign.disabled = True
        app.box.assign_seats(len(names), prompt, done)

    def refresh(self):
        app = _app()
        box = app.box
        st = box.state if box is not None else None
        self.ids.state.text = (app.box_text + (f"  on {st.port}" if st is not None and st.port else "")
                               + (f"\n{st.detail}" if st is not None and st.detail else ""))
        names = self.players()
        seat_of = dict(box.box.seat_of_button) if box is not None and box.box is not None else {}
        self.ids.assign.disabled = self.prompt_seat is not None or not app._box_ok()
        lines = []
        for b in range(8):
            s = seat_of.get(b)
            who = names[s - 1] if s is not None and s <= len(names) else "-"
            lines.append(f"button {b + 1}: seat {s} {who}" if s is not None and s <= len(names) else
                         f"button {b + 1}: not used")
        self.ids.table.text = "\n".join(lines)
        sim = box is not None and box.simulated
        self.ids.softbuttons.opacity = 1 if sim else 0
        self.ids.softbuttons.disabled = not sim
        self.ids.softnote.text = ("The software box: press its buttons here or with keys 1-8." if sim else
                                  "Each player presses the big button in front of them.")


class ScanScreen(Screen):
    """The camera's live preview with the recognised cards drawn on it (companion/ui/camservice.py), then the
    reading mapped to seats."""

    def begin(self, source):
        self.ids.scan_title.text = "Scanning the starting cards"
        self.ids.scan_note.text = f"Opening the camera ({source})..."
        self.ids.scan_seats.text = ""
        self.ids.preview.texture = None

    def _texture(self, bgr):
        from kivy.graphics.texture import Texture

        h, w = bgr.shape[:2]
        tex = self.ids.preview.texture
        if tex is None or tuple(tex.size) != (w, h):
            tex = Texture.create(size=(w, h), colorfmt="bgr")
            tex.flip_vertical()
        tex.blit_buffer(bgr.tobytes(), colorfmt="bgr", bufferfmt="ubyte")
        self.ids.preview.texture = tex
        self.ids.preview.canvas.ask_update()

    def show_frame(self, bgr, text):
        self._texture(bgr)
        self.ids.scan_note.text = text

    def show_reading(self, reading):
        if reading.frame is not None:
            self._texture(reading.frame)
        self.ids.scan_title.text = "Starting cards read" if reading.cards else "Scan again"
        self.ids.scan_note.text = reading.note
        players = _app().session.players
        self.ids.scan_seats.text = "\n".join(
            f"{i + 1}. {p}:  {reading.cards[p] or '?  (touch)'}" for i, p in enumerate(players) if p in reading.cards)

    def show_error(self, text):
        self.ids.scan_title.text = "No camera reading"
        self.ids.scan_note.text = text


class CoachScreen(Screen):
    """The exact chance that a bid holds (companion.odds) for the table in play: players, the revealed starting
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
        from companion import odds

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
