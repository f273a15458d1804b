"""The Bluffing Battles fight screen: both players tap the card they revealed, or the camera reads the two cards
in front of the seats (companion/games/bluffing_battles/camera.py; the same door, ``BattleTable.reveal``); what happened in words; always-visible draw-pile, score-pile and hand counts,
the battle pot and the limit; the reshuffle prompt; undo; the game end. Layout in fight.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.decks.standard52 import RANK_TEXT, SUIT_SYMBOLS, SUITS, StdCard
from companion.games.bluffing_battles import SPEC
from companion.games.bluffing_battles.table import ConfirmReshuffle, Reveal
from companion.ui.widgets import FlatButton

RED = (1.0, 0.45, 0.42, 1)
BLACK = (0.92, 0.95, 0.95, 1)


def _app():
    return App.get_running_app()


class BattlesFightScreen(Screen):
    camera_stop = ""  # why the last camera reading stopped short (for the status line and tests)

    def on_kv_post(self, base):
        self.cards: list[dict[StdCard, FlatButton]] = [{}, {}]
        for i, grid in enumerate((self.ids.grid0, self.ids.grid1)):
            for suit in SUITS:
                for rank in range(2, 15):
                    c = StdCard(rank, suit)
                    b = FlatButton(text=f"{RANK_TEXT[rank]}{SUIT_SYMBOLS[suit]}", font_name="DejaVuSans",
                                   font_size="17sp", color=RED if c.is_red else BLACK, tag=f"bb:card:{i}:{c}",
                                   bg=(0.17, 0.26, 0.29, 1))
                    b.bind(on_press=lambda b, i=i, c=c: self.tap_card(i, c))
                    self.cards[i][c] = b
                    grid.add_widget(b)

    # ---- intents
    def _model(self):
        s = _app().session
        return s.model if s is not None and s.spec is SPEC else None

    def tap_card(self, i, card):
        m = self._model()
        if m is not None and m.round is not None:
            _app().act(Reveal(m.round.players[i], str(card)))

    def reshuffle(self):
        _app().act(ConfirmReshuffle())

    def scan_request(self):
        """The camera reads the revealed cards of the fight (None when no card is to be revealed)."""
        from companion.games.bluffing_battles.camera import fight_request

        m = self._model()
        t = m.round if m is not None else None
        return fight_request(t, seed=len(t.inputs) if t is not None else 0)

    def scan(self):
        _app().start_scan()

    def apply_scan(self, reading):
        """The fight the camera read: each revealed card through the same door as a tap; the first that cannot
        be entered stops there (its reason returned, for the status line)."""
        from companion.games.bluffing_battles.camera import reveals_from_reading

        m = self._model()
        if m is None or m.round is None or not reading.cards:
            return
        plan = reveals_from_reading(m.round, reading.cards)
        for p, c in plan.reveals:
            if not _app().act(Reveal(p, c)):
                break
        self.camera_stop = plan.stop
        self.refresh()
        return plan.stop or None

    def new_game(self):
        _app().next_hand()

    # ---- view
    def refresh(self):
        m = self._model()
        t = m.round if m is not None else None
        ids = self.ids
        if t is None:
            ids.banner.text = "Bluffing Battles"
            ids.event.text = "Start a Bluffing Battles session on the Session screen."
            ids.prompt.text = ids.recent.text = ""
            for i in (0, 1):
                ids[f"name{i}"].text = ""
                ids[f"counts{i}"].text = ""
                ids[f"shown{i}"].text = ""
                for b in self.cards[i].values():
                    b.disabled = True
            for w in (ids.undo, ids.reshuffle, ids.new_game, ids.history, ids.camera):
                w.disabled = True
            return
        s = t.state
        n = t.counts()
        games = len(_app().session.history)
        limit = f"   ·   limit: {t.limit} or fewer cannot reshuffle" if t.limit else ""
        ids.banner.text = f"Game {games + 1} · {t.variant.id}   ·   battle pot: {n['pot']}{limit}"
        ids.event.text = t.event.text
        ids.prompt.text = t.result() or t.prompt()
        ids.recent.text = "\n".join(h.text for h in t.history()[-3:])
        ids.prompt.color = (1, 0.55, 0.45, 1) if t.phase == "reshuffle" else (0.98, 0.78, 0.25, 1)
        last = s.battle[-1] if s.battle else (s.fights[-1].reveals[-1] if s.fights else None)
        for i in (0, 1):
            ids[f"name{i}"].text = t.players[i]
            ids[f"counts{i}"].text = (f"draw pile {n['draw'][i]}   ·   score pile {n['score'][i]}   ·   "
                                      f"hand {n['hand'][i]}")
            pend = t.pending[i]
            if pend is not None:
                ids[f"shown{i}"].text = f"revealed {pend.display()}"
            elif last is not None:
                ids[f"shown{i}"].text = f"last: {last[i].display()}"
            else:
                ids[f"shown{i}"].text = "reveal a card"
            ok = set(t.playable(i))
            for c, b in self.cards[i].items():
                b.disabled = c not in ok
        ids.undo.disabled = not t.can_undo
        ids.camera.disabled = t.phase != "reveal" or None not in t.pending
        ids.reshuffle.disabled = t.phase != "reshuffle"
        who = t.needs_reshuffle()
        ids.reshuffle.text = f"{who} reshuffled" if who else "Reshuffle"
        ids.new_game.disabled = not t.over
        ids.history.disabled = False
