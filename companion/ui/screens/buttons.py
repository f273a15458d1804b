"""The CALL-button box: seat assignment by presses, its state, the software box's buttons. Layout in buttons.kv
beside this module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.ui.widgets import FlatButton


def _app():
    return App.get_running_app()


class ButtonsScreen(Screen):
    """'Press your button': each seat in turn presses its CALL button; the box's state; the software box."""

    def on_kv_post(self, base):
        self.mapping = {}
        self.prompt_seat = None
        for b in range(8):
            btn = FlatButton(text=f"button {b + 1}", tag=f"softbutton:{b + 1}", bg=(0.72, 0.16, 0.14, 1))
            btn.bind(on_press=lambda w, b=b: self.press_button(
                b, w.last_touch.time_start if w.last_touch else None))
            self.ids.softbuttons.add_widget(btn)

    def players(self):
        app = _app()
        if app.session is not None:
            return list(app.session.players)
        st = app.screens["start"]
        return [t.text.strip() or f"Seat {i + 1}" for i, t in enumerate(st.name_inputs[: st.count])]

    def press_button(self, b, touch_wall_s=None):
        box = _app().box
        if box is None or not box.simulated:
            _app().set_status("Only the software box has on-screen buttons.", error=True)
            return
        box.press_button(b, touch_wall_s)

    def assign(self):
        app = _app()
        if not app._box_ok():
            app.set_status("No button box connected.", error=True)
            return
        names = self.players()
        self.mapping = {}

        def prompt(seat):
            self.prompt_seat = seat
            self.ids.prompt.text = f"Seat {seat}: {names[seat - 1]}, press your button!"
            app.set_status(f"Press your button: seat {seat} ({names[seat - 1]}).")

        def done(mapping, error):
            self.prompt_seat = None
            if mapping is None:
                self.ids.prompt.text = "Seat assignment stopped."
                app.set_status(error, error=True)
            else:
                self.mapping = mapping
                self.ids.prompt.text = "Every seat has its button."
                app.set_status("Seats assigned: " + ", ".join(
                    f"button {b + 1} = {names[s - 1]}" for b, s in sorted(mapping.items(), key=lambda x: x[1])))
            self.refresh()
        self.ids.assign.disabled = True
        app.box.assign_seats(len(names), prompt, done)

    def refresh(self):
        app = _app()
        box = app.box
        st = box.state if box is not None else None
        self.ids.state.text = (app.box_text + (f"  on {st.port}" if st is not None and st.port else "")
                               + (f"\n{st.detail}" if st is not None and st.detail else ""))
        names = self.players()
        seat_of = dict(box.box.seat_of_button) if box is not None and box.box is not None else {}
        self.ids.assign.disabled = self.prompt_seat is not None or not app._box_ok()
        lines = []
        for b in range(8):
            s = seat_of.get(b)
            who = names[s - 1] if s is not None and s <= len(names) else "-"
            lines.append(f"button {b + 1}: seat {s} {who}" if s is not None and s <= len(names) else
                         f"button {b + 1}: not used")
        self.ids.table.text = "\n".join(lines)
        sim = box is not None and box.simulated
        self.ids.softbuttons.opacity = 1 if sim else 0
        self.ids.softbuttons.disabled = not sim
        self.ids.softnote.text = ("The software box: press its buttons here or with keys 1-8." if sim else
                                  "Each player presses the big button in front of them.")
