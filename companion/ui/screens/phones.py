"""The tablet's phones screen: one QR code per seat (its URL carries the seat's token), whether its phone is
here, away or gone, a reset button per seat (a new token: the old code and the phone holding it are refused),
and start / stop for the phone server (it listens only while phones are on). See docs/phones.md."""

from __future__ import annotations

import io

from kivy.app import App
from kivy.core.image import Image as CoreImage
from kivy.metrics import dp
from kivy.uix.boxlayout import BoxLayout
from kivy.uix.image import Image
from kivy.uix.screenmanager import Screen

from companion.ui.widgets import FlatButton, label

PRESENCE = {"free": "no phone yet", "here": "phone here", "away": "phone away (seat kept)",
            "gone": "phone gone: answer on the tablet"}


def _app():
    return App.get_running_app()


class PhonesScreen(Screen):
    """Reads ``app.phones``; intents: ``app.phones_on()``, ``app.phones_off()``, ``app.phones_reset(seat)``."""

    def on_kv_post(self, base):
        self._built_for = None
        self._status = {}

    def toggle(self):
        app = _app()
        if app.phones.running:
            app.phones_off()
        else:
            app.phones_on()

    def refresh(self):
        app = _app()
        svc = app.phones
        srv = svc.server if svc.running else None
        possible = app.phones_possible()
        self.ids.toggle.text = "Stop phones" if svc.server is not None else "Start phones"
        self.ids.toggle.disabled = not possible and svc.server is None
        if srv is None:
            self.ids.note.text = svc.error or ("Phones are off: nobody can connect." if possible else
                                               "This game has no secret answers for phones.")
            self.ids.cards.clear_widgets()
            self._built_for, self._status = None, {}
            return
        self.ids.note.text = (f"Each player scans their seat's code (the table's Wi-Fi, {srv.host}:{srv.port}). "
                              "Answers stay on this tablet until the last one is in.")
        key = (srv.table_id, tuple(srv.url_for(s) for s in srv.table.seats))
        if key != self._built_for:
            self._build(srv)
            self._built_for = key
        view = srv.view_for(None)
        for seat, presence in view["seats"]:
            if seat in self._status:
                self._status[seat].text = PRESENCE.get(presence, presence)
        q = view["question"]
        self.ids.question.text = (f"Open question ({q['kind']}): waiting for {', '.join(q['waiting']) or 'nobody'}"
                                  if q else "No open question.")

    def _build(self, srv):
        cards = self.ids.cards
        cards.clear_widgets()
        self._status = {}
        for seat in srv.table.seats:
            box = BoxLayout(orientation="vertical", spacing=dp(4), padding=dp(6))
            name = label(seat, size="22sp", bold=True)
            name.size_hint_y = None
            name.height = dp(34)
            box.add_widget(name)
            tex = CoreImage(io.BytesIO(srv.qr_png(seat, scale=6)), ext="png").texture
            tex.mag_filter = "nearest"
            tex.min_filter = "nearest"
            box.add_widget(Image(texture=tex, fit_mode="contain"))
            st = label("", size="16sp")
            st.size_hint_y = None
            st.height = dp(26)
            self._status[seat] = st
            box.add_widget(st)
            btn = FlatButton(text=f"Reset {seat}", size_hint_y=None, height=dp(48), font_size="18sp")
            btn.tag = f"phones:reset:{seat}"
            btn.bind(on_release=lambda _b, s=seat: _app().phones_reset(s))
            box.add_widget(btn)
            cards.add_widget(box)
