"""The Kivy app: one ScreenManager under a nav bar; the session (pure, companion.session) is the model.

Every intent (reveal, bid, call, countdown, showdown, undo, next hand) goes to the referee through the
session, is saved atomically, and the screens are refreshed. Illegal intents show the referee's reason in the
status bar and change nothing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from kivy.app import App
from kivy.clock import Clock
from kivy.core.window import Window
from kivy.lang import Builder
from kivy.properties import BooleanProperty, StringProperty
from kivy.uix.screenmanager import NoTransition
from kivy.uix.settings import SettingsWithNoMenu

from companion.errors import PirateTableError
from companion.games.pirates_bluff import Call, Bid, Countdown, Options, RevealStarting, Showdown
from companion.session import TableSession
from companion.ui import services
from companion.ui.boxservice import BoxService
from companion.ui.screens import (
    BidScreen, ButtonsScreen, CoachScreen, DealScreen, HistoryScreen, LedgerScreen, PowderkegScreen, Root,
    RulingScreen, ScanScreen, SettingsScreen, ShowdownScreen, StartScreen,
)

KV = Path(__file__).with_name("pirate_table.kv")

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


def _check_saved(s) -> None:
    """What the screens read from a saved session, read once when it is loaded (a state that loads but would
    crash a screen is kept aside like any unreadable file)."""
    from companion.ui.screens import hand_summary

    s.stack_series()
    for r in s.history:
        hand_summary(r)


class PirateTableApp(App):
    title = "Pirate Table"
    status_text = StringProperty("")
    status_error = BooleanProperty(False)
    box_text = StringProperty("Box: opening...")

    def __init__(self, demo: bool = False, **kw):
        super().__init__(**kw)
        self.demo = demo
        self.session: TableSession | None = None
        self._origin_ms = 0.0
        self._window_ev = None
        self.box: BoxService | None = None
        self.box_round: int | None = None   # the round armed on the box (None: disarmed)
        self.flagged_presses: list = []     # presses that came while the round was not armed (never calls)
        self.camera = None                  # the CameraService of the scan in progress (companion/ui/camservice)
        self.scan_seed: int | None = None   # the simulated table's seed (None: from the hand number)

    # ---------------------------------------------------------------- config (Kivy conventions)
    def get_application_config(self, defaultpath="%(appdir)s/%(appname)s.ini"):
        return str(services.data_dir() / "pirate-table.ini")

    def build_config(self, config):
        config.setdefaults("table", {"camera": "auto", "serial": "auto", "serial_port": "", "window_ms": "10", "pace_ms": "800",
                                     "sounds": "1", "coach_live": "0"})

    def build_settings(self, settings):
        settings.add_json_panel("Pirate Table", self.config, data=json.dumps(SETTINGS))

    def on_config_change(self, config, section, key, value):
        self.set_status(f"Setting {key} = {value} saved.")
        if key == "coach_live" and self.session is not None:
            self.root_widget.ids.nav_coach.disabled = not self.coach_allowed()[0]
        if key in ("serial", "serial_port"):
            self.start_box()

    # ---------------------------------------------------------------- the button box (companion/ui/boxservice)
    def serial_setting(self) -> str:
        mode = self.config.get("table", "serial")
        if mode == "port":
            return self.config.get("table", "serial_port").strip() or "auto"
        return mode

    def start_box(self):
        """(Re)open the box chosen in Settings on the service's thread; the status bar follows it."""
        if self.box is not None:
            self.box.close()
        self.box_round = None
        self.box_text = "Box: opening..."
        self.box = BoxService(self.serial_setting(), self._post, on_press=self.on_box_press,
                              on_state=self.on_box_state, on_event=self.on_box_event).start()

    @staticmethod
    def _post(fn):
        Clock.schedule_once(lambda dt: fn(), 0)

    def on_stop(self):
        self.stop_scan()
        if self.box is not None:
            self.box.close()
            self.box = None

    # ---------------------------------------------------------------- the camera (companion/ui/camservice)
    def camera_source(self) -> str:
        """Settings > Camera; in demo mode 'auto' is the simulated table camera."""
        src = self.config.get("table", "camera")
        return "simulated" if src == "auto" and self.demo else src

    def start_scan(self):
        """Scan the starting cards: the camera service on its worker thread, the preview on the Scan screen."""
        from companion.ui.camservice import CameraService

        h = self.session.hand if self.session else None
        if h is None or self.session.game == "powderkeg" or h.phase != "starting":
            return
        self.stop_scan()
        src = self.camera_source()
        seed = self.scan_seed if self.scan_seed is not None else 200 + 1000 * len(self.session.history)
        scr = self.screens["scan"]
        scr.begin(src)
        cs = None

        def mine(fn):
            return lambda *a: fn(*a) if self.camera is cs else None

        cs = CameraService(src, self.session.players, self._post, on_frame=mine(scr.show_frame),
                           on_reading=mine(self.on_scan_reading), on_error=mine(self.on_scan_error), seed=seed)
        self.camera = self.last_scan = cs
        cs.start()
        self.go("scan")

    def stop_scan(self):
        if self.camera is not None:
            self.camera.stop(wait=0.0)
            self.camera = None

    def end_scan(self):
        self.stop_scan()
        self.go_hand()

    def on_scan_reading(self, reading):
        self.last_reading = reading
        if reading.cards and self.session.hand is not None and self.session.hand.phase == "starting":
            self.screens["deal"].apply_scan(reading)
        self.screens["scan"].show_reading(reading)
        self.set_status(reading.note, error=bool(reading.unreadable) or not reading.cards)
        self.camera = None

    def on_scan_error(self, text):
        self.screens["scan"].show_error(text)
        self.set_status(text, error=True)
        self.camera = None

    # ---------------------------------------------------------------- the coach (companion.odds)
    def coach_allowed(self) -> tuple[bool, str]:
        """The coach is for after a hand; during a live hand only when Settings turns it on."""
        s = self.session
        h = s.hand if s else None
        if s is None or s.game == "powderkeg" or h is None:
            return False, "The coach is for a Pirate's Bluff hand in play or just ruled."
        if h.phase == "starting":
            return False, "The coach needs the starting cards revealed."
        if h.phase in ("bidding", "called") and self.config.get("table", "coach_live") != "1":
            return False, "The coach is off during a live hand (Settings: Coach during live hands)."
        return True, ""

    def on_box_state(self, st):
        self.box_text = st.text()
        self.screens["buttons"].refresh()
        self.sync_box_round()

    def on_box_event(self, kind, detail):
        if kind == "reboot":
            self.set_status("The button box rebooted: presses not yet acknowledged are lost; the round is "
                            "re-armed.", error=True)
        elif kind == "disconnected":
            self.set_status("The button box is disconnected: reconnecting...", error=True)
        elif kind == "reconnected":
            self.set_status(f"The button box is back on {detail}.")
        elif kind in ("error", "rearm-failed", "callback-error"):
            self.set_status(str(detail), error=True)

    def _box_ok(self) -> bool:
        return self.box is not None and self.box.box is not None and self.box.box.connected

    def sync_box_round(self, rearm=False):
        """Armed while a Pirate's Bluff hand is bidding or called; disarmed otherwise (and between hands)."""
        if not self._box_ok():
            return
        h = self.session.hand if self.session else None
        want = (self.session is not None and self.session.game != "powderkeg" and h is not None
                and h.phase in ("bidding", "called"))
        if want and (self.box_round is None or rearm):
            self.box_round = self.box.arm()
        elif not want and self.box_round is not None:
            self.box_round = None
            self.box.disarm()

    def on_box_press(self, press):
        """A press from the box (real or software), on the UI thread: a call with the box's timestamp."""
        who = [self.session.players[s - 1] if self.session and s <= len(self.session.players) else f"seat {s}"
               for s in press.seats]
        if not press.armed or self.box_round is None or press.round != self.box_round:
            self.flagged_presses.append(press)
            self.set_status(f"{' & '.join(who)} pressed before the round was armed (or after it ended): "
                            "not a call.", error=True)
            return
        wall = BoxService.wall_ms(press)
        for p in who:
            if self.session and p in self.session.players:
                self.call(p, wall)

    def press_call(self, player, touch_wall_s=None):
        """An on-screen CALL button or key 1-8: presses the software box (the call comes back from the box).
        With a real box the buttons on the box are the only way to call."""
        seat = self.session.players.index(player) + 1
        if self.box is not None and self.box.simulated:
            if not self.box.press_seat(seat, touch_wall_s):
                self.set_status(f"No button assigned to seat {seat}: assign seats on the Buttons screen.",
                                error=True)
        elif self._box_ok():
            self.set_status(f"{player}: press your button on the box.", error=True)
        else:  # no box at all (the software box failed to start): the touch's own time
            self.call(player, None if touch_wall_s is None else touch_wall_s * 1000.0)

    def buzz_first_bidder(self):
        if self._box_ok():
            self.box.buzz(pattern=2, freq_hz=2000, duration_ms=400)

    def buzz_beat(self, n):
        """Beat n (1..6) of the countdown: three 'going' at a high pitch, three 'dead' low and longer."""
        if self._box_ok():
            self.box.buzz(pattern=1, freq_hz=1500 if n <= 3 else 800, duration_ms=150 if n <= 3 else 300)

    @property
    def pace_s(self) -> float:
        return max(0.05, self.config.getfloat("table", "pace_ms") / 1000.0)

    # ---------------------------------------------------------------- build
    def build(self):
        Builder.load_file(str(KV))
        root = Root()
        sm = root.ids.sm
        sm.transition = NoTransition()
        self.screens = {}
        for cls in (StartScreen, DealScreen, BidScreen, ShowdownScreen, RulingScreen, HistoryScreen,
                    LedgerScreen, PowderkegScreen, SettingsScreen, ButtonsScreen, ScanScreen, CoachScreen):
            scr = cls()
            self.screens[scr.name] = scr
            sm.add_widget(scr)
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
        self.root_widget = root
        self.go("start")
        self.start_box()
        return root

    # ---------------------------------------------------------------- navigation
    @property
    def sm(self):
        return self.root_widget.ids.sm

    def go(self, name):
        if name == "coach" and not self.coach_allowed()[0]:
            self.set_status(self.coach_allowed()[1], error=True)
            return
        if name != "scan":
            self.stop_scan()
        scr = self.screens[name]
        if hasattr(scr, "refresh"):
            scr.refresh()
        self.sm.current = name
        nav = self.root_widget.ids
        has = self.session is not None
        nav.nav_hand.disabled = not has
        nav.nav_history.disabled = not has
        nav.nav_ledger.disabled = not has
        nav.nav_coach.disabled = not self.coach_allowed()[0]
        self.sync_box_round()

    def hand_screen_name(self) -> str:
        h = self.session.hand if self.session else None
        if self.session is None:
            return "start"
        if self.session.game == "powderkeg":
            return "powderkeg"
        if h is None:
            return "ruling"
        return {"starting": "deal", "bidding": "bid", "called": "showdown", "over": "ruling"}[h.phase]

    def go_hand(self):
        name = self.hand_screen_name()
        if name == "deal" and not self.screens["deal"].cards:
            self.screens["deal"].start()
        if name == "showdown" and not hasattr(self.screens["showdown"], "counts"):
            self.screens["showdown"].start()
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

    def saved_session_info(self):
        from companion.savefile import load_saved

        s, note = load_saved(services.session_path(), TableSession.from_dict, _check_saved)  # a bad file: aside
        if note:
            self.set_status(note, error=True)
            self.saved_note = note  # the start screen shows it whole
        if s is None:
            return None
        phase = s.hand.phase if s.hand else "between hands"
        return (f"{len(s.players)} players ({', '.join(s.players)}), {len(s.history)} hands played, "
                f"hand in play: {phase}.")

    def resume(self):
        from companion.savefile import load_saved

        session, note = load_saved(services.session_path(), TableSession.from_dict, _check_saved)
        if session is None:
            self.set_status(note or "No saved session.", error=True)
            self.go("start")
            return
        self.session = session
        self._origin_ms = services.now_ms() - self.session.hand_clock_ms
        if self.session.hand is None:
            self.session.new_hand()
            self.save()
        if self.session.hand.phase == "called":
            self.screens["showdown"].start()
        if self.session.hand.phase == "starting":
            self.screens["deal"].start()
        self.set_status(f"Resumed: {len(self.session.history)} hands played.")
        self.go_hand()

    # ---------------------------------------------------------------- intents
    def new_session(self, players, buy_in, game, super_wilds, cyclone, window_ms, ante):
        try:
            opts = Options(super_wilds=super_wilds, window_ms=window_ms, ante=ante, cyclone=cyclone)
            s = TableSession(players, buy_in, game, opts)
            if game == "powderkeg" and not services.powderkeg_status()[0]:
                raise PirateTableError(services.powderkeg_status()[1])
        except PirateTableError as exc:
            self.set_status(str(exc), error=True)
            return
        if services.ledger_status()[0]:
            try:
                s.create_ledger(services.new_ledger_path())
            except PirateTableError as exc:
                self.set_status(str(exc), error=True)
                return
        self.session = s
        self._start_hand()
        self.set_status(f"New session: {len(players)} players, buy-in {buy_in}.")

    def _start_hand(self):
        self.session.new_hand()
        self._origin_ms = services.now_ms()
        self.save()
        if self.session.game == "powderkeg":
            self.go("powderkeg")
            return
        self.screens["deal"].start()
        self.go("deal")

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
        self.set_status(str(action) if not isinstance(action, (RevealStarting, Showdown)) else "")
        if then:
            then()
        return True

    def reveal(self, cards):
        def after():
            h = self.session.hand
            fb = h.first_bidder
            self.set_status(f"{fb} holds the lowest card ({h.starting_cards[fb]}) and bids first.")
            self.screens["bid"].bidder = fb
            self.screens["bid"].q0 = None
            self.go("bid")
            self.buzz_first_bidder()
        self._do(RevealStarting.of(cards), after)

    def bid(self, player, q, r):
        self.screens["bid"].stop_beats()

        def after():
            self.screens["bid"].bidder = None
            self.screens["bid"].q0 = None
            self.go("bid")
        self._do(Bid(player, q, r, self.hand_now_ms()), after)

    def call(self, player, wall_ms=None):
        h = self.session.hand if self.session else None
        if h is None or h.phase not in ("bidding", "called") or self.sm.current not in ("bid", "showdown"):
            return
        first = h.phase == "bidding"
        self.screens["bid"].stop_beats()
        if self._do(Call(player, self.hand_now_ms(wall_ms))):
            h = self.session.hand
            self.beep(1320)
            self.set_status(f"CALL: {' & '.join(h.callers)}"
                            + (" (simultaneous)" if len(h.callers) > 1 else ""))
            self.screens["bid"].refresh()
            if first:
                # late simultaneous presses still in flight from the box (resent every 20 ms if lost)
                wait = h.options.window_ms / 1000.0 + 0.15
                self._window_ev = Clock.schedule_once(self._window_closed, wait)
            elif self.sm.current == "showdown":
                self.screens["showdown"].refresh()

    def _window_closed(self, dt):
        self._window_ev = None
        h = self.session.hand
        if h is not None and h.phase == "called":
            self.screens["showdown"].start()
            self.go("showdown")

    def countdown_start(self):
        h = self.session.hand
        if h.standing_bid is None:
            return
        if self._do(Countdown(h.bidders[0], self.hand_now_ms(), complete=False)):
            self.screens["bid"].refresh()
            self.screens["bid"].start_beats(self.pace_s)

    def countdown_dead(self):
        h = self.session.hand
        if h.phase != "bidding" or h.countdown_by is None:
            return
        self._do(Countdown(h.countdown_by, self.hand_now_ms(), complete=True), lambda: self.go("ruling"))

    def showdown(self, counts):
        self._do(Showdown.of_counts(counts), lambda: self.go("ruling"))

    def undo(self):
        if self.session is None or self.session.hand is None:
            return
        h = self.session.hand
        if len(h.moves) == 0:
            self.set_status("Nothing to undo in this hand.", error=True)
            return
        if self._window_ev is not None:
            self._window_ev.cancel()
            self._window_ev = None
        self.screens["bid"].stop_beats()
        was = h.phase
        a = self.session.undo()
        self.save()
        if was == "called" and h.phase == "bidding":
            self.sync_box_round(rearm=True)  # a new round: the box's first-call latch and lights cleared
        self.set_status(f"Undone: {a if not isinstance(a, (RevealStarting, Showdown)) else type(a).__name__}")
        if self.session.game == "powderkeg":
            self.go("powderkeg")
            return
        if isinstance(a, RevealStarting):
            self.screens["deal"].cards = dict(a.cards)
            self.screens["deal"].refresh()
        if h.phase == "called" and isinstance(a, Showdown):
            if not hasattr(self.screens["showdown"], "counts"):
                self.screens["showdown"].start()
        self.go(self.hand_screen_name())

    def next_hand(self):
        h = self.session.hand
        if h is None or h.phase != "over":
            return
        self.session.finish_hand()
        self._start_hand()
        self.set_status(f"Hand {len(self.session.history) + 1}: ante in, deal.")

    # ---------------------------------------------------------------- Powderkeg
    def powderkeg_card(self, card):
        from companion.games import powderkeg as pk

        h = self.session.hand
        action = pk.Dock(card) if h.phase == "dock" else pk.Reveal(card)
        self._do(action, lambda: self.go("powderkeg"))

    def powderkeg_call(self, call):
        from companion.games import powderkeg as pk

        h = self.session.hand
        if h.next_to_call is None:
            return
        self._do(pk.Call(h.next_to_call, call), lambda: self.go("powderkeg"))

    # ---------------------------------------------------------------- the ledger
    def _ledger_action(self, fn, done):
        try:
            fn()
        except PirateTableError as exc:
            self.set_status(str(exc), error=True)
            return
        self.save()
        self.set_status(done)
        for name in ("ledger", "deal"):
            self.screens[name].refresh()

    def ledger_loan(self, player, coins):
        if coins > 0:
            self._ledger_action(lambda: self.session.take_loan(player, coins),
                                f"The bank lends {player} {coins} coins.")
        else:
            self._ledger_action(lambda: self.session.repay(player, -coins), f"{player} repays {-coins} coins.")

    def ledger_end(self):
        def end():
            self.session._can_change_stacks()
            with self.session.ledger() as led:
                led.end()
                self.session._sync_from(led)
            self.session._restart_hand()
        self._ledger_action(end, "Session ended: the pot is split and the settle-up is shown.")

    def ledger_export(self):
        out = services.data_dir() / "exports" / (Path(self.session.ledger_path).stem + ".csv")
        out.parent.mkdir(parents=True, exist_ok=True)

        def export():
            from companion.ledger.csvio import export_csv_text

            with self.session.ledger() as led:
                text = export_csv_text(led)
            tmp = out.with_suffix(".tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, out)
        self._ledger_action(export, f"Exported the ledger to {out}")
        self.last_export = out

    # ---------------------------------------------------------------- the software box: keys 1-8
    def _on_key_down(self, window, key, scancode, codepoint, modifiers):
        if codepoint and codepoint in "12345678" and len(codepoint) == 1 and (
                self.session is not None or self.sm.current == "buttons"):
            focus = [t for t in self.screens["start"].name_inputs if t.focus]
            if focus:
                return False
            seat = int(codepoint) - 1
            if self.sm.current == "buttons":
                self.screens["buttons"].press_button(seat)
                return True
            if seat < len(self.session.players):
                self.press_call(self.session.players[seat], services.now_ms() / 1000.0)
                return True
        return False
