"""The CALL button box for the app: the real box, or the software box on a pty, behind the same driver.

``BoxService`` owns one ``hardware.driver.ButtonBox``. Opening it, ARM / DISARM / BUZZ, seat assignment and
clock-sync status all run on the service's own worker thread (they wait for the box's answers); presses come
from the driver's ReaderThread. Nothing here touches the UI: every result is handed to ``post(fn)``, which the
app implements with ``Clock.schedule_once`` so ``fn`` runs on the UI thread.

Where the box comes from (Settings, "serial"):
- ``auto``: the first serial port whose USB VID:PID is a known box (``hardware.driver.find_box_ports``);
  none found -> the software box (demo mode);
- ``simulated``: the software box (``hardware.softbox.SoftBox``) on a pseudo-terminal, opened with the SAME
  driver, so its presses arrive exactly like a real box's (frames, ACKs, clock sync, box timestamps);
- a device path (``/dev/ttyACM0``): that port; if it cannot be opened, the software box and an error status.

Box timestamps: a ``Press`` carries the box tick mapped onto ``time.monotonic()`` by the driver's clock sync
(``Press.host_time``); ``wall_ms(press)`` turns that into wall-clock ms (the clock the app's hand time uses).
"""

from __future__ import annotations

import queue
import threading
import time
from dataclasses import dataclass

SIMULATED = "simulated"
AUTO = "auto"


@dataclass(frozen=True)
class BoxState:
    """What the status bar shows. kind: 'connected' | 'simulated' | 'searching' | 'disconnected' | 'off'."""

    kind: str
    port: str = ""
    detail: str = ""
    rtt_ms: float | None = None
    reboots: int = 0
    armed_round: int | None = None

    def text(self) -> str:
        if self.kind == "simulated":
            s = "Box: simulated (software box)"
        elif self.kind == "connected":
            s = f"Box: connected {self.port}"
        elif self.kind == "disconnected":
            s = f"Box: DISCONNECTED {self.port} (reconnecting)"
        elif self.kind == "searching":
            s = "Box: opening..."
        else:
            s = "Box: off"
        if self.reboots:
            s += f"  rebooted x{self.reboots}"
        if self.rtt_ms is not None:
            s += f"  RTT {self.rtt_ms:.1f} ms"
        return s


class BoxService:
    def __init__(self, setting: str, post, *, on_press=None, on_state=None, on_event=None,
                 hello_timeout: float = 3.0, status_period: float = 1.0):
        self.setting = (setting or AUTO).strip()
        self.post = post
        self.on_press = on_press      # fn(Press), on the UI thread
        self.on_state = on_state      # fn(BoxState), on the UI thread
        self.on_event = on_event      # fn(kind, detail), on the UI thread
        self.hello_timeout = hello_timeout
        self.status_period = status_period
        self.box = None               # hardware.driver.ButtonBox
        self.softbox = None           # hardware.softbox.SoftBox when simulated
        self.error = ""
        self.assigning = False
        self.state = BoxState("searching")
        self._jobs: queue.Queue = queue.Queue()
        self._stop = threading.Event()
        self._round = 0
        self._thread = threading.Thread(target=self._run, daemon=True, name="box-service")

    # ---------------------------------------------------------------- lifecycle (called on the UI thread)
    def start(self) -> "BoxService":
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop the worker, close the driver (its ReaderThread and port) and the software box."""
        self._stop.set()
        self._jobs.put(None)
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join(timeout=5)
        self._close_box()

    @property
    def simulated(self) -> bool:
        return self.softbox is not None

    @property
    def ready(self) -> bool:
        return self.box is not None and self.box.connected and self.box.clock.synced

    # ---------------------------------------------------------------- requests (any thread; run on the worker)
    def arm(self) -> int:
        """Start a new round on the box (a fresh round id, so the box's first-call latch is cleared)."""
        self._round = (self._round % 0xFFFF) + 1
        rnd = self._round
        self._submit(lambda: self.box.arm(rnd))
        return rnd

    def disarm(self) -> None:
        self._submit(lambda: self.box.disarm())

    def buzz(self, pattern: int = 1, freq_hz: int = 2000, duration_ms: int = 200) -> None:
        self._submit(lambda: self.box.buzz(pattern, freq_hz, duration_ms))

    def assign_seats(self, n: int, prompt, done, timeout: float = 120.0) -> None:
        """'Press your button' for seats 1..n: prompt(seat) and done(mapping | None, error) on the UI thread."""
        def job():
            self.assigning = True
            try:
                mapping = self.box.assign_seats(n, timeout=timeout,
                                                prompt=lambda seat: self.post(lambda: prompt(seat)))
            except Exception as exc:  # BoxError, or the box went away
                error = str(exc)  # `exc` is unbound after the except block; the callback runs later
                self.post(lambda: done(None, error))
            else:
                self.post(lambda: done(dict(mapping), ""))
            finally:
                self.assigning = False
        self._submit(job, needs_box=True)

    def press_seat(self, seat: int, touch_wall_s: float | None = None) -> bool:
        """The software box: press the button of this seat (1..8). touch_wall_s, a touch's time.time(), is
        turned into the box tick of that instant, so two fingers a frame apart keep their order and gap."""
        sb = self.softbox
        if sb is None or self.box is None:
            return False
        inv = {s: b for b, s in self.box.seat_of_button.items()}
        button = inv.get(seat)
        if button is None:
            return False
        return self.press_button(button, touch_wall_s)

    def press_button(self, button: int, touch_wall_s: float | None = None) -> bool:
        """The software box: press button 0..7 (seat assignment presses buttons, not seats)."""
        sb = self.softbox
        if sb is None:
            return False
        sb.press_mask(1 << button, None if touch_wall_s is None else self.tick_at(sb, touch_wall_s))
        return True

    @staticmethod
    def tick_at(sb, wall_s: float) -> int:
        """The software box's tick (2 MHz) at the wall-clock instant ``wall_s`` (a touch's time.time(), never taken as
        older than half a second). The box's clock and the wall clock are read as a pair, the tightest of a few tries
        (as ``wall_offset_s`` does): a thread that loses the interpreter or its core between the two reads would
        otherwise move the press by its wait, and two fingers a moment apart could swap order."""
        best = None
        for _ in range(5):
            k1 = sb.ticks()
            w = time.time()
            k2 = sb.ticks()
            if best is None or k2 - k1 < best[0]:
                best = (k2 - k1, (k1 + k2) / 2, w)
            if best[0] <= 40:  # 20 us
                break
        _, now_tick, now_w = best
        back = max(0.0, min(0.5, now_w - wall_s))  # a touch is never older than a frame or two
        return max(0, int(round(now_tick - back * 2_000_000)))

    @staticmethod
    def wall_ms(press) -> float:
        """Wall-clock ms of a press: its box tick on the host clock (clock sync), else its arrival time."""
        mono = press.host_time if press.host_time is not None else press.received
        return (mono + BoxService.wall_offset_s()) * 1000.0

    @staticmethod
    def wall_offset_s() -> float:
        """time.time() - time.monotonic(), read between two monotonic reads and kept from the tightest of a few
        tries: a thread that loses the GIL or its core between the reads would otherwise put its wait (up to the
        GIL's 5 ms) into one press's hand time, and two calls' gap would not be the box's gap."""
        best_width, best = float("inf"), 0.0
        for _ in range(5):
            m1 = time.monotonic()
            w = time.time()
            m2 = time.monotonic()
            if m2 - m1 < best_width:
                best_width, best = m2 - m1, w - (m1 + m2) / 2
            if best_width < 20e-6:
                break
        return best

    # ---------------------------------------------------------------- worker
    def _submit(self, fn, needs_box=True) -> None:
        self._jobs.put((fn, needs_box))

    def _run(self) -> None:
        self._open()
        next_status = 0.0
        while not self._stop.is_set():
            try:
                job = self._jobs.get(timeout=0.1)
            except queue.Empty:
                job = ()
            if job is None:
                break
            if job:
                fn, needs_box = job
                if needs_box and (self.box is None or not self.box.connected):
                    self._emit_event("error", "button box not connected")
                else:
                    try:
                        fn()
                    except Exception as exc:  # BoxError: a command the box did not answer
                        self._emit_event("error", str(exc))
            now = time.monotonic()
            if now >= next_status:
                next_status = now + self.status_period
                self._publish()

    def _open(self) -> None:
        from hardware.driver import ButtonBox, BoxError, find_box_ports

        setting = self.setting
        port = None
        if setting == AUTO:
            try:
                ports = find_box_ports()
            except Exception:
                ports = []
            port = ports[0] if ports else None
        elif setting != SIMULATED:
            port = setting
        if port is not None:
            # auto: port None, so the driver finds the box again by VID:PID after an unplug
            box = ButtonBox(None if setting == AUTO else port, on_press=self._on_press, on_event=self._on_driver_event,
                            hello_timeout=self.hello_timeout)
            try:
                box.open()
                self.box = box
                self._publish()
                return
            except (BoxError, OSError, ValueError) as exc:
                box.close()
                self.error = f"No button box on {port}: {exc}. Using the software box."
                self._emit_event("error", self.error)
        from hardware.softbox import SoftBox

        sb = SoftBox()
        box = ButtonBox(sb.port, on_press=self._on_press, on_event=self._on_driver_event,
                        hello_timeout=self.hello_timeout, reconnect=False)
        try:
            box.open()
        except BoxError as exc:
            box.close()
            sb.close()
            self.error = f"The software box did not start: {exc}"
            self._emit_event("error", self.error)
            self._publish()
            return
        self.softbox, self.box = sb, box
        self._publish()

    def _close_box(self) -> None:
        box, self.box = self.box, None
        sb, self.softbox = self.softbox, None
        if box is not None:
            box.close()
        if sb is not None:
            sb.close()

    def _state(self) -> BoxState:
        box = self.box
        if box is None:
            return BoxState("off", detail=self.error)
        rtt = box.clock.min_rtt
        kind = "simulated" if self.softbox is not None else ("connected" if box.connected else "disconnected")
        return BoxState(kind, port=box.port or "", detail=self.error,
                        rtt_ms=None if rtt is None else rtt * 1000.0, reboots=box.stats.reboots,
                        armed_round=box.armed_round)

    def _publish(self) -> None:
        st = self._state()
        if st != self.state:
            self.state = st
            if self.on_state:
                self.post(lambda: self.on_state(st))

    # ---------------------------------------------------------------- driver callbacks (reader thread)
    def _on_press(self, press) -> None:
        if self.assigning:
            return  # seat assignment reads the driver's queue itself
        if self.on_press:
            self.post(lambda: self.on_press(press))

    def _on_driver_event(self, kind, detail) -> None:
        self._emit_event(kind, detail)
        if kind in ("reboot", "disconnected", "reconnected"):
            self._jobs.put((self._publish, False))

    def _emit_event(self, kind, detail) -> None:
        if self.on_event:
            self.post(lambda: self.on_event(kind, detail))
