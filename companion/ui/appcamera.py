"""The table camera in the app: the camera service on its worker thread (companion/ui/camservice.py), the
preview on the shared Scan screen, the reading handed to the game's screen for this moment (its ``apply_scan``).
Only for games whose GameSpec says ``camera=True``. A mixin of PirateTableApp."""

from __future__ import annotations


class CameraMixin:
    camera = None       # the CameraService of the scan in progress (companion/ui/camservice)
    last_scan = None    # the last CameraService started (tests read its simulated table)
    scan_seed = None    # the simulated table's seed (None: from the hand number)

    def camera_source(self) -> str:
        """Settings > Camera; in demo mode 'auto' is the simulated table camera."""
        src = self.config.get("table", "camera")
        return "simulated" if src == "auto" and self.demo else src

    def camera_deck(self, base: str = "pirates-bluff") -> str:
        """The deck the camera reads for the base deck ``base`` (vision.enroll.BASES), chosen on the Enroll
        screen: ``*printed`` (Pirate's Bluff only: the project's printed faces, the fixed index reader), ``*any``
        (the open-world reader of that deck, untaught) or the name of a deck taught on that base."""
        from companion.ui.camservice import DEFAULT_CHOICE

        return self.config.get("table", self._camera_deck_key(base)) or DEFAULT_CHOICE[base]

    def set_camera_deck(self, deck: str, base: str = "pirates-bluff"):
        self.config.set("table", self._camera_deck_key(base), deck)
        self.config.write()

    @staticmethod
    def camera_deck_defaults() -> dict:
        """The app's config defaults of the camera choices: each base deck's default (camservice.DEFAULT_CHOICE)."""
        from companion.ui.camservice import DEFAULT_CHOICE

        return {CameraMixin._camera_deck_key(base): choice for base, choice in DEFAULT_CHOICE.items()}

    @staticmethod
    def _camera_deck_key(base: str) -> str:
        return "camera_deck" if base == "pirates-bluff" else f"camera_deck_{base}"

    def scan_request(self):
        """What the game's screen for this moment wants read (its ``scan_request()``, beside its ``apply_scan``),
        or None when nothing is to be read now."""
        if self.session is None or self.session.hand is None or not self.session.spec.camera:
            return None
        scr = self.screens[self.hand_screen_name()]
        if not hasattr(scr, "apply_scan"):
            return None  # the game's screen for this moment takes no camera reading
        return scr.scan_request()

    def start_scan(self):
        """Read the table for the game's screen: the camera service on its worker thread, the preview on the
        Scan screen; the reading goes to the screen's ``apply_scan``."""
        from companion.ui.camservice import CameraService, camera_base

        req = self.scan_request()
        if req is None:
            return
        self.stop_scan()
        src = self.camera_source()
        base = camera_base(req.deck)  # None: a deck with no camera model (the service says so)
        seed = self.scan_seed if self.scan_seed is not None else 200 + 1000 * len(self.session.history)
        scr = self.screens["scan"]
        scr.begin(src, req)
        cs = None

        def mine(fn):
            return lambda *a: fn(*a) if self.camera is cs else None

        cs = CameraService(src, req, self._post, on_frame=mine(scr.show_frame),
                           on_reading=mine(self.on_scan_reading), on_error=mine(self.on_scan_error), seed=seed,
                           deck=self.camera_deck(base) if base else None)
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
        hand_screen = self.screens[self.hand_screen_name()] if self.session is not None else None
        stop = None
        if (reading.cards or reading.new) and self.session.hand is not None and hasattr(hand_screen, "apply_scan"):
            # the game's screen applies it through the game's own inputs; it may say why it stopped short
            stop = hand_screen.apply_scan(reading)
        self.screens["scan"].show_reading(reading, stop)
        self.set_status(stop or reading.note, error=bool(stop) or bool(reading.unreadable)
                        or not (reading.cards or reading.new))
        self.camera = None

    def on_scan_error(self, text):
        self.screens["scan"].show_error(text)
        self.set_status(text, error=True)
        self.camera = None
