"""The real firmware on simavr: builds firmware + harness with make, runs ``callbox_sim``, schedules edges.

``SimBox().start()`` gives ``.port`` (the pseudo-terminal the firmware's UART is on: open it with the
driver like a real port) and methods that talk to the harness over its stdin/stdout (see
hardware/sim/callbox_sim.c for the line protocol). Simulated time is in CPU cycles at 16 MHz.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRMWARE_DIR = HERE / "firmware"
SIM_DIR = HERE / "sim"
ELF = FIRMWARE_DIR / "callbox.elf"
SIM = SIM_DIR / "callbox_sim"
CPU_HZ = 16_000_000
CYCLES_PER_US = 16
CYCLES_PER_TICK = 8


class SimUnavailable(RuntimeError):
    """The AVR toolchain or libsimavr is not installed."""


def missing_tools() -> list[str]:
    return [t for t in ("avr-gcc", "make", "gcc", "pkg-config") if shutil.which(t) is None]


def build(quiet: bool = True) -> None:
    """make the firmware ELF and the harness (incremental)."""
    miss = missing_tools()
    if miss:
        raise SimUnavailable(f"missing tools: {', '.join(miss)} (scripts/system-deps.sh test installs them)")
    for d in (FIRMWARE_DIR, SIM_DIR):
        r = subprocess.run(["make", "-C", str(d)], capture_output=True, text=True)
        if r.returncode != 0:
            raise SimUnavailable(f"make -C {d} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        if not quiet:
            print(r.stdout, end="")


class SimBox:
    def __init__(self, eeprom_seed: int | None = None):
        self.eeprom_seed = eeprom_seed
        self.proc: subprocess.Popen | None = None
        self.port: str | None = None
        self.edges: list[tuple[int, int, int]] = []      # (cycle, down, up)
        self.corruptions: list[tuple[int, int, int]] = []     # box -> host bytes corrupted
        self.corruptions_in: list[tuple[int, int, int]] = []  # host -> box bytes corrupted
        self.resets: list[int] = []
        self._now: list[int] = []
        self.lights: list[tuple[int, int]] = []          # (cycle, light mask) on every change
        self._stats: list[tuple[int, int, int]] = []
        self._cv = threading.Condition()
        self._reader = None

    def start(self, timeout: float = 10.0) -> "SimBox":
        build()
        args = [str(SIM), str(ELF)]
        if self.eeprom_seed is not None:
            args.append(f"{self.eeprom_seed:x}")
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                raise SimUnavailable(f"callbox_sim exited (code {self.proc.poll()}) before it was ready")
            if line.startswith("ready "):
                self.port = line.split()[1]
                break
        else:
            self.stop()
            raise SimUnavailable("callbox_sim did not get ready")
        self._reader = threading.Thread(target=self._read, daemon=True, name="callbox_sim-stdout")
        self._reader.start()
        return self

    def _read(self) -> None:
        for line in self.proc.stdout:
            w = line.split()
            if not w:
                continue
            with self._cv:
                if w[0] == "edge":
                    self.edges.append((int(w[1]), int(w[2]), int(w[3])))
                elif w[0] == "corrupt-in":
                    self.corruptions_in.append((int(w[1]), int(w[2]), int(w[3])))
                elif w[0] == "corrupt":
                    self.corruptions.append((int(w[1]), int(w[2]), int(w[3])))
                elif w[0] == "reset":
                    self.resets.append(int(w[1]))
                elif w[0] == "light":
                    self.lights.append((int(w[1]), int(w[2])))
                elif w[0] == "stats":
                    self._stats.append((int(w[1]), int(w[2]), int(w[3])))
                elif w[0] == "now":
                    self._now.append(int(w[1]))
                self._cv.notify_all()

    def _cmd(self, text: str) -> None:
        if self.proc is None or self.proc.poll() is not None:
            raise SimUnavailable("callbox_sim is not running")
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def schedule(self, events, delay_cycles: int = 16_000) -> None:
        """events: [(offset_cycles, down_mask, up_mask)], offsets from (now + delay_cycles)."""
        lines = [f"base {delay_cycles}\n"] + [f"ev {o} {d} {u}\n" for o, d, u in events]
        self._cmd("".join(lines))

    def press(self, mask: int, hold_us: int = 2000) -> None:
        self.schedule([(0, mask, 0), (hold_us * CYCLES_PER_US, 0, mask)])

    def corrupt(self, n_bytes: int) -> None:
        self._cmd(f"corrupt {n_bytes}\n")

    def corrupt_in(self, n_bytes: int) -> None:
        self._cmd(f"corrupt-in {n_bytes}\n")

    def reset(self) -> None:
        self._cmd("reset\n")

    def now(self, timeout: float = 5.0) -> int:
        with self._cv:
            n = len(self._now)
            self._cmd("now\n")
            if not self._cv.wait_for(lambda: len(self._now) > n, timeout):
                raise SimUnavailable("no answer from callbox_sim")
            return self._now[-1]

    def stats(self, timeout: float = 5.0) -> tuple[int, int, int]:
        """(cycle, light mask, buzzer pin edges so far)."""
        with self._cv:
            n = len(self._stats)
            self._cmd("stats\n")
            if not self._cv.wait_for(lambda: len(self._stats) > n, timeout):
                raise SimUnavailable("no answer from callbox_sim")
            return self._stats[-1]

    def wait_edges(self, n: int, timeout: float) -> bool:
        with self._cv:
            return self._cv.wait_for(lambda: len(self.edges) >= n, timeout)

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        try:
            p.stdin.write("quit\n")
            p.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
        try:
            p.wait(timeout=3)
        except subprocess.TimeoutExpired:
            p.kill()  # our own child, by its handle
            p.wait(timeout=3)
        for f in (p.stdin, p.stdout):
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

