"""The Kivy app: one ScreenManager under a nav bar; the session (pure, companion.session) is the model.

Nothing here is game-specific. The shared screens (companion/ui/screens/) and every registered game's screens
(``GameSpec.screens``), nav entries (``GameSpec.nav``) and intents (``GameSpec.intents``) come from the registry;
docs/adding-a-game.md says how a game plugs in. Every intent goes to the referee through the session
(``act`` / ``_do``), is saved atomically, and the screens are refreshed. Illegal intents show the referee's
reason in the status bar and change nothing. The button box, the camera and the ledger are mixins
(appbox.py, appcamera.py, appledger.py).
"""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

from kivy.app import App
from kivy.clock import Clock
from kivy.core.window import Window
from kivy.lang import Builder
from kivy.properties import BooleanProperty, StringProperty
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.screenmanager import NoTransition
from kivy.uix.settings import SettingsWithNoMenu

from companion.errors import PirateTableError
from companion.games import registry
from companion.session import TableSession
from companion.ui import services
from companion.ui.appbox import BoxMixin
from companion.ui.appcamera import CameraMixin
from companion.ui.appledger import LedgerMixin
from companion.ui.widgets import FlatButton

KV = Path(__file__).with_name("app.kv")

# The shared screens, "module:Class" like a game's (a kv file with the module's name beside each).
SHARED_SCREENS = (
    "companion.ui.screens.start:StartScreen",
    "companion.ui.screens.history:HistoryScreen",
    "companion.ui.screens.ledger:LedgerScreen",
    "companion.ui.screens.settings:SettingsScreen",
    "companion.ui.screens.buttons:ButtonsScreen",
    "companion.ui.screens.scan:ScanScreen",
    "companion.ui.screens.phones:PhonesScreen",
    "companion.ui.screens.enroll:EnrollScreen",
)

SETTINGS = [
    {"type": "title", "title": "Table devices"},
    {"type": "options", "title": "Camera", "desc": "Where the starting cards and hands are read from",
     "section": "table", "key": "camera", "options": ["auto", "simulated", "off", "0", "1", "2", "3"]},
    {"type": "options", "title": "Button box",
     "desc": "auto: find the box by USB VID:PID (none found: the software box); simulated: the software box "
             "(keys 1-8 and on-screen CALL buttons); port: the serial port below",
     "section": "table", "key": "serial", "options": ["auto", "simulated", "port"]},
    {"type": "string", "title": "Serial port", "desc": "Used when Button box is 'port', e.g. /dev/ttyACM0",
     "section": "table", "key": "serial_port"},
    {"type": "bool", "title": "Coach during live hands",
     "desc": "Show the odds coach while a hand is being bid (off: only after the hand, for review)",
     "section": "table", "key": "coach_live"},
    {"type": "title", "title": "Timing"},
    {"type": "numeric", "title": "Simultaneity window (ms)",
     "desc": "Calls within this many ms of the first call are simultaneous (default for new sessions)",
     "section": "table", "key": "window_ms"},
    {"type": "numeric", "title": "Countdown pace (ms per beat)",
     "desc": "going, going, going, dead, dead, dead", "section": "table", "key": "pace_ms"},
    {"type": "bool", "title": "Sounds", "desc": "Beep on calls and countdown beats", "section": "table",
     "key": "sounds"},
]

class Root(BoxLayout):
    pass


def _check_saved(s) -> None:
    """What the screens read from a saved session, read once when it is loaded (a state that loads but would
    crash a screen is kept aside like any unreadable file)."""
    s.stack_series()
    s.history_lines()


class PirateTableApp(BoxMixin, CameraMixin, LedgerMixin, App):
    title = "Pirate Table"
    status_text = StringProperty("")
    status_error = BooleanProperty(False)
    box_text = StringProperty("Box: opening...")

    def __init__(self, demo: bool = False, **kw):
        super().__init__(**kw)
        self.demo = demo
        self.session: TableSession | None = None
        self._origin_ms = 0.0
        self.flagged_presses: list = []     # presses that came while the round was not armed (never calls)
        self._phones = None                 # the PhoneService (companion/table_server), made when first used
        self._phones_trigger = None
        self._phones_last_reveal = None
        self.screens: dict = {}
        self.intents: dict = {}             # game id -> its intents object (GameSpec.intents)
        self.game_screens: dict[str, list[str]] = {}  # game id -> the names of its screens

    def __getattr__(self, name):
        """A game's intents answer as the app's own (``app.bid(...)``): the session's game first, then the
        default game, then any game. Only public names; anything else is an AttributeError as usual."""
        d = self.__dict__
        intents = d.get("intents")
        if name.startswith("_") or not intents:
            raise AttributeError(name)
        s = d.get("session")
        for gid in ([s.game] if s is not None else []) + [registry.DEFAULT_GAME] + sorted(intents):
            obj = intents.get(gid)
            if obj is not None and name in dir(type(obj)):
                return getattr(obj, name)
        raise AttributeError(name)

    # ---------------------------------------------------------------- config (Kivy conventions)
    def get_application_config(self, defaultpath="%(appdir)s/%(appname)s.ini"):
        return str(services.data_dir() / "pirate-table.ini")

    def build_config(self, config):
        config.setdefaults("table", {"camera": "auto", "serial": "auto", "serial_port": "", "window_ms": "10", "pace_ms": "800",
                                     "sounds": "1", "coach_live": "0", **self.camera_deck_defaults()})

    def build_settings(self, settings):
        from companion import __version__

        # the panel's title names the version: what a player reads out when asking for help
        settings.add_json_panel(f"Pirate Table {__version__}", self.config, data=json.dumps(SETTINGS))

    def on_config_change(self, config, section, key, value):
        self.set_status(f"Setting {key} = {value} saved.")
        self._refresh_nav()
        if key in ("serial", "serial_port"):
            self.start_box()

    @staticmethod
    def _post(fn):
        Clock.schedule_once(lambda dt: fn(), 0)

    def on_stop(self):
        self.stop_scan()
        if self._phones is not None:
            self._phones.stop()
        if self.box is not None:
            self.box.close()
            self.box = None

    # ---------------------------------------------------------------- build
    def build(self):
        Builder.load_file(str(KV))
        root = Root()
        self.root_widget = root
        sm = root.ids.sm
        sm.transition = NoTransition()
        self.screens = {}
        for ref in SHARED_SCREENS:
            self.add_screen(ref)
        self.nav_games: dict[str, str] = {}  # nav button id -> the game screen it opens
        for spec in registry.games():
            self.game_screens[spec.id] = [self.add_screen(ref) for ref in spec.screens]
            if spec.intents:
                self.intents[spec.id] = registry.resolve(spec.intents)(self)
            for text, screen in spec.nav:
                self._add_nav(text, screen)
        self.settings_cls = SettingsWithNoMenu
        self.use_kivy_settings = False
        panel = SettingsWithNoMenu()
        self.build_settings(panel)
        panel.bind(on_config_change=lambda s, c, sec, k, v: self.on_config_change(c, sec, k, v))
        self.screens["settings"].ids.holder.add_widget(panel)
        st = self.screens["start"]
        try:
            st.ids.window_ms.value = float(self.config.get("table", "window_ms"))
        except ValueError:
            pass
        Window.bind(on_key_down=self._on_key_down)
        self.go("start")
        self.start_box()
        return root

    def add_screen(self, ref: str) -> str:
        """Add a screen ``"module:Class"``: the kv file beside the module (same name, ``.kv``) is loaded once,
        then the class is made and added to the ScreenManager. Returns the screen's name."""
        module, _, cls_name = ref.partition(":")
        mod = importlib.import_module(module)
        kv = Path(mod.__file__).with_suffix(".kv")
        if kv.exists() and str(kv) not in Builder.files:
            Builder.load_file(str(kv))
        scr = getattr(mod, cls_name)()
        if not scr.name or scr.name in self.screens:
            raise PirateTableError(f"screen {ref}: its name {scr.name!r} is empty or taken")
        self.screens[scr.name] = scr
        self.sm.add_widget(scr)
        return scr.name

    def _add_nav(self, text: str, screen: str) -> None:
        """A game's nav entry (``GameSpec.nav``): a button after 'Ledger', id ``nav_<screen>``, enabled while
        the screen's ``allowed()`` says so."""
        ids = self.root_widget.ids
        bar = ids.nav_ledger.parent
        b = FlatButton(text=text)
        b.bind(on_press=lambda *_: self.go(screen))
        bar.add_widget(b, index=bar.children.index(ids.nav_ledger))
        ids[f"nav_{screen}"] = b
        self.nav_games[f"nav_{screen}"] = screen

    # ---------------------------------------------------------------- navigation
    @property
    def sm(self):
        return self.root_widget.ids.sm

    def allowed(self, name) -> tuple[bool, str]:
        """May this screen be shown now? A screen says so with ``allowed() -> (ok, why)`` (default: yes)."""
        check = getattr(self.screens[name], "allowed", None)
        return check() if check is not None else (True, "")

    def go(self, name):
        ok, why = self.allowed(name)
        if not ok:
            self.set_status(why, error=True)
            return
        if name != "scan":
            self.stop_scan()
        scr = self.screens[name]
        if hasattr(scr, "refresh"):
            scr.refresh()
        self.sm.current = name
        self._refresh_nav()
        self.sync_box_round()

    def _refresh_nav(self):
        nav = self.root_widget.ids
        has = self.session is not None
        nav.nav_hand.disabled = not has
        nav.nav_history.disabled = not has
        nav.nav_ledger.disabled = not (has and self.session.uses_chips)
        for bid, screen in self.nav_games.items():
            nav[bid].disabled = not self.allowed(screen)[0]

    def hand_screen_name(self) -> str:
        if self.session is None:
            return "start"
        return self.session.model.screen()

    def go_hand(self):
        name = self.hand_screen_name()
        if hasattr(self.screens[name], "ensure_started"):
            self.screens[name].ensure_started()
        self.go(name)

    def beep(self, freq=880):
        """Play a short beep when Sounds is on (no audio device: silently nothing)."""
        if self.config.get("table", "sounds") != "1":
            return
        snd = self._sounds.get(freq) if hasattr(self, "_sounds") else None
        if snd is None:
            from kivy.core.audio import SoundLoader

            self._sounds = getattr(self, "_sounds", {})
            try:
                snd = SoundLoader.load(str(services.beep_wav(freq)))
            except Exception:  # no audio backend on this machine
                snd = None
            self._sounds[freq] = snd or False
        if snd:
            snd.play()

    def set_status(self, text, error=False):
        self.status_text = text
        self.status_error = error

    # ---------------------------------------------------------------- persistence
    def save(self):
        if self.session is not None:
            self.session.save(services.session_path())
        if self._phones is not None and self._phones.running:
            # every change ends in a save: the phones get their new views (next frame: never inside a phone's
            # own answer, which the server broadcasts itself)
            if self._phones_trigger is None:
                self._phones_trigger = Clock.create_trigger(lambda dt: self._phones.refresh())
            self._phones_trigger()

    # ---------------------------------------------------------------- phones (companion/table_server)
    @property
    def phones(self):
        """The phone server's handle (docs/phones.md); it listens only between phones_on() and phones_off()."""
        if self._phones is None:
            from companion.table_server.service import PhoneService

            self._phones = PhoneService(on_view=self._on_phone_view)
        return self._phones

    def phones_possible(self) -> bool:
        from companion.table_server.session_source import SessionSource

        return SessionSource.supports(self.session)

    def phones_on(self):
        from companion.table_server.session_source import SessionSource

        if not self.phones_possible():
            self.set_status("This game has no secret answers for phones.", error=True)
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            self.set_status("Phones need the app's event loop (start it with pirate-table app).", error=True)
            return
        self.phones.start(SessionSource(self.session, self._phone_apply))
        self.set_status("Phones: scan your seat's code.")

    def phones_off(self):
        if self._phones is not None:
            self._phones.stop()
        self.set_status("Phones off.")
        self._refresh_phone_screens()

    def phones_reset(self, seat):
        if self._phones is None or not self._phones.running:
            return
        self._phones.server.reset_seat(seat)
        self.set_status(f"{seat}'s seat reset: the old code no longer works; scan the new one.")
        self._refresh_phone_screens()

    def phones_question(self):
        """The open secret question as the tablet may show it (who is still to answer), or None."""
        if self._phones is None or not self._phones.running:
            return None
        return self._phones.server.view_for(None)["question"]

    def phones_answer(self, value) -> bool:
        """The passed tablet answers the open secret question for the next seat still waiting (the same
        SecretRound as the phones). False when no phone question is open (the screen goes its usual way)."""
        q = self.phones_question()
        if q is None:
            return False
        if q["waiting"]:
            try:
                self._phones.server.submit_from_tablet(q["waiting"][0], value)
            except PirateTableError as exc:
                self.set_status(str(exc), error=True)
        return True

    def _phone_apply(self, action):
        """An action from a phone answer or a reveal: through the session and saved, like the tablet's; the
        screen stays where it is, unless it showed the game's state and the game moved on to another screen (the
        phones' last bid revealed the bids, the setter's phone picked a voter): then the tablet follows, on the
        next frame (never inside the phone table's own update). Illegal: the error goes back to the phone."""
        before = self.hand_screen_name()
        self.session.apply(action)
        self.session.save(services.session_path())
        line = self.session.model.describe(action)
        if line:
            self.set_status(line)
        if self.screens and self.hand_screen_name() != before and self.sm.current == before:
            Clock.schedule_once(lambda dt: self._follow_hand(before), 0)

    def _follow_hand(self, was):
        if self.session is not None and self.sm.current == was and self.hand_screen_name() != was:
            self.go(self.hand_screen_name())

    def _on_phone_view(self, view):
        q, r = view["question"], view["reveal"]
        if r is not None and r["id"] != self._phones_last_reveal:
            self._phones_last_reveal = r["id"]
            self.set_status(f"Revealed ({r['kind']}): " + ", ".join(f"{s} {a}" for s, a in r["answers"]))
        self._refresh_phone_screens()

    def _refresh_phone_screens(self):
        if not self.screens or "phones" not in self.screens:
            return
        cur = self.sm.current
        if cur in ("phones", self.hand_screen_name()) and hasattr(self.screens[cur], "refresh"):
            self.screens[cur].refresh()

    def saved_session_info(self):
        from companion.savefile import load_saved

        s, note = load_saved(services.session_path(), TableSession.from_dict, _check_saved)  # a bad file: aside
        if note:
            self.set_status(note, error=True)
            self.saved_note = note  # the start screen shows it whole
        if s is None:
            return None
        phase = (s.model.phase or "in play") if s.hand is not None else "between hands"
        return (f"{s.spec.title}: " if s.game != registry.DEFAULT_GAME else "") + (
                f"{len(s.players)} players ({', '.join(s.players)}), {len(s.history)} hands played, "
                f"hand in play: {phase}.")

    def resume(self):
        if self._phones is not None:  # the phones served the session object being replaced
            self._phones.stop()
        from companion.savefile import load_saved

        session, note = load_saved(services.session_path(), TableSession.from_dict, _check_saved)
        if session is None:
            self.set_status(note or "No saved session.", error=True)
            self.go("start")
            return
        self.session = session
        self._origin_ms = services.now_ms() - self.session.hand_clock_ms
        if self.session.hand is None and not self.session.game_over():
            self.session.new_hand()
            self.save()
        scr = self.screens[self.hand_screen_name()]
        if hasattr(scr, "start"):  # a screen's per-round state (the deal's cards, the showdown's counts)
            scr.start()
        self.set_status(f"Resumed: {len(self.session.history)} hands played.")
        self.go_hand()

    # ---------------------------------------------------------------- intents
    def new_session(self, players, buy_in=None, game=None, options=None, **variants):
        """Start a session of a registered game. ``options``: the game's options (a dict); the start screen's
        variant controls may come as keywords instead (``super_wilds``, ``cyclone``, ``window_ms``, ``ante``)
        and only those the game lists in ``GameSpec.start_options`` are passed on. ``buy_in``: chip games."""
        try:
            spec = registry.get(registry.DEFAULT_GAME if game is None else game)
            opts = dict(options or {})
            opts.update({k: v for k, v in variants.items() if k in spec.start_options})
            s = TableSession(players, buy_in if spec.uses_chips else None, spec.id, opts)
        except PirateTableError as exc:
            self.set_status(str(exc), error=True)
            return
        if s.uses_chips and services.ledger_status()[0]:
            try:
                s.create_ledger(services.new_ledger_path())
            except PirateTableError as exc:
                self.set_status(str(exc), error=True)
                return
        if self._phones is not None:  # a new game: the old table's phones (and their tokens) are done
            self._phones.stop()
        self.session = s
        self._start_hand()
        self.set_status(f"New session: {len(players)} players" + (f", buy-in {buy_in}." if s.uses_chips else "."))

    def _start_hand(self):
        self.session.new_hand()
        self._origin_ms = services.now_ms()
        self.save()
        name = self.hand_screen_name()
        if hasattr(self.screens[name], "start"):
            self.screens[name].start()
        self.go(name)

    def hand_now_ms(self, wall_ms=None) -> float:
        """Hand time (ms since the hand began) of a wall-clock instant; never before the last event."""
        wall = services.now_ms() if wall_ms is None else wall_ms
        return max(self.session.hand_clock_ms, round(wall - self._origin_ms, 3))

    def _do(self, action, then=None):
        try:
            self.session.apply(action)
        except PirateTableError as exc:
            self.set_status(str(exc), error=True)
            return False
        self.save()
        self.set_status(self.session.model.describe(action))
        if then:
            then()
        return True

    def act(self, action):
        """The generic intent: apply a game action through the session (saved at once), then show the screen
        the table model names. An illegal action shows the referee's reason and changes nothing."""
        return self._do(action, lambda: self.go(self.hand_screen_name()))

    def undo(self):
        if self.session is None or self.session.hand is None:
            return
        model = self.session.model
        if not model.can_undo():
            self.set_status("Nothing to undo in this hand.", error=True)
            return
        for scr in (*self.intents.values(), *self.screens.values()):  # e.g. the countdown's beats stop
            if hasattr(scr, "before_undo"):
                scr.before_undo()
        was, armed = model.phase, model.buttons_armed()
        a = self.session.undo()
        self.save()
        if armed and model.buttons_armed() and model.phase != was:
            self.sync_box_round(rearm=True)  # a new round: the box's first-call latch and lights cleared
        self.set_status(f"Undone: {model.describe(a) or type(a).__name__}")
        scr = self.screens[self.hand_screen_name()]
        if hasattr(scr, "after_undo"):  # the screen restores what the undone action had taken in
            scr.after_undo(a)
        self.go(scr.name)

    def next_hand(self):
        """Commit the finished round and begin the next (or show the game's end when its plan is done)."""
        if self.session is None or self.session.hand is None or not self.session.model.round_over():
            return
        self.session.finish_hand()
        if self.session.game_over():
            self.save()
            self.set_status(f"{self.session.spec.title}: the game is over.")
            self.go(self.hand_screen_name())
            return
        self._start_hand()
        self.set_status(self.session.model.round_intro(len(self.session.history) + 1))

