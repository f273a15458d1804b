"""The race screen: the board drawn with every counter, the pile/board/reshuffle counts, the active player's
guided turn (draw two, then lay a set / discard / keep; or All aboard with legal targets only), the last reveal
with a short animation and words, undo and history. Layout in race.kv."""

from __future__ import annotations

import math

from kivy.animation import Animation
from kivy.app import App
from kivy.core.text import Label as CoreLabel
from kivy.graphics import Color, Ellipse, Line, Rectangle, RoundedRectangle
from kivy.metrics import dp, sp
from kivy.properties import NumericProperty, ObjectProperty
from kivy.uix.screenmanager import Screen
from kivy.uix.widget import Widget

from companion.games.bluff_pirate import SPEC
from companion.games.bluff_pirate.deck import KINDS
from companion.games.bluff_pirate.model import Intent
from companion.ui.widgets import PALETTE, FlatButton, label as _lab

ISLAND_TEXT = {"unknown": "?", "empty": "empty", "treasure": "TREASURE"}


def _app():
    return App.get_running_app()


def race_of(app):
    """The race in play when the session is a Bluff Pirate one, else None."""
    s = getattr(app, "session", None)
    if s is None or s.spec is not SPEC or s.model.round is None:
        return None
    return s.model.round


def counter_tags(players):
    """Two letters per counter: the name's first two, or its initial and seat when those clash."""
    two = [p[:2] for p in players]
    return {p: (t if two.count(t) == 1 else f"{p[0]}{k + 1}") for k, (p, t) in enumerate(zip(players, two))}


class RaceBoard(Widget):
    """The board: squares 0..track-1 in a snake, two treasure islands at the end, a counter per player.
    ``view`` is the race's public view; ``moves`` (player -> (from, to)) animate with ``progress`` from 0 to 1."""

    view = ObjectProperty(None, allownone=True)
    progress = NumericProperty(1.0)
    glow = NumericProperty(0.0)
    glow_island = NumericProperty(-1)

    def __init__(self, **kw):
        super().__init__(**kw)
        self.moves = {}
        self.bind(pos=self.redraw, size=self.redraw, view=self.redraw, progress=self.redraw, glow=self.redraw)

    # geometry
    def _layout(self, track):
        w, h = self.width * 0.80, self.height
        cols = max(5, min(12, math.ceil(math.sqrt(track * w / max(h, 1)))))
        rows = math.ceil(track / cols)
        cell = min(w / cols, h / rows)
        x0 = self.x + (w - cols * cell) / 2
        y0 = self.y + (h + rows * cell) / 2
        return cols, rows, cell, x0, y0

    def square_center(self, k, track):
        """Laid out backwards from the islands: the last square is always bottom right, beside them."""
        cols, rows, cell, x0, y0 = self._layout(track)
        j = track - 1 - int(k)
        r, c = divmod(j, cols)
        c = cols - 1 - c if r % 2 == 0 else c
        return x0 + (c + 0.5) * cell, y0 - (rows - 1 - r + 0.5) * cell

    def island_center(self, i):
        cols, rows, cell, x0, y0 = self._layout(self.view["track"] if self.view else 30)
        cx = self.x + self.width * 0.90
        bottom = y0 - rows * cell
        if rows >= 3:
            return cx, bottom + cell * (0.85 + 2.0 * (1 - i))
        return cx, self.y + self.height * (0.72 - 0.44 * i)

    @staticmethod
    def counter_radius(cell):
        return min(max(dp(11), cell * 0.17), dp(22))

    def spot(self, pos, player_index, track, islands, winner, name):
        """Where a counter at ``pos`` (float while animating) is drawn."""
        if pos >= track:
            if winner == name and "treasure" in islands:
                i = islands.index("treasure")
            elif "empty" in islands:
                i = islands.index("empty")
            else:
                i = None                  # landing now: between the two islands
            if i is None:
                (ax, ay), (bx, by) = self.island_center(0), self.island_center(1)
                cx, cy = (ax + bx) / 2, (ay + by) / 2
            else:
                cx, cy = self.island_center(i)
                cy -= min(self.width * 0.085, self._layout(track)[2] * 0.8) * 0.45   # below the token's words
        else:
            a = math.floor(pos)
            ax, ay = self.square_center(a, track)
            if a + 1 >= track:          # sailing from the last square onto an island
                i = islands.index("treasure") if winner == name and "treasure" in islands else (
                    islands.index("empty") if "empty" in islands else 0)
                bx, by = self.island_center(i)
            else:
                bx, by = self.square_center(a + 1, track)
            f = pos - a
            cx, cy = ax + (bx - ax) * f, ay + (by - ay) * f
        _, _, cell, _, _ = self._layout(track)
        off = max(cell * 0.24, self.counter_radius(cell) * 1.05)
        dx, dy = [(-off, off), (off, off), (-off, -off), (off, -off), (0, 0)][player_index % 5]
        return cx + dx, cy + dy

    def redraw(self, *_):
        self.canvas.clear()
        v = self.view
        if not v or self.width < 10:
            return
        track, players = v["track"], v["players"]
        cols, rows, cell, x0, y0 = self._layout(track)
        islands, winner = v["islands"], v["winner"]
        with self.canvas:
            # the sea
            Color(0.08, 0.22, 0.30, 1)
            RoundedRectangle(pos=self.pos, size=self.size, radius=[dp(10)])
            # the path through the squares
            Color(0.55, 0.45, 0.30, 1)
            pts = []
            for k in range(track):
                pts += list(self.square_center(k, track))
            if len(pts) >= 4:
                Line(points=pts, width=dp(2))
            last = self.square_center(track - 1, track)
            for i in range(2):
                Line(points=[*last, *self.island_center(i)], width=dp(2), dash_length=dp(6), dash_offset=dp(4))
            # squares
            for k in range(track):
                cx, cy = self.square_center(k, track)
                s = cell * 0.82
                Color(*((0.93, 0.86, 0.66, 1) if k else (0.70, 0.85, 0.70, 1)))
                RoundedRectangle(pos=(cx - s / 2, cy - s / 2), size=(s, s), radius=[s * 0.15])
                if k % 5 == 0 or k == track - 1:
                    self._text("START" if k == 0 else str(k), cx, cy - s * 0.33, max(sp(9), min(cell * 0.18, sp(15))),
                               (0.35, 0.28, 0.18, 1))
            # the two treasure islands
            for i in range(2):
                cx, cy = self.island_center(i)
                r = min(self.width * 0.085, cell * 0.8) * (1 + 0.25 * self.glow * (i == self.glow_island))
                state = islands[i]
                Color(*{"unknown": (0.85, 0.75, 0.45, 1), "empty": (0.55, 0.55, 0.55, 1),
                        "treasure": (0.98, 0.78, 0.25, 1)}[state])
                Ellipse(pos=(cx - r, cy - r), size=(2 * r, 2 * r))
                Color(0.25, 0.55, 0.30, 1)
                Line(circle=(cx, cy, r), width=dp(3))
                self._text(f"Island {i + 1}", cx, cy + r * 0.45, sp(13), (0.15, 0.15, 0.1, 1))
                self._text(ISLAND_TEXT[state], cx, cy - r * 0.1, sp(17 if state == "treasure" else 20),
                           (0.45, 0.1, 0.05, 1) if state == "treasure" else (0.15, 0.15, 0.1, 1), bold=True)
            # counters
            rad = self.counter_radius(cell)
            tags = counter_tags(players)
            for k, p in enumerate(players):
                pos = v["positions"][p]
                if p in self.moves:
                    a, b = self.moves[p]
                    pos = a + (b - a) * self.progress
                x, y = self.spot(pos, k, track, islands, winner, p)
                Color(0, 0, 0, 0.5)
                Ellipse(pos=(x - rad + dp(1.5), y - rad - dp(1.5)), size=(2 * rad, 2 * rad))
                Color(*PALETTE[k % len(PALETTE)])
                Ellipse(pos=(x - rad, y - rad), size=(2 * rad, 2 * rad))
                Color(0.1, 0.1, 0.1, 1)
                Line(circle=(x, y, rad), width=dp(1.2) if p != v["current"] else dp(2.5))
                self._text(tags[p], x, y, rad * 0.95, (0.05, 0.05, 0.05, 1), bold=True)

    def _text(self, text, cx, cy, size, color, bold=False):
        lab = CoreLabel(text=text, font_size=size, bold=bold)
        lab.refresh()
        tex = lab.texture
        Color(*color)
        Rectangle(texture=tex, pos=(cx - tex.width / 2, cy - tex.height / 2), size=tex.size)

    def animate(self, moves):
        """Slide the counters in ``moves`` (player -> (from, to)) to their new squares."""
        self.moves = dict(moves)
        Animation.cancel_all(self, "progress")
        self.progress = 0.0
        anim = Animation(progress=1.0, duration=0.9, transition="out_quad")
        anim.bind(on_complete=lambda *_: self._done())
        anim.start(self)

    def flash_island(self, i):
        """The token on island ``i`` was turned over: the island swells and settles."""
        self.glow_island = i
        Animation.cancel_all(self, "glow")
        self.glow = 0.0
        (Animation(glow=1.0, duration=0.35) + Animation(glow=0.0, duration=0.6)).start(self)

    def _done(self):
        self.moves = {}
        self.redraw()


class BluffPirateRaceScreen(Screen):
    """The race in play: the board, whose turn and what to do now, counts, the last reveal, undo, history."""

    mode = None         # None | "board" (choosing a target) | "discard" (choosing the card)
    _shown_reveal = None
    _islands = None

    def refresh(self):
        app = _app()
        t = race_of(app)
        box = self.ids.actions
        box.clear_widgets()
        self.ids.players.clear_widgets()
        if t is None:
            self.ids.board.view = None
            self.ids.banner.text = "Bluff Pirate"
            self.ids.guide.text = "Start a Bluff Pirate session on the Session screen."
            self.ids.counts.text = self.ids.reveal.text = ""
            self.ids.undo.disabled = True
            return
        v = t.public_view()
        self.ids.board.view = v
        me = v["current"]
        self.ids.banner.text = (f"{v['winner']} wins!" if v["winner"] else f"Turn {v['turn']}: {me}")
        self.ids.counts.text = (f"Pile {v['pile']}   Board {v['board']}   Reshuffles {v['reshuffles']}"
                                f"   Track {v['track']}")
        for k, p in enumerate(v["players"]):
            lead = " (lead)" if p in v["leaders"] and len(v["leaders"]) < len(v["players"]) else ""
            self.ids.players.add_widget(_lab(p + lead, "19sp", bold=p == me, color=PALETTE[k % len(PALETTE)]))
            self.ids.players.add_widget(_lab(f"square {v['positions'][p]}", "18sp"))
            n = v["hand_sizes"][p]
            self.ids.players.add_widget(_lab(f"{n} card{'' if n == 1 else 's'}", "18sp"))
        self.ids.undo.disabled = not v["can_undo"]
        self._reveal(t)
        step = v["step"]
        hand = v["hand_sizes"].get(me, 0)
        if step == "over":
            self.mode = None
            self.ids.guide.text = f"{v['winner']} found the treasure! Start the next race, or look at the history."
            box.add_widget(self._button("Next race", "bp:next", lambda: app.next_hand(), (0.15, 0.50, 0.30, 1)))
            return
        if step == "draw":
            if self.mode == "board":
                self.ids.guide.text = f"All aboard! {me} plays a pirate card and takes 3 cards from a player ahead:"
                for p, why in v["board_options"].items():
                    b = self._button(f"Board {p}" if why is None else why, f"bp:board:{p}",
                                     lambda p=p: self._board(p), (0.55, 0.25, 0.15, 1))
                    b.disabled = why is not None
                    box.add_widget(b)
                box.add_widget(self._button("Back", "bp:back", self._back))
                return
            self.ids.guide.text = f"{me}: draw two cards from the pile (pile {v['pile']}), or board a ship."
            box.add_widget(self._button("Draw two", "bp:draw", lambda: app.act(Intent("draw")),
                                        (0.15, 0.50, 0.30, 1)))
            targets = [p for p, why in v["board_options"].items() if why is None]
            b = self._button("All aboard!" if targets else
                             f"All aboard: {next(iter(v['board_options'].values()))}", "bp:aboard",
                             self._aboard, (0.55, 0.25, 0.15, 1))
            b.disabled = not targets
            box.add_widget(b)
            return
        # step == "choose": after drawing
        drew = v["drawn"]
        if self.mode == "discard":
            self.ids.guide.text = f"{me}: which card do you lay face up on the board?"
            for k in KINDS:
                box.add_widget(self._button(f"Discard {k}", f"bp:discard:{k}",
                                            lambda k=k: self._discard(k)))
            box.add_widget(self._button("Back", "bp:back", self._back))
            return
        can_discard = hand >= 5
        self.ids.guide.text = (f"{me} drew {drew} and holds {hand}: lay a set of 3-5 (1 or 2 face up), or "
                               + ("remove one card." if can_discard else "keep the cards (fewer than 5)."))
        b = self._button("Lay a set", "bp:set", lambda: app.go("bp_set"), (0.15, 0.50, 0.30, 1))
        b.disabled = hand < 3
        box.add_widget(b)
        if can_discard:
            box.add_widget(self._button("Remove a card", "bp:discard", self._discard_mode))
        else:
            box.add_widget(self._button("Keep the cards", "bp:keep", lambda: app.act(Intent("keep"))))

    def _reveal(self, t):
        lines = t.history[-1:]
        self.ids.reveal.text = lines[0] if lines else \
            "The race begins: the app has hidden the treasure on one of the two islands."
        r = t.last_reveal
        if r is not None and r is not self._shown_reveal:
            self._shown_reveal = r
            self.ids.reveal.opacity = 0
            Animation(opacity=1, duration=0.5).start(self.ids.reveal)
            if r.moves:
                self.ids.board.animate(r.moves)
        isl = tuple(t.islands_view())
        if self._islands is not None and isl != self._islands and len(isl) == len(self._islands):
            for i, (was, now) in enumerate(zip(self._islands, isl)):
                if was != now:
                    self.ids.board.flash_island(i)
        self._islands = isl

    def _button(self, text, tag, fn, bg=(0.20, 0.32, 0.36, 1)):
        b = FlatButton(text=text, tag=tag, bg=bg, size_hint_y=None, height=dp(56), font_size="20sp")
        b.bind(on_press=lambda *_: fn())
        return b

    def _aboard(self):
        self.mode = "board"
        self.refresh()

    def _discard_mode(self):
        self.mode = "discard"
        self.refresh()

    def _back(self):
        self.mode = None
        self.refresh()

    def _board(self, target):
        self.mode = None
        _app().act(Intent("board", (target,)))

    def _discard(self, kind):
        self.mode = None
        _app().act(Intent("discard", (kind,)))

    def before_undo(self):
        self.mode = None
