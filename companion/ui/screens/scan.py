"""The table camera's live preview and its reading (companion/ui/camservice.py). Layout in scan.kv beside this
module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen



def _app():
    return App.get_running_app()


class ScanScreen(Screen):
    """The camera's live preview with the recognised cards drawn on it (companion/ui/camservice.py), then the
    reading mapped to seats."""

    request = None

    def begin(self, source, request):
        self.request = request
        self.ids.scan_title.text = f"Scanning {request.title}"
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

    def show_reading(self, reading, stop=None):
        if reading.frame is not None:
            self._texture(reading.frame)
        title = self.request.title if self.request is not None else "cards"
        self.ids.scan_title.text = (title[0].upper() + title[1:] + " read") if (reading.cards or reading.new) \
            else "Scan again"
        self.ids.scan_note.text = reading.note + (f"\n{stop}" if stop else "")
        players = list(self.request.seats) if self.request is not None else []
        self.ids.scan_seats.text = "\n".join(
            f"{i + 1}. {p}:  {reading.cards[p] or '?  (touch)'}" for i, p in enumerate(players) if p in reading.cards)
        if reading.new:
            self.ids.scan_seats.text = "New: " + ", ".join(reading.new)

    def show_error(self, text):
        self.ids.scan_title.text = "No camera reading"
        self.ids.scan_note.text = text
