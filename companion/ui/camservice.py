"""CameraService: the table camera for the app, on its own worker thread (no Kivy here).

Source (Settings > Camera): ``auto`` (the first OpenCV camera that opens, else the simulated table camera),
``simulated`` (always the simulated table camera), ``off``, a camera index ``0``-``3``, or ``frames:PATH``
(recorded frames: an image file, or a folder of images read in name order, the last one held; for replaying
a table and for the tests).

What is read is the game's :class:`companion.tablecam.ScanRequest` (its screen's ``scan_request()``): the
deck (Pirate's Bluff: the deck chosen on the Enroll screen; the Island and standard decks: their own camera
models), the seats and how the cards lie. Every frame goes through ``vision.camera.StableReader`` (the table
must be still, then several scans must agree) around the deck's scanner. The worker draws the recognised
cards on a copy of the frame (each card's quad and its card, ``?`` when unreadable) and hands it to the UI
through ``post`` (the app passes a ``Clock.schedule_once`` wrapper); a complete reading is handed back once,
mapped with ``companion.tablecam.map_reading``, and the service stops. cv2, onnxruntime and the models are
imported and loaded on the worker thread, never at import.

Seats (companion/tablecam.py): the tablet stands at the table's edge by seat 1 with the camera looking over
the table, so seat 1 is at 6 o'clock in the frame; the other seats follow clockwise as seen from above (to the
left of each player, the order of play). An unreadable card leaves its seat empty for touch entry (never a
guess).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

from companion.tablecam import ScanRequest, SeatReading, map_reading, read_text, seat_order  # noqa: F401 (API)

SIM_W, SIM_H = 1280, 720


class SimulatedTableCamera:
    """A table seen by a camera, rendered by ``vision.synth``. Pirate's Bluff starting cards: a starting-card
    scene with exactly ``players`` cards (the first seed from ``seed`` whose scene has that many; make_scene
    chooses its cards from the seed). Another deck (``request.deck``): the request's ``demo`` cards laid in front
    of the seats (``vision.synth.suited.seat_scene``). A little sensor noise on each frame; ``scene`` holds the
    ground truth."""

    def __init__(self, players: int, seed: int = 0, fps: float = 15.0, request: ScanRequest | None = None):
        import numpy as np

        if request is not None and request.deck != "pirates72":
            from vision.synth.suited import seat_scene

            sc = seat_scene(seed, request.deck, [list(c) for c in request.demo], list(request.demo_middle),
                            width=SIM_W, height=SIM_H)
        else:
            from vision.synth.scene import make_scene

            for s in range(seed, seed + 2000):
                sc = make_scene(s, "start", width=SIM_W, height=SIM_H)
                if len(sc.cards) == players:
                    break
            else:  # pragma: no cover - make_scene lays out 3-8 cards
                raise ValueError(f"no simulated scene with {players} cards")
        self.scene = sc
        self.base = sc.image.astype(np.int16)
        self.rng = np.random.default_rng(sc.seed)
        self.period = 1.0 / fps
        self._np = np

    def read(self):
        np = self._np
        time.sleep(self.period)
        noise = self.rng.integers(-2, 3, self.base.shape, dtype=np.int16)
        return True, np.clip(self.base + noise, 0, 255).astype(np.uint8)

    def release(self):
        pass


class RecordedFrames:
    """Recorded frames as a camera (source ``frames:PATH``): an image file, or the images of a folder in name
    order; the last frame is held (a still table). Unreadable files raise RuntimeError with the file's name."""

    SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")

    def __init__(self, path: str, fps: float = 15.0):
        p = Path(path)
        if p.is_dir():
            self.files = sorted(f for f in p.iterdir() if f.suffix.lower() in self.SUFFIXES)
        elif p.is_file():
            self.files = [p]
        else:
            raise RuntimeError(f"Recorded frames: {path} is neither an image nor a folder.")
        if not self.files:
            raise RuntimeError(f"Recorded frames: no images in {path}.")
        self.period = 1.0 / fps
        self.i = 0
        self.frame = None

    def read(self):
        from vision.imageio import load_image

        time.sleep(self.period)
        if self.i < len(self.files):
            f = self.files[self.i]
            self.i += 1
            try:
                self.frame = load_image(str(f))
            except Exception as exc:
                raise RuntimeError(f"Recorded frames: {f.name}: {exc}") from None
        return True, self.frame.copy()

    def release(self):
        pass


def annotate(frame, reads, seats=None, held=()):
    """A copy of ``frame`` with each card's quad and its card (``?`` when unreadable) drawn on it; with
    ``seats`` (card index -> seat number) the seat number too. ``held``: reads the game left for a tap (drawn ``?``
    in orange, SeatReading.held)."""
    import cv2
    import numpy as np

    img = frame.copy()
    for i, c in enumerate(reads):
        q = np.round(np.asarray(c.corners)).astype(np.int32).reshape(-1, 1, 2)
        text = None if i in held else read_text(c)
        ok = text is not None
        col = (80, 220, 80) if ok else (0, 160, 255) if i in held else (40, 60, 240)
        cv2.polylines(img, [q], True, col, 4, cv2.LINE_AA)
        if ok and hasattr(c, "letter") and c.rank == 0:
            text = "W" + c.letter  # Pirate's Bluff: the wilds are rank 0
        text = text if ok else "?"
        if seats and i in seats:
            text = f"{seats[i]}: {text}"
        x, y = (int(v) for v in np.asarray(c.corners).mean(0))
        (tw, th), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, 1.6, 4)
        cv2.rectangle(img, (x - tw // 2 - 8, y - th // 2 - 10), (x + tw // 2 + 8, y + th // 2 + 10), (20, 20, 20), -1)
        cv2.putText(img, text, (x - tw // 2, y + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.6, col, 4, cv2.LINE_AA)
    return img


class _CameraThread:
    """A camera read on its own thread (``_run``), stopped by ``_stop``; results go to the UI through ``post``."""

    _stop: threading.Event
    _thread: threading.Thread | None

    def _start_thread(self, name: str):
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        return self

    def stop(self, wait: float = 2.0):
        self._stop.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(wait)

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive() and not self._stop.is_set()

    def _open_real_camera(self):
        """The camera ``self.source`` names ("0", "1", ...), or the first of 0-3 that gives a frame; None if none
        does. Sets ``self.kind``."""
        import cv2

        idx = [int(self.source)] if self.source.isascii() and self.source.isdigit() else list(range(4))
        for i in idx:
            cap = cv2.VideoCapture(i)
            if cap.isOpened():
                ok, _ = cap.read()
                if ok:
                    cap.set(cv2.CAP_PROP_FRAME_WIDTH, 1280)
                    cap.set(cv2.CAP_PROP_FRAME_HEIGHT, 720)
                    self.kind = f"camera {i}"
                    return cap
            cap.release()
        return None


# the camera's own choices; the other values are enrolled decks' names ("*" is never in a deck name)
CAMERA_DECKS = {"*printed": "Our printed deck (print-deck)",
                "*any": "Any other deck, untaught (asks by touch when unsure)"}
# the built-in choices of each base deck (vision.enroll.BASES) on the Enroll screen; the rest are taught decks
BUILT_IN = {"pirates-bluff": CAMERA_DECKS,
            "island54": {"*any": "Any Island Deck, untaught (asks by touch when unsure)"},
            "standard52": {"*any": "Any standard deck, untaught (asks by touch when unsure)"}}
DEFAULT_CHOICE = {base: next(iter(choices)) for base, choices in BUILT_IN.items()}  # each base's first choice


def camera_base(deck_id: str) -> str | None:
    """The enrollment base (vision.enroll.BASES) whose camera choice reads the deck ``deck_id``; None for a deck
    the camera cannot read."""
    from companion.decks import get_deck
    from vision.enroll import base_id

    model = get_deck(deck_id).camera_model
    return base_id(model) if model is not None else None


def taught_choice(deck_id: str, choice: str | None) -> bool:
    """Whether the camera choice ``choice`` for the deck ``deck_id`` is a deck the players taught it (not one of its
    base's built-in choices; None: the base's default, built in)."""
    base = camera_base(deck_id)
    return base is not None and choice is not None and choice not in BUILT_IN[base]


def scanner_for(deck: str, threads: int = 1):
    """The scanner for the deck the camera reads: ``*printed`` the default reader, ``*any`` the corner reader,
    else the enrolled deck of that name (its profile on the corner reader). A deck that cannot be used (removed,
    damaged, taught to an earlier reader) raises RuntimeError with what to do."""
    from vision.detect import Scanner

    if deck == "*printed":
        return Scanner("ort", threads=threads)
    if deck == "*any":
        return Scanner("ort", reader="corner", threads=threads)
    from companion.errors import PirateTableError
    from vision.enroll import load

    try:
        profile = load(deck)
    except PirateTableError as exc:
        raise RuntimeError(f"{exc} (Settings > Teach the camera your deck).") from None
    return Scanner("ort", reader="corner", threads=threads, profile=profile)


class _SuitedScanner:
    """A suited deck's scanner (vision/suited_reader.py) with the ``scan(bgr) -> (cards, reads)`` of the others;
    ``profile``: a taught deck of that base (vision.enroll.load)."""

    def __init__(self, model: str, threads: int, profile=None):
        from vision.suited_reader import SuitedScanner

        self.profile = profile
        self.scanner = SuitedScanner(model, threads=threads, profile=profile)

    @property
    def detector(self):
        return self.scanner.detector

    def scan(self, bgr):
        reads = self.scanner.scan(bgr)
        return reads, reads


def scanner_for_request(request: ScanRequest, camera_deck: str | None = None, threads: int = 1):
    """The scanner for what the game asks read, by the choice made on the Enroll screen for its base deck
    (``camera_deck``; None: the base's default): Pirate's Bluff cards by ``scanner_for``, another deck by its own
    camera model, with a taught deck's profile when one is chosen. RuntimeError (what to do) when the deck has no
    camera model, its model is missing, or the chosen taught deck cannot be used."""
    from companion.decks import get_deck

    deck = get_deck(request.deck)
    if deck.camera_model is None:
        raise RuntimeError(f"The camera cannot read the {deck.title} yet: enter the cards by touch.")
    base = camera_base(deck.id)
    choice = camera_deck or DEFAULT_CHOICE[base]
    if base == "pirates-bluff":
        return scanner_for(choice, threads)
    from vision.detect import MODELS

    if not (MODELS / f"{deck.camera_model}_reader.int8.onnx").exists():
        raise RuntimeError(f"The camera's model for the {deck.title} is missing ({deck.camera_model}_reader."
                           "int8.onnx): enter the cards by touch.")
    profile = None
    if choice not in BUILT_IN[base]:
        from companion.errors import PirateTableError
        from vision.enroll import load

        try:
            profile = load(choice)
        except PirateTableError as exc:
            raise RuntimeError(f"{exc} (Settings > Teach the camera your deck).") from None
        if profile.base != base:
            taught = get_deck(profile.base).title.split(" (")[0]
            raise RuntimeError(f"Deck {choice} was taught on the {taught}, not the {deck.title.split(' (')[0]} "
                               "(Settings > Teach the camera your deck).")
    return _SuitedScanner(deck.camera_model, threads, profile)


class CameraService(_CameraThread):
    """Reads the table on a worker thread until one complete reading, then stops.

    ``request``: what the game wants read (a ScanRequest; or the players, for Pirate's Bluff starting cards).
    ``on_frame(bgr, text)``: a preview frame (annotated with the last scan); ``on_reading(SeatReading)``: the
    reading mapped for the request; ``on_error(text)``. All three are called through ``post``."""

    def __init__(self, source: str, request, post, on_frame, on_reading, on_error, *, seed: int = 0,
                 preview_every: int = 1, deck: str | None = None):
        self.source = source
        # the choice for the request's base deck: "*printed" (Pirate's Bluff), "*any" or a taught deck's name;
        # None: the base's default (see scanner_for_request)
        self.deck = deck
        if not isinstance(request, ScanRequest):
            request = ScanRequest("pirates72", tuple(request))
        self.request = request
        self.players = list(request.seats)
        self.post = post
        self.on_frame, self.on_reading, self.on_error = on_frame, on_reading, on_error
        self.seed = seed
        self.preview_every = preview_every
        self.kind = None  # "camera N" or "simulated"
        self.cam = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self):
        return self._start_thread("camera")

    def _open(self):
        if self.source == "off":
            raise RuntimeError("The camera is off (Settings > Camera): enter the cards by touch.")
        if self.source.startswith("frames:"):
            self.kind = "recorded frames"
            return RecordedFrames(self.source[len("frames:"):])
        if self.source != "simulated":
            cap = self._open_real_camera()
            if cap is not None:
                return cap
            if self.source.isascii() and self.source.isdigit():
                raise RuntimeError(f"Camera {self.source} does not open: choose another in Settings, or enter "
                                   "the cards by touch.")
        self.kind = "simulated"
        return SimulatedTableCamera(len(self.players), self.seed, request=self.request)

    def _run(self):
        try:
            self.cam = self._open()
            from vision.camera import StableReader

            scanner = scanner_for_request(self.request, self.deck)
            if taught_choice(self.request.deck, self.deck):  # the game's hold then says what helps a taught deck
                self.request = dataclasses.replace(self.request, taught=True)
            last = []

            class Keep:  # remembers each scan for the preview
                def scan(self, bgr):
                    cards, reads = scanner.scan(bgr)
                    last[:] = cards
                    return cards, reads

            reader = StableReader(Keep())
            n = 0
            while not self._stop.is_set():
                ok, frame = self.cam.read()
                if not ok:
                    raise RuntimeError(f"The {self.kind} stopped giving frames.")
                agreed = reader.feed(frame)
                if agreed is not None:
                    res = map_reading(agreed, self.request, (frame.shape[1], frame.shape[0]),
                                      far=scanner.detector.looked_far)
                    whole = [i for i, c in enumerate(agreed) if c.kind == "card"]
                    seats = {whole[i]: k for i, k in res.placed.items()}
                    res.frame = annotate(frame, agreed, seats, held=set(res.held))
                    if not self._stop.is_set():
                        self.post(lambda r=res: self.on_reading(r))
                    break
                n += 1
                if n % self.preview_every == 0 and not self._stop.is_set():
                    img = annotate(frame, list(last))
                    txt = f"{self.kind}: hold the table still..." if not last else f"{self.kind}: reading..."
                    self.post(lambda i=img, t=txt: self.on_frame(i, t))
        except Exception as exc:  # a camera that fails is reported, the app goes on by touch
            msg = str(exc) or type(exc).__name__
            self.post(lambda m=msg: self.on_error(m))
        finally:
            if self.cam is not None:
                self.cam.release()
            self._stop.set()


# ------------------------------------------------------------------ deck enrollment (the Enroll screen)

def demo_deck_style(base: str = "pirates-bluff"):
    """The simulated player's own deck of ``base`` (vision.enroll.BASES): faces in a font family no model was
    trained on (the held-out split). Pirate's Bluff: an index layout of its own (beside, bigger, further in), the
    Hershey print style when no such font is installed. A suited deck: a face style drawn in the held-out family Go
    or Karla (one whose suit photos the decks' detector finds whole, as in tests/test_camera_enroll_suited.py), the
    deck's print style when neither is installed. The Enroll screen's simulated camera lays out this deck."""
    try:
        from vision.fonts import split_fonts

        fonts = dict(split_fonts("held_out"))
    except Exception:  # no font list here: the print style still makes whole photos
        fonts = {}
    if base != "pirates-bluff":
        import numpy as np

        from vision.decks.faces import faces_for

        faces = faces_for(base)
        pick = [(f, fonts[f]) for f in ("Go", "Karla") if f in fonts]
        if not pick:
            return faces.print_style()
        return faces.random_style(np.random.default_rng(DEMO_SUITED_SEED[base]), pick)
    from vision.decks.render import PRINT_STYLE, FaceStyle

    if not fonts:
        return PRINT_STYLE
    # the first held-out family by name (DejaVu Sans until session 99, a calibration family since); the deck
    # tests/test_camera_enroll.py enrolls and the model card's taught-deck figure was measured on
    fam = "Anonymous Pro" if "Anonymous Pro" in fonts else sorted(fonts)[0]
    path = [f for f in fonts[fam] if "Bold" in f] or list(fonts[fam])
    return FaceStyle(font_path=path[0], layout="beside", index_scale=1.35, margin_mm=5.0, ink=(40, 30, 120),
                     letter_ink=(40, 30, 120), paper=(236, 244, 250), border=True, art=1, seed=77)


DEMO_SUITED_SEED = {"island54": 2, "standard52": 8}  # the styles tests/test_camera_enroll_suited.py enrolls


class SimulatedRowCamera:
    """A camera above the cards the simulated player has laid out for one enrollment photo (vision/synth/rows.py):
    ``lay_out(step, n)`` puts down the cards of photo ``step`` of ``base``'s layout (vision.enroll.photo_layout:
    Pirate's Bluff, the eight cards of rank ``step`` lettered A...; a suited deck, the cards of its step-th suit),
    only the first n (n short: the wrong photos a player may lay out; None: all). Each frame is the photo with a
    little sensor noise."""

    def __init__(self, seed: int = 0, fps: float = 10.0, style=None, base: str = "pirates-bluff"):
        import numpy as np

        self._np = np
        self.seed = seed
        self.base_deck = base
        self.style = style if style is not None else demo_deck_style(base)
        self.period = 1.0 / fps
        self.rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self.layout = None  # (step, n) on the table now
        self.base = None

    def lay_out(self, step: int, n: int | None = None):
        from vision.synth.rows import row_photo, suit_photo

        if self.base_deck == "pirates-bluff":
            n = 8 if n is None else n
            seed = self.seed + step if n == 8 else self.seed + 1000 + step  # as the enroll tests' rows
            img = row_photo(self.style, step, seed, n=n, width=SIM_W, height=SIM_H)
        else:
            from vision.enroll import photo_layout

            suit = photo_layout(self.base_deck)[step][1][0].suit
            img = suit_photo(self.base_deck, self.style, suit, self.seed + step, n=n, width=SIM_W, height=SIM_H)
        with self._lock:
            self.layout = (step, n)
            self.base = img.astype(self._np.int16)

    def read(self):
        np = self._np
        time.sleep(self.period)
        with self._lock:
            base = self.base
        if base is None:  # an empty table until the first row is laid out
            base = np.full((SIM_H, SIM_W, 3), 60, np.int16)
        noise = self.rng.integers(-2, 3, base.shape, dtype=np.int16)
        return True, np.clip(base + noise, 0, 255).astype(np.uint8)

    def release(self):
        pass


class RowCameraService(_CameraThread):
    """The live preview for deck enrollment on a worker thread: every frame goes to ``on_frame(bgr)`` (through
    ``post``) and is kept; ``photo()`` is the latest frame (a copy). ``check(bgr, on_result)`` counts the cards of a
    photo as ``deck enroll`` does (vision.enroll.find_row) on its own thread and posts ``on_result(count, quads)``.
    ``simulated``: the SimulatedRowCamera (``self.cam``) when the source is ``simulated``."""

    def __init__(self, source: str, post, on_frame, on_error, *, seed: int = 0, base: str = "pirates-bluff"):
        self.source, self.post = source, post
        self.base = base  # the base deck being taught (vision.enroll.BASES): its detector counts the cards
        self.on_frame, self.on_error = on_frame, on_error
        self.seed = seed
        self.kind = None
        self.cam = None
        self.simulated = None
        self.frames = 0  # frames read so far
        self._last = None
        self._shown = threading.Event()  # a preview frame is on its way to the UI
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._scanner = None
        self._scan_lock = threading.Lock()

    def start(self):
        if self.source == "simulated":  # made here so the screen can lay out the first row at once
            self.simulated = SimulatedRowCamera(self.seed, base=self.base)
        return self._start_thread("enroll-camera")

    def photo(self):
        last = self._last
        return None if last is None else last.copy()

    def _open(self):
        if self.simulated is not None:
            self.kind = "simulated"
            return self.simulated
        if self.source == "off":
            raise RuntimeError("The camera is off (Settings > Camera): choose a camera to teach it your deck.")
        cap = self._open_real_camera()
        if cap is not None:
            return cap
        raise RuntimeError("No camera opens: choose one in Settings > Camera (or start the app with --demo).")

    def _run(self):
        try:
            self.cam = self._open()
            while not self._stop.is_set():
                ok, frame = self.cam.read()
                if not ok:
                    raise RuntimeError(f"The {self.kind} stopped giving frames.")
                self._last = frame
                self.frames += 1
                if not self._stop.is_set() and not self._shown.is_set():  # the UI has drawn the last one
                    self._shown.set()
                    self.post(lambda f=frame: (self._shown.clear(), self.on_frame(f)))
        except Exception as exc:
            msg = str(exc) or type(exc).__name__
            self.post(lambda m=msg: self.on_error(m))
        finally:
            if self.cam is not None:
                self.cam.release()
            self._stop.set()

    def check(self, bgr, on_result):
        """Count the cards of one photo on a worker thread; ``on_result(count, quads_left_to_right)`` or
        ``on_result(None, error_text)`` through ``post``."""

        def work():
            try:
                with self._scan_lock:
                    if self._scanner is None:  # the detector deck enroll uses for this base
                        if self.base == "pirates-bluff":
                            from vision.detect import MODELS, Scanner

                            self._scanner = Scanner("ort", MODELS, reader="corner", threads=1)
                        else:
                            from vision.suited_reader import SuitedScanner

                            self._scanner = SuitedScanner(self.base, threads=1)
                    from vision.enroll import find_row

                    quads = find_row(self._scanner, bgr)
                res = (len(quads), quads)
            except Exception as exc:
                res = (None, str(exc) or type(exc).__name__)
            self.post(lambda: on_result(*res))

        threading.Thread(target=work, name="enroll-check", daemon=True).start()
