"""The CALL-button box in the app (companion/ui/boxservice.py): open the box chosen in Settings, arm it while the
game's table model says so (``buttons_armed``), turn presses into the game's ``call`` intent with the box's
timestamp, keys 1-8 for the software box. A mixin of PirateTableApp."""

from __future__ import annotations

from companion.ui import services
from companion.ui.boxservice import BoxService


class BoxMixin:
    box = None          # the BoxService
    box_round = None    # the round armed on the box (None: disarmed)

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
        """Armed while the game's table model says so (a Pirate's Bluff hand bidding or called); disarmed
        otherwise (and between hands)."""
        if not self._box_ok():
            return
        want = self.session is not None and self.session.model.buttons_armed()
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
