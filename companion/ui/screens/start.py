"""The start screen: a new session of any registered game, or resume the saved one. Layout in start.kv beside this
module."""

from __future__ import annotations

from kivy.app import App
from kivy.metrics import dp
from kivy.uix.textinput import TextInput
from kivy.uix.screenmanager import Screen

from companion.games import registry
from companion.ui.widgets import FlatToggle

DEFAULT_NAMES = ["Arville", "Bethany", "Carter", "Douglas", "Eris", "Fenwick", "Greta", "Hollis", "Ingrid", "Jasper"]


def _app():
    return App.get_running_app()


class StartScreen(Screen):
    """A new session: every registered game with its player range (companion.games.registry), the players,
    and the variants the chosen game lists in ``GameSpec.start_options``; or resume the saved session. A game
    with a ``setup_screen`` is set up there instead (its screen gets the names typed here)."""

    VARIANTS = {"ante": ("ante",), "window_ms": ("window_ms",), "super_wilds": ("super_wilds",),
                "cyclone": ("cyc_off", "cyc_left", "cyc_right")}

    def on_kv_post(self, base):
        self.count = 5
        self.name_inputs = []
        self.game_buttons: dict[str, FlatToggle] = {}
        self.game = registry.DEFAULT_GAME
        for i in range(max(g.max_players for g in registry.games())):  # made once; a game shows its range
            self.name_inputs.append(TextInput(text=DEFAULT_NAMES[i % len(DEFAULT_NAMES)], multiline=False,
                                              font_size="24sp", write_tab=False, padding=[dp(10), dp(12)]))
        # the default game first, then by title
        specs = sorted(registry.games(), key=lambda g: (g.id != registry.DEFAULT_GAME, g.title))
        self.ids.games.cols = 2 if len(specs) <= 4 else 3
        if len(specs) > 2:  # more rows of games: a little lower each, so the column still fits
            self.ids.games.row_default_height = dp(50)
        for spec in specs:
            b = FlatToggle(text=f"{spec.title} ({spec.min_players}-{spec.max_players})", group="game",
                           allow_no_selection=False, state="down" if spec.id == self.game else "normal",
                           tag=f"game:{spec.id}", font_size="22sp" if len(specs) <= 4 else "18sp")
            b.bind(on_press=lambda b, g=spec.id: self.pick_game(g))
            self.game_buttons[spec.id] = b
            self.ids.games.add_widget(b)
        self.pick_game(self.game)

    def pick_game(self, game):
        """Choose the game: the player-count row shows its range, the variants it does not use are disabled."""
        self.game = game
        spec = registry.get(game)
        for gid, b in self.game_buttons.items():
            b.state = "down" if gid == game else "normal"
        self.ids.count_row.clear_widgets()
        counts = range(spec.min_players, spec.max_players + 1)
        for n in counts:  # a long range shows the numbers alone, so that they fit
            b = FlatToggle(text=f"{n} players" if len(counts) <= 6 else str(n), group="count",
                           allow_no_selection=False, tag=f"count:{n}")
            b.bind(on_press=lambda b, n=n: self.set_count(n))
            self.ids.count_row.add_widget(b)
        self.ids.names.clear_widgets()
        for t in self.name_inputs[: spec.max_players]:
            self.ids.names.add_widget(t)
        self.set_count(min(max(self.count, spec.min_players), spec.max_players))
        self.ids.buy_in.disabled = not spec.uses_chips
        for opt, wids in self.VARIANTS.items():
            for w in wids:
                self.ids[w].disabled = opt not in spec.start_options

    def set_count(self, n):
        self.count = n
        for b in self.ids.count_row.children:
            b.state = "down" if b.tag == f"count:{n}" else "normal"
        for i, t in enumerate(self.name_inputs):
            t.disabled = i >= n
            t.opacity = 1 if i < n else 0.25

    def start_session(self):
        ids = self.ids
        spec = registry.get(self.game)
        players = [t.text for t in self.name_inputs[: self.count]]
        if spec.setup_screen:  # the game sets itself up (seats, options) and calls app.new_session
            scr = _app().screens[spec.setup_screen]
            if hasattr(scr, "setup"):
                scr.setup(players)
            _app().go(spec.setup_screen)
            return
        cyclone = "left" if ids.cyc_left.state == "down" else "right" if ids.cyc_right.state == "down" else None
        _app().new_session(
            players=players,
            buy_in=int(ids.buy_in.value),
            game=spec.id,
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
