"""Teach the camera your deck: the guided enrollment of ``pirate-table deck enroll`` (vision/enroll.py) for every
base deck (Pirate's Bluff: nine photos, one per rank; the Island Deck and the standard deck: one photo per suit,
vision.enroll.photo_layout) with the live preview (companion/ui/camservice.py RowCameraService; the simulated row
camera in demo mode), each photo checked at once; per base deck, the deck the camera reads and the taught decks
with remove. Layout in enroll.kv beside this module.

The photos go to a temporary folder outside the decks folder and are deleted at the end, on cancel and on error;
enroll itself writes the profile atomically, so nothing is ever half-written. Checking a photo and enrolling run
off the UI thread and come back through Clock.schedule_once (the app's ``_post``)."""

from __future__ import annotations

import shutil
import tempfile
import threading
from pathlib import Path

from kivy.app import App
from kivy.metrics import dp
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.label import Label
from kivy.uix.screenmanager import NoTransition, Screen

from companion.errors import PirateTableError
from companion.ui.widgets import FlatButton

LETTERS = "ABCDEFGH"
GOOD, BAD, INFO = (0.45, 0.85, 0.45, 1), (1.0, 0.45, 0.40, 1), (0.98, 0.78, 0.25, 1)
# the base decks (vision.enroll.BASES) as the spinner shows them
BASE_TITLES = {"pirates-bluff": "Pirate's Bluff deck (72)", "island54": "Island Deck (Powderkeg, 54)",
               "standard52": "Standard deck (Whist, Battles, 52)"}
SUIT_WORDS = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}
NUMBER_WORDS = {4: "four", 6: "six", 7: "seven", 8: "eight", 9: "nine", 13: "thirteen"}


def _app():
    return App.get_running_app()


def base_of_title(title: str) -> str | None:
    return next((k for k, t in BASE_TITLES.items() if t == title), None)


def rank_words(r: int) -> str:
    return "the wilds (rank 0)" if r == 0 else f"rank {r}"


def rank_names(base: str, cards) -> list[str]:
    """The ranks of a suit's cards as the cards show them (A, 2 ... 10, J, Q, K)."""
    from companion.decks import get_deck

    d = get_deck(base)
    out = []
    for c in cards:
        n = d.notation(c)
        out.append(n.split(":")[0] if ":" in n else n[: -len(c.suit)])
    return out


def photo_words(base: str, cards) -> str:
    """What photo shows: ``rank 3`` / ``the wilds (rank 0)``; a suit: ``the anchors`` / ``the spades``."""
    if base == "pirates-bluff":
        return rank_words(cards[0].rank)
    return f"the {SUIT_WORDS.get(cards[0].suit, cards[0].suit)}"


def order_words(base: str, cards) -> str:
    """How the cards of a photo lie (vision.enroll.reading_order: rows of at most nine; thirteen: 7 above, 6 below)."""
    if base == "pirates-bluff":
        return "letters A to H from left to right"
    names = rank_names(base, cards)
    if len(cards) <= 9:
        return f"{' '.join(names)} from left to right"
    return f"{names[0]} to {names[6]} in a row above, {names[7]} to {names[-1]} in a row below, each left to right"


def instruction(base: str, cards) -> str:
    n = NUMBER_WORDS.get(len(cards), str(len(cards)))
    if base == "pirates-bluff":
        r = cards[0].rank
        what = "the eight wilds (rank 0)" if r == 0 else f"the eight cards of rank {r}"
    else:
        what = f"the {n} {photo_words(base, cards)[4:]}"
    return f"Lay out {what}, {order_words(base, cards)}, face up and upright, a little apart, and take the photo."


def intro(base: str) -> str:
    """The setup page's line on the photos of ``base``."""
    from vision.enroll import photo_layout

    layout = photo_layout(base)
    k = NUMBER_WORDS.get(len(layout), str(len(layout))).capitalize()
    cards = layout[0][1]
    if base == "pirates-bluff":
        return (f"{k} photos, one per rank: the eight cards of that rank in a row, A to H from left to right. "
                "About two minutes.")
    n = NUMBER_WORDS.get(len(cards), str(len(cards)))
    return (f"{k} photos, one per suit: the {n} cards of that suit, {order_words(base, cards)}. "
            "About two minutes.")


def count_note(n: int, want: int = 8, order: str = "A to H from left to right") -> str:
    """What the check saw, and what to do about it."""
    words = NUMBER_WORDS.get(want, str(want))
    if n == want:
        return f"Found {n} cards, {order}: use this photo, or retake it."
    if n < want:
        return (f"Found {n} card{'' if n == 1 else 's'}: lay out all {words}, a little apart and all in the picture, "
                "and retake.")
    return f"Found {n} cards: only the {words} cards of this photo, a little apart, then retake."


class EnrollScreen(Screen):
    """Setup (deck name, base deck, the deck the camera reads for it) -> the base's photos -> the result."""

    def __init__(self, **kw):
        super().__init__(**kw)
        self.cam = None          # the RowCameraService while photos are taken
        self.folder = None       # the temporary folder of the photos taken
        self.layout = []         # the base's photos: (file name, its cards in reading order) (photo_layout)
        self.step = 0            # the photo being taken: an index into layout
        self.photo = None        # the photo being checked / shown
        self.photo_ok = False
        self.deck = ""
        self.base = ""
        self.again = False       # the deck being taught is taught again (its profile replaced at the end)
        self.busy = False        # enroll is running
        self.result = None       # the last enroll's summary (tests read it)
        self._gen = 0            # stale checks / frames of a cancelled run are dropped
        self._confirm = None     # the deck whose removal is being confirmed

    def on_kv_post(self, base_widget):
        self.ids.steps.transition = NoTransition()
        self.ids.base.values = list(BASE_TITLES.values())
        self.ids.base.text = BASE_TITLES["pirates-bluff"]

    def chosen_base(self) -> str:
        return base_of_title(self.ids.base.text) or "pirates-bluff"

    def base_changed(self):
        """Another base deck chosen: its photos and its decks."""
        self.ids.intro.text = intro(self.chosen_base())
        self.ids.start.text = f"Start: take the {NUMBER_WORDS.get(len(self._layout()), '')} photos"
        self._confirm = None
        self.fill_decks()

    def _layout(self):
        from vision.enroll import photo_layout

        return photo_layout(self.chosen_base())

    # ------------------------------------------------------------ setup
    def refresh(self):
        if self.cam is None and not self.busy and self.ids.steps.current != "done":
            self.ids.steps.current = "setup"
            self.say_setup("")
        self.fill_decks()

    def _use_button(self, key: str, using: str, usable: bool = True):
        """"Use" (the camera reads this deck from now on) or "In use"."""
        b = FlatButton(text="In use" if key == using else "Use", tag=f"use:{key}", size_hint_x=None, width=dp(120),
                       bg=(0.15, 0.52, 0.28, 1) if key == using else (0.20, 0.36, 0.62, 1))
        b.disabled = not usable  # a deck taught to an earlier reader: teach it again first
        b.bind(on_press=lambda *_: self.use_deck(key))
        return b

    def use_deck(self, key: str):
        from companion.ui.camservice import BUILT_IN

        base = self.chosen_base()
        _app().set_camera_deck(key, base)
        what = BUILT_IN[base].get(key, f"deck {key}")
        self.say_setup(f"The camera reads: {what}.", INFO)
        _app().set_status(f"The camera reads: {what}.")
        self.fill_decks()

    def fill_decks(self):
        """The choices for the chosen base deck: its built-in readers, then the decks taught on it."""
        from companion.ui.camservice import BUILT_IN
        from vision.enroll import list_decks

        base = self.chosen_base()
        self.ids.reads_title.text = f"The camera reads ({BASE_TITLES[base].split(' (')[0]})"
        box = self.ids.deck_list
        box.clear_widgets()
        using = _app().camera_deck(base)
        for key, title in BUILT_IN[base].items():
            row = BoxLayout(size_hint_y=None, height=dp(72), spacing=dp(8))
            lab = Label(text=title, halign="left", valign="middle")
            lab.bind(size=lambda w, s: setattr(w, "text_size", s))
            row.add_widget(lab)
            row.add_widget(self._use_button(key, using))
            box.add_widget(row)
        every = list_decks()
        decks = [d for d in every if d["base"] == base]
        if not decks:
            box.add_widget(Label(text="No deck taught yet." if not every else "No deck of this kind taught yet.",
                                 size_hint_y=None, height=dp(56), color=(0.7, 0.75, 0.75, 1)))
        for d in decks:
            row = BoxLayout(size_hint_y=None, height=dp(72), spacing=dp(8))
            name = d["name"]
            if self._confirm == name:
                row.add_widget(Label(text=f"Remove {name}?", bold=True, color=BAD))
                yes = FlatButton(text="Yes, remove", tag=f"confirm:{name}", bg=(0.62, 0.16, 0.14, 1),
                                 size_hint_x=None, width=dp(170))
                yes.bind(on_press=lambda *_, n=name: self.remove(n))
                keep = FlatButton(text="Keep", tag=f"keep:{name}", size_hint_x=None, width=dp(110))
                keep.bind(on_press=lambda *_: self.ask_remove(None))
                row.add_widget(yes)
                row.add_widget(keep)
            else:
                when = (d.get("enrolled") or "")[:10]
                stale = "" if d.get("current") else "  [color=ff8060]teach again (earlier camera reader)[/color]"
                lab = Label(text=f"[b]{name}[/b]  {when}{stale}", markup=True, halign="left", valign="middle")
                lab.bind(size=lambda w, s: setattr(w, "text_size", s))
                row.add_widget(lab)
                row.add_widget(self._use_button(name, using, usable=bool(d.get("current"))))
                # new photos of the same deck (other light, or a reader changed since): the profile is replaced
                # only once the new one is built
                ag = FlatButton(text="Teach again", tag=f"again:{name}", size_hint_x=None, width=dp(150))
                ag.bind(on_press=lambda *_, n=name: self.begin(again=n))
                row.add_widget(ag)
                rm = FlatButton(text="Remove", tag=f"remove:{name}", size_hint_x=None, width=dp(120))
                rm.bind(on_press=lambda *_, n=name: self.ask_remove(n))
                row.add_widget(rm)
            box.add_widget(row)
        others = {d["base"] for d in every} - {base}
        if others:
            kinds = ", ".join(BASE_TITLES.get(b, str(b)).split(" (")[0] for b in sorted(others, key=str))
            lab = Label(text=f"{len(every) - len(decks)} more taught ({kinds}): choose that base deck to see them.",
                        size_hint_y=None, height=dp(56), color=(0.7, 0.75, 0.75, 1))
            lab.bind(size=lambda w, s: setattr(w, "text_size", (s[0], None)))
            box.add_widget(lab)

    def ask_remove(self, name):
        self._confirm = name
        self.fill_decks()

    def remove(self, name):
        from vision.enroll import remove

        self._confirm = None
        try:
            remove(name)
        except PirateTableError as exc:
            self.say_setup(str(exc), BAD)
        else:
            note = f"Deck {name} removed."
            from companion.ui.camservice import BUILT_IN, DEFAULT_CHOICE

            for base, default in DEFAULT_CHOICE.items():
                if _app().camera_deck(base) == name:  # the camera read it: back to the base's default
                    _app().set_camera_deck(default, base)
                    what = BUILT_IN[base][default]
                    note += (" The camera reads our printed deck again." if default == "*printed"
                             else f" The camera reads: {what[0].lower()}{what[1:]}.")
            self.say_setup(note, INFO)
            _app().set_status(note)
        self.fill_decks()

    def say_setup(self, text, color=INFO):
        self.ids.setup_note.text = text
        self.ids.setup_note.color = color

    # ------------------------------------------------------------ the nine photos
    def begin(self, again: str | None = None):
        """Check the name and base, then open the camera for the base's first photo. ``again``: a taught deck of
        the chosen base, taught again from new photos (vision.enroll.enroll's ``again``)."""
        from vision.enroll import check_name, decks_dir

        name = again if again is not None else self.ids.deck_name.text.strip()
        base = base_of_title(self.ids.base.text)
        try:
            check_name(name, "Deck name")
            if base is None:
                raise PirateTableError(f"Base deck: choose one of {', '.join(BASE_TITLES.values())}")
            if again is None and (decks_dir() / name).exists():
                raise PirateTableError(f"Deck name: a deck named {name!r} is already enrolled (Teach again beside "
                                       "it, or remove it first)")
            if again is not None and not (decks_dir() / name / "deck.json").is_file():
                raise PirateTableError(f"Deck {name}: not enrolled any more")
        except PirateTableError as exc:
            self.say_setup(str(exc), BAD)
            self.fill_decks()
            return
        from companion.ui.camservice import RowCameraService

        app = _app()
        self._cleanup()
        self._gen += 1
        gen = self._gen
        self.deck, self.base, self.again = name, base, again is not None
        self.layout = self._layout()
        self.folder = Path(tempfile.mkdtemp(prefix="pirate-table-enroll-"))
        self.say_setup("")
        self.ids.preview.texture = None

        def mine(fn):
            return lambda *a: fn(*a) if self._gen == gen else None

        self.ids.cancel.text = ("Cancel (the deck stays as it was)" if self.again
                                else "Cancel (nothing is saved)")
        self.cam = RowCameraService(app.camera_source(), app._post, on_frame=mine(self.show_frame),
                                    on_error=mine(self.camera_error), base=base).start()
        self.ids.steps.current = "photos"
        self.ask(0)

    def ask(self, step: int):
        self.step = step
        self.photo, self.photo_ok = None, False
        cards = self.layout[step][1]
        self.ids.step_title.text = f"Photo {step + 1} of {len(self.layout)}: {photo_words(self.base, cards)}"
        self.ids.instruction.text = instruction(self.base, cards)
        self.say("Live preview: take the photo when the cards are in view.", INFO)
        last = step == len(self.layout) - 1
        self.ids.use.text = (("Use it: teach the deck again" if self.again else "Use it: enroll the deck") if last
                             else f"Use it: next, {photo_words(self.base, self.layout[step + 1][1])}")
        self._buttons(take=True, retake=False, use=False)
        if self.cam is not None and self.cam.simulated is not None:
            self.cam.simulated.lay_out(step)  # the simulated player lays out the cards asked for

    def _buttons(self, take, retake, use):
        self.ids.take.disabled = not take
        self.ids.retake.disabled = not retake
        self.ids.use.disabled = not use

    def say(self, text, color=INFO):
        self.ids.check_note.text = text
        self.ids.check_note.color = color

    def show_frame(self, bgr):
        if self.photo is None:  # live until a photo is taken
            self._texture(bgr)

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

    def camera_error(self, text):
        self.say(text, BAD)
        self._buttons(take=False, retake=False, use=False)
        self.cam = None

    def take(self):
        if self.cam is None:
            return
        photo = self.cam.photo()
        if photo is None:
            self.say("No picture from the camera yet: wait a moment and take it again.", BAD)
            return
        self.photo, self.photo_ok = photo, False
        self._texture(photo)
        self.say("Checking the photo...", INFO)
        self._buttons(take=False, retake=False, use=False)
        gen, step = self._gen, self.step
        self.cam.check(photo, lambda n, q: self.checked(n, q) if (self._gen, self.step) == (gen, step) else None)

    def checked(self, n, quads):
        if n is None:
            self.say(f"Could not check the photo: {quads}", BAD)
            self._buttons(take=False, retake=True, use=False)
            return
        cards = self.layout[self.step][1]
        self.photo_ok = n == len(cards)
        marks = (LETTERS if self.base == "pirates-bluff" else rank_names(self.base, cards)) if self.photo_ok else []
        self._texture(_marked(self.photo, quads, marks))
        order = ("A to H from left to right" if self.base == "pirates-bluff"
                 else "each marked with the rank it will be taught as")
        self.say(count_note(n, len(cards), order), GOOD if self.photo_ok else BAD)
        self._buttons(take=False, retake=True, use=self.photo_ok)

    def retake(self):
        self.photo, self.photo_ok = None, False
        self.say("Live preview: take the photo when the cards are in view.", INFO)
        self._buttons(take=True, retake=False, use=False)

    def use(self):
        import cv2

        if not self.photo_ok or self.folder is None:
            return
        if not cv2.imwrite(str(self.folder / self.layout[self.step][0]), self.photo, [cv2.IMWRITE_JPEG_QUALITY, 92]):
            self.say("Could not keep the photo (disk full?): retake it.", BAD)
            return
        if self.step < len(self.layout) - 1:
            self.ask(self.step + 1)
        else:
            self.run_enroll()

    def run_enroll(self):
        """The photos -> vision.enroll.enroll on a worker thread; the result back through Clock."""
        from vision.enroll import enroll

        app = _app()
        if self.cam is not None:
            self.cam.stop(wait=0.0)
            self.cam = None
        self.busy = True
        self._buttons(take=False, retake=False, use=False)
        self.ids.step_title.text = f"Teaching the camera deck {self.deck}{' again' if self.again else ''}..."
        self.ids.instruction.text = "The photos are being learnt: about a minute. The cards may be put away."
        self.say("Working...", INFO)
        name, base, folder, gen, again = self.deck, self.base, self.folder, self._gen, self.again

        def work():
            try:
                meta = enroll(name, base, folder, again=again)
                app._post(lambda: self.enrolled(meta) if self._gen == gen else None)
            except Exception as exc:  # a PirateTableError's line, or what went wrong, in one line
                msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                app._post(lambda: self.failed(msg) if self._gen == gen else None)
            finally:
                shutil.rmtree(folder, ignore_errors=True)

        threading.Thread(target=work, name="enroll", daemon=True).start()

    def enrolled(self, meta):
        self.busy = False
        self.folder = None
        self.result = meta
        done = "taught again" if meta.get("again") else "enrolled"
        self.ids.done_title.text = f"Deck {meta['name']} {done}"
        self.ids.done_title.color = GOOD
        self.ids.done_text.text = (
            f"Base deck {BASE_TITLES.get(meta['base'], meta['base'])}, {meta['cards']} cards.\n"
            f"Check on freshly jittered corners: rank {100 * meta['check_rank_accuracy']:.1f} %, "
            f"{'letter' if meta['base'] == 'pirates-bluff' else 'suit'} {100 * meta['check_letter_accuracy']:.1f} %.\n"
            f"Learnt in {meta['cpu_s']} s of CPU.\n\n"
            + ("The camera reads it from these photos wherever it is in use.\n" if meta.get("again")
               else "Done, then Use beside it: the camera reads it in play.\n") +
            f"Scan with it: pirate-table scan PHOTO --deck {meta['name']}")
        self.ids.steps.current = "done"
        _app().set_status(f"Deck {meta['name']} {done}.")

    def failed(self, msg):
        self.busy = False
        self.folder = None
        self.result = None
        self.ids.done_title.text = "Not enrolled"
        self.ids.done_title.color = BAD
        self.ids.done_text.text = msg + ("\n\nNothing was changed: the deck reads as it was taught before."
                                         if self.again else "\n\nNothing was saved: start again.")
        self.ids.steps.current = "done"
        _app().set_status(msg, error=True)

    def finish(self):
        """Back to the setup page (the deck list shows the new deck)."""
        self.ids.steps.current = "setup"
        self.ids.deck_name.text = ""
        self.fill_decks()

    def cancel(self):
        """Stop the camera, forget the photos: nothing is written."""
        self._gen += 1
        self._cleanup()
        self.say_setup(f"Cancelled: deck {self.deck} stays as it was taught." if self.again
                       else "Cancelled: nothing was saved.", INFO)
        self.ids.steps.current = "setup"
        self.fill_decks()

    def _cleanup(self):
        if self.cam is not None:
            self.cam.stop(wait=0.0)
            self.cam = None
        if self.folder is not None and not self.busy:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None
        self.photo, self.photo_ok = None, False

    def on_leave(self, *a):
        if not self.busy:  # leaving the screen mid-way is a cancel; a running enroll finishes on its own
            self._gen += 1
            self._cleanup()
            self.ids.steps.current = "setup"


def _marked(bgr, quads, marks):
    """The photo with each card found outlined (green when the photo is right, red when not: ``marks`` empty) and,
    for a right photo, what card i is taken for (marks[i]: its letter A..H, or its rank in its suit)."""
    import cv2
    import numpy as np

    img = bgr.copy()
    ok = bool(marks)
    col = (80, 220, 80) if ok else (40, 60, 240)
    for i, q in enumerate(quads):
        pts = np.round(np.asarray(q)).astype(np.int32).reshape(-1, 1, 2)
        cv2.polylines(img, [pts], True, col, 4, cv2.LINE_AA)
        if ok:
            x, y = (int(v) for v in np.asarray(q).mean(0))
            t = marks[i]
            (tw, th), _ = cv2.getTextSize(t, cv2.FONT_HERSHEY_SIMPLEX, 1.6, 4)
            cv2.rectangle(img, (x - tw // 2 - 8, y - th // 2 - 10), (x + tw // 2 + 8, y + th // 2 + 10), (20, 20, 20), -1)
            cv2.putText(img, t, (x - tw // 2, y + th // 2), cv2.FONT_HERSHEY_SIMPLEX, 1.6, col, 4, cv2.LINE_AA)
    return img
