"""A software CALL box: speaks hardware/PROTOCOL.md on a pseudo-terminal, like the firmware does.

For the app's demo mode (keys 1-8 / on-screen buttons call ``press(seat)``) and for tests. The driver opens
``box.port`` exactly like a real serial port. Behaviour follows the firmware: HELLO at start with a random
boot id, heartbeat every second, PRESS resent every 20 ms until acknowledged, first call of an armed round
lit and buzzed by the box itself, presses before ARM flagged (not calls). Its clock is time.monotonic_ns()
in 0.5 us ticks since the box started.
"""

from __future__ import annotations

import os
import secrets
import select
import threading
import time
import tty

from hardware import protocol as P

RESEND_S = 0.020
HEARTBEAT_S = 1.0


class SoftBox:
    def __init__(self, *, start: bool = True):
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        tty.setraw(self._master)
        self.port = os.ttyname(self._slave)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread = None
        self.lights_on = 0
        self.lights_blink = 0
        self.buzz_log: list[tuple[int, int, int]] = []
        self.corrupt_next = 0  # corrupt the next N frames sent (one bit flipped), for tests
        self._boot()
        if start:
            self.start()

    def _boot(self) -> None:
        with self._lock:
            self.boot_id = secrets.randbits(32)
            self._t0 = time.monotonic_ns()
            self._seq = 0
            self._next_id = 0
            self._pending: dict[int, list] = {}  # press_id -> [fields, last_sent]
            self.round = 0
            self.armed = False
            self.first_taken = False
            self._parser = P.FrameParser(P.HOST_TYPES)
            self._next_hb = time.monotonic() + HEARTBEAT_S

    # ---- clock and output ----------------------------------------------------------------------------
    def ticks(self) -> int:
        return (time.monotonic_ns() - self._t0) // 500

    def _send(self, type_: int, **fields) -> None:
        with self._lock:
            frame = bytearray(P.encode_frame(P.make(type_, self._seq, **fields)))
            self._seq = (self._seq + 1) & 0xFF
            if self.corrupt_next > 0:
                self.corrupt_next -= 1
                frame[len(frame) // 2] ^= 0x04
            try:
                os.write(self._master, bytes(frame))
            except OSError:
                pass

    def _hello(self) -> None:
        self._send(P.HELLO, version=P.PROTOCOL_VERSION, boot_id=self.boot_id, buttons=P.BUTTONS,
                   tick_hz=P.TICK_HZ, fw=0x0100)

    # ---- the buttons ----------------------------------------------------------------------------------
    def press(self, *seats: int) -> int:
        """Press the buttons of these seats (1..8) in one sample: several seats = an exact tie."""
        mask = 0
        for s in seats:
            if not 1 <= s <= P.BUTTONS:
                raise ValueError(f"seat must be 1..{P.BUTTONS}, got {s}")
            mask |= 1 << (s - 1)
        return self.press_mask(mask)

    def press_mask(self, mask: int, tick: int | None = None) -> int:
        with self._lock:
            tick = self.ticks() if tick is None else tick
            flags = 0
            if self.armed:
                flags |= P.FLAG_ARMED
                if not self.first_taken:
                    self.first_taken = True
                    flags |= P.FLAG_FIRST
                    self.lights_on, self.lights_blink = mask, 0
                    self.buzz_log.append((1, 2000, 300))
            pid = self._next_id
            self._next_id = (self._next_id + 1) & 0xFFFF
            fields = dict(press_id=pid, tick=tick, mask=mask, flags=flags, round=self.round, boot_id=self.boot_id)
            self._pending[pid] = [fields, time.monotonic()]
            self._send(P.PRESS, **fields)
            return pid

    def reboot(self) -> None:
        """Like a power glitch: new boot id, pending presses lost, HELLO again."""
        self._boot()
        self._hello()

    @property
    def pending(self) -> int:
        return len(self._pending)

    # ---- host commands --------------------------------------------------------------------------------
    def _handle(self, m: P.Message) -> None:
        t = m.type
        if t == P.HELLO_REQ:
            self._hello()
        elif t == P.ARM:
            if not self.armed or m.round != self.round:
                self.round, self.armed, self.first_taken = m.round, True, False
                self.lights_on = self.lights_blink = 0
            self._send(P.ACK, cmd_seq=m.seq, status=0)
        elif t == P.DISARM:
            self.armed = False
            self._send(P.ACK, cmd_seq=m.seq, status=0)
        elif t == P.BUZZ:
            ok = m.pattern <= 3 and (m.pattern == 0 or 100 <= m.freq_hz <= 10000)
            if ok:
                self.buzz_log.append((m.pattern, m.freq_hz, m.duration_ms))
            self._send(P.ACK, cmd_seq=m.seq, status=0 if ok else 2)
        elif t == P.LIGHTS:
            self.lights_on, self.lights_blink = m.on_mask, m.blink_mask
            self._send(P.ACK, cmd_seq=m.seq, status=0)
        elif t == P.TIME_REQ:
            self._send(P.TIME, cmd_seq=m.seq, box_time=self.ticks())
        elif t == P.PRESS_ACK:
            self._pending.pop(m.press_id, None)

    def _run(self) -> None:
        self._hello()
        while not self._stop.is_set():
            r, _, _ = select.select([self._master], [], [], 0.005)
            if r:
                try:
                    data = os.read(self._master, 4096)
                except OSError:
                    data = b""
                with self._lock:
                    for m in self._parser.feed(data):
                        self._handle(m)
            now = time.monotonic()
            with self._lock:
                for fields, sent in list(self._pending.values()):
                    if now - sent >= RESEND_S:
                        self._send(P.PRESS, **dict(fields, flags=fields["flags"] | P.FLAG_RESEND))
                        self._pending[fields["press_id"]][1] = now
                if now >= self._next_hb:
                    self._next_hb = now + HEARTBEAT_S
                    self._send(P.HEARTBEAT, box_time=self.ticks(), round=self.round,
                               state=int(self.armed) | int(self.first_taken) << 1,
                               pending=min(255, len(self._pending)), dropped=0)

    def start(self) -> "SoftBox":
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="softbox")
            self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for fd in (self._master, self._slave):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
