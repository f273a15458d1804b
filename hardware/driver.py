"""Host driver for the CALL button box, on pyserial.

- ``find_box_ports()``: serial ports whose USB VID:PID is a known Uno/Nano USB-serial bridge.
- ``ButtonBox``: opens the port, runs pyserial's ``ReaderThread`` in the background, waits for the box's
  HELLO (opening the port resets an Uno/Nano), acknowledges every PRESS, drops duplicates by
  (boot_id, press_id), keeps the box clock synchronised (``clocksync.ClockSync``), notices reboots (a new
  boot_id) and reconnects by itself after an unplug. Presses come out as ``Press`` objects through the
  ``on_press`` callback and the ``presses`` queue.
- Seat assignment: ``assign_seats(n)`` asks for one press per seat ("press your button") and maps buttons
  to seats 1..n.
"""

from __future__ import annotations

import queue
from collections import deque
import threading
import time
from dataclasses import dataclass, field

from hardware import protocol as P
from hardware.clocksync import ClockSync

BAUD = 500_000
# USB VID:PID of boards that carry an ATmega328P box: Arduino Uno (16U2), Arduino.org Uno, CH340 (Nano clones),
# FTDI FT232R (old Nano), CP2102.
KNOWN_USB_IDS = {
    (0x2341, 0x0043): "Arduino Uno",
    (0x2341, 0x0001): "Arduino Uno (old)",
    (0x2A03, 0x0043): "Arduino Uno (arduino.org)",
    (0x1A86, 0x7523): "CH340 (Nano clone)",
    (0x0403, 0x6001): "FTDI FT232R (Nano)",
    (0x10C4, 0xEA60): "CP2102",
}


def find_box_ports(usb_ids=None) -> list[str]:
    """Device paths of serial ports whose USB VID:PID is in usb_ids (default: KNOWN_USB_IDS)."""
    from serial.tools import list_ports

    ids = KNOWN_USB_IDS if usb_ids is None else usb_ids
    return sorted(p.device for p in list_ports.comports() if p.vid is not None and (p.vid, p.pid) in ids)


class BoxError(RuntimeError):
    pass


@dataclass(frozen=True)
class Press:
    """One PRESS from the box (after duplicate removal)."""

    boot_id: int
    press_id: int
    buttons: tuple[int, ...]   # 0..7, several = an exact tie (same port sample)
    seats: tuple[int, ...]     # the buttons' seats (seat map), same order
    tick: int                  # box clock, 0.5 us ticks since the box booted
    armed: bool                # a call (the round was armed); False = early/late press, never a call
    first: bool                # the box lit and buzzed this as the first call of the round
    resent: bool               # this copy was a retransmission (the first one was lost or not yet acked)
    round: int
    host_time: float | None    # box tick on the host's time.monotonic() clock (clock sync), None if unsynced
    received: float            # time.monotonic() when the frame arrived

    @property
    def box_us(self) -> float:
        return self.tick / 2.0

    @property
    def tie(self) -> bool:
        return len(self.buttons) > 1


@dataclass
class BoxStats:
    frames_ok: int = 0
    frames_bad: int = 0
    presses: int = 0
    duplicates: int = 0
    reboots: int = 0
    reconnects: int = 0
    lost_by_reboot: int = 0
    box_dropped: int = 0
    command_retries: int = 0
    events: list = field(default_factory=list)


class _Link:
    """pyserial threaded Protocol: bytes from the ReaderThread into the frame parser."""

    def __init__(self, box: "ButtonBox"):
        self.box = box
        self.parser = P.FrameParser(P.BOX_TYPES)
        self.transport = None

    def __call__(self):  # ReaderThread wants a factory
        return self

    def connection_made(self, transport):
        self.transport = transport

    def data_received(self, data):
        for msg in self.parser.feed(data):
            try:
                self.box._on_message(msg)
            except Exception as exc:  # a callback bug must not kill the reader
                self.box._event("callback-error", repr(exc))

    def connection_lost(self, exc):
        self.box._on_lost(exc)


class ButtonBox:
    """The box behind one serial port (or a port found by USB VID:PID when ``port`` is None)."""

    def __init__(self, port: str | None = None, *, find_port=None, on_press=None, on_event=None, seat_map=None,
                 hello_timeout: float = 5.0, sync_interval: float = 0.5, reconnect: bool = True,
                 rearm_after_reboot: bool = True):
        self.port = port
        # where to look again after an unplug: a callable returning a port path (default: the same path
        # if one was given, else USB VID:PID discovery)
        self.find_port = find_port
        self._discover = port is None
        self.on_press = on_press
        self.on_event = on_event
        self.seat_of_button = dict(seat_map) if seat_map else {b: b + 1 for b in range(P.BUTTONS)}
        self.hello_timeout = hello_timeout
        self.sync_interval = sync_interval
        self.reconnect = reconnect
        self.rearm_after_reboot = rearm_after_reboot
        self.presses: queue.Queue[Press] = queue.Queue()
        self.clock = ClockSync()
        self.stats = BoxStats()
        self.boot_id: int | None = None
        self.hello: P.Message | None = None
        self.armed_round: int | None = None
        self.last_heartbeat: P.Message | None = None
        self._seen: dict[int, tuple] = {}
        self._lock = threading.RLock()
        self._seq = 0
        self._waiting: dict[int, list] = {}
        self._hello_evt = threading.Event()
        self._connected = threading.Event()
        self._stop = threading.Event()
        self._reader = None
        self._link = None
        self._threads: list[threading.Thread] = []

    # ---- lifecycle ---------------------------------------------------------------------------------
    def open(self) -> "ButtonBox":
        self._connect_once()
        if not self._hello_evt.wait(self.hello_timeout):
            self.close()
            raise BoxError(f"no HELLO from the box on {self.port} within {self.hello_timeout:.1f} s")
        for target in (self._sync_loop, self._supervise):
            t = threading.Thread(target=target, daemon=True, name=f"buttonbox-{target.__name__}")
            t.start()
            self._threads.append(t)
        return self

    def __enter__(self):
        return self.open()

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self._stop.set()
        reader, self._reader = self._reader, None
        if reader is not None:
            try:
                reader.close()
            except Exception:
                pass
        for t in self._threads:
            t.join(timeout=2)

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def _connect_once(self) -> None:
        import serial
        import serial.threaded

        if self.find_port is not None:
            self.port = self.find_port()
        elif self._discover:
            ports = find_box_ports()
            if not ports:
                raise BoxError("no button box found (no serial port with a known USB VID:PID); use --port")
            self.port = ports[0]
        if not self.port:
            raise BoxError("no port for the button box")
        ser = serial.Serial(self.port, BAUD, timeout=0.2)  # opening resets an Uno/Nano: wait for HELLO
        self._hello_evt.clear()
        self._link = _Link(self)
        self._reader = serial.threaded.ReaderThread(ser, self._link)
        self._reader.start()
        self._reader.connect()
        self._connected.set()
        # a box that did not reset (or booted before we listened) answers HELLO_REQ
        deadline = time.monotonic() + self.hello_timeout
        while not self._hello_evt.wait(0.25) and time.monotonic() < deadline and self._connected.is_set():
            self._send(P.HELLO_REQ)

    def _on_lost(self, exc) -> None:
        self._connected.clear()
        self._event("disconnected", repr(exc) if exc else "closed")

    def _supervise(self) -> None:
        """Reconnect after an unplug: reopen the port (rediscover it by VID:PID) and wait for HELLO."""
        while not self._stop.wait(0.2):
            if self._connected.is_set() or not self.reconnect:
                continue
            reader, self._reader = self._reader, None
            if reader is not None:
                try:
                    reader.close()
                except Exception:
                    pass
            try:
                self._connect_once()
                if self._hello_evt.is_set():
                    self.stats.reconnects += 1
                    self._event("reconnected", self.port)
            except Exception:
                self._connected.clear()
                time.sleep(0.3)

    # ---- sending -----------------------------------------------------------------------------------
    def _send(self, type_: int, **fields) -> int:
        with self._lock:
            seq = self._seq
            self._seq = (self._seq + 1) & 0xFF
            frame = P.encode_frame(P.make(type_, seq, **fields))
            reader = self._reader
        if reader is None or not self._connected.is_set():
            raise BoxError("button box not connected")
        reader.write(frame)
        return seq

    def command(self, type_: int, *, retries: int = 5, timeout: float = 0.1, **fields) -> P.Message:
        """Send a command and wait for its answer (ACK or TIME), resending on silence."""
        for attempt in range(retries):
            if attempt:
                self.stats.command_retries += 1
            slot = [threading.Event(), None]
            with self._lock:
                seq = self._seq
                self._waiting[seq] = slot
            try:
                self._send(type_, **fields)
                if slot[0].wait(timeout):
                    ans = slot[1]
                    if ans.type == P.ACK and ans.status != 0:
                        raise BoxError(f"box refused {P.NAMES[type_]} {fields}: status {ans.status}")
                    return ans
            except BoxError:
                if not self._connected.is_set():
                    time.sleep(timeout)
                    continue
                raise
            finally:
                with self._lock:
                    self._waiting.pop(seq, None)
        raise BoxError(f"no answer from the box to {P.NAMES[type_]} after {retries} tries")

    def arm(self, round_id: int) -> None:
        self.armed_round = round_id
        self.command(P.ARM, round=round_id)

    def disarm(self) -> None:
        self.armed_round = None
        self.command(P.DISARM)

    def buzz(self, pattern: int = 1, freq_hz: int = 2000, duration_ms: int = 200) -> None:
        self.command(P.BUZZ, pattern=pattern, freq_hz=freq_hz, duration_ms=duration_ms)

    def lights(self, on_mask: int, blink_mask: int = 0) -> None:
        self.command(P.LIGHTS, on_mask=on_mask, blink_mask=blink_mask)

    def sync_now(self) -> None:
        t0 = time.monotonic()
        ans = self.command(P.TIME_REQ, retries=1, timeout=0.2)
        t1 = time.monotonic()
        self.clock.add(t0, t1, ans.box_time)

    def _sync_loop(self) -> None:
        n = 0
        while not self._stop.is_set():
            interval = self.sync_interval / 4 if n < 8 else self.sync_interval
            if self._stop.wait(interval):
                return
            if not self._connected.is_set() or not self._hello_evt.is_set():
                continue
            try:
                self.sync_now()
                n += 1
            except BoxError:
                pass

    # ---- receiving ---------------------------------------------------------------------------------
    def _event(self, kind: str, detail) -> None:
        self.stats.events.append((time.monotonic(), kind, detail))
        if self.on_event:
            self.on_event(kind, detail)

    def _on_message(self, msg: P.Message) -> None:
        now = time.monotonic()
        t = msg.type
        self.stats.frames_ok = self._link.parser.frames_ok if self._link else self.stats.frames_ok
        self.stats.frames_bad = self._link.parser.frames_bad if self._link else self.stats.frames_bad
        if t == P.HELLO:
            self._on_hello(msg)
        elif t == P.PRESS:
            if msg.boot_id != self.boot_id:
                # a press from a boot we have not heard a HELLO from (it was lost, or is still coming)
                self._new_boot(msg.boot_id, None)
                try:
                    self._send(P.HELLO_REQ)
                except BoxError:
                    pass
            try:
                self._send(P.PRESS_ACK, press_id=msg.press_id)
            except BoxError:
                pass
            seen, order = self._seen.setdefault(msg.boot_id, (set(), deque()))
            if msg.press_id in seen:
                self.stats.duplicates += 1
                return
            seen.add(msg.press_id)
            order.append(msg.press_id)
            if len(order) > 8192:  # press ids wrap at 65536; resends come within seconds
                seen.discard(order.popleft())
            buttons = tuple(P.press_mask_seats(msg.mask))
            press = Press(
                boot_id=msg.boot_id, press_id=msg.press_id, buttons=buttons,
                seats=tuple(self.seat_of_button.get(b, b + 1) for b in buttons), tick=msg.tick,
                armed=bool(msg.flags & P.FLAG_ARMED), first=bool(msg.flags & P.FLAG_FIRST),
                resent=bool(msg.flags & P.FLAG_RESEND), round=msg.round,
                host_time=self.clock.host_time(msg.tick), received=now)
            self.stats.presses += 1
            self.presses.put(press)
            if self.on_press:
                self.on_press(press)
        elif t in (P.ACK, P.TIME):
            with self._lock:
                slot = self._waiting.get(msg.cmd_seq)
            if slot is not None:
                slot[1] = msg
                slot[0].set()
        elif t == P.HEARTBEAT:
            self.last_heartbeat = msg
            if msg.dropped > self.stats.box_dropped:
                self._event("box-dropped-presses", msg.dropped)
            self.stats.box_dropped = msg.dropped

    def _on_hello(self, msg: P.Message) -> None:
        if msg.version != P.PROTOCOL_VERSION:
            self._event("bad-version", msg.version)
            return
        if msg.boot_id != self.boot_id:
            self._new_boot(msg.boot_id, msg.tick_hz)
        elif msg.tick_hz != self.clock.tick_hz:
            self.clock.reset(msg.tick_hz)
        self.hello = msg
        self._hello_evt.set()

    def _new_boot(self, boot_id: int, tick_hz: int | None) -> None:
        """A boot id we have not seen: the box (re)booted. Its press ids restart and its round is disarmed."""
        old = self.boot_id
        if old is not None:
            self.stats.reboots += 1
            pending = self.last_heartbeat.pending if self.last_heartbeat else 0
            self.stats.lost_by_reboot += pending
            self._event("reboot", {"old_boot_id": old, "new_boot_id": boot_id,
                                   "armed_round": self.armed_round, "unacked_presses_lost": pending})
        self.boot_id = boot_id
        self.clock.reset(tick_hz)
        self.last_heartbeat = None
        if old is not None and self.rearm_after_reboot and self.armed_round is not None:
            threading.Thread(target=self._rearm, args=(self.armed_round,), daemon=True).start()

    def _rearm(self, rnd: int) -> None:
        try:
            self.arm(rnd)
            self._event("rearmed", rnd)
        except BoxError as exc:
            self._event("rearm-failed", str(exc))

    # ---- convenience ---------------------------------------------------------------------------------
    def wait_press(self, timeout: float | None = None) -> Press | None:
        try:
            return self.presses.get(timeout=timeout)
        except queue.Empty:
            return None

    def assign_seats(self, n_seats: int, timeout: float = 60.0, prompt=None) -> dict[int, int]:
        """'Press your button': seat 1 presses first, then seat 2, ... Returns and installs {button: seat}.

        A button already assigned, or a tie (two buttons in one sample: ambiguous), is ignored and the
        same seat is asked again.
        """
        if not 1 <= n_seats <= P.BUTTONS:
            raise BoxError(f"seats must be 1..{P.BUTTONS}, got {n_seats}")
        mapping: dict[int, int] = {}
        deadline = time.monotonic() + timeout
        while self.presses.qsize():
            self.presses.get_nowait()
        for seat in range(1, n_seats + 1):
            if prompt:
                prompt(seat)
            while True:
                left = deadline - time.monotonic()
                p = self.wait_press(max(0.0, left)) if left > 0 else None
                if p is None:
                    raise BoxError(f"seat assignment timed out waiting for seat {seat}")
                if len(p.buttons) == 1 and p.buttons[0] not in mapping:
                    mapping[p.buttons[0]] = seat
                    break
        self.seat_of_button = dict(mapping)
        return mapping
