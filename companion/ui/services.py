"""The app's seams to the other parts of Pirate Table, one small function or class each.

Nothing here imports Kivy. Each seam says whether its part has landed; the UI disables a feature whose part is
missing and says so on screen. Work that blocks (serial, camera) runs off the UI thread and hands its results
back through the ``post`` callable the UI gives it (the UI passes a Clock.schedule_once wrapper).
"""

from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

APP_NAME = "pirate-table"


def data_dir() -> Path:
    """Where the session state and the settings live: $PIRATE_TABLE_DATA, else the platform's user data dir."""
    env = os.environ.get("PIRATE_TABLE_DATA")
    if env:
        p = Path(env)
    else:
        import platformdirs

        p = Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))
    p.mkdir(parents=True, exist_ok=True)
    return p


def session_path() -> Path:
    return data_dir() / "session.json"


def new_ledger_path() -> Path:
    """A new SQLite ledger file for a new session (one ledger file holds one session)."""
    d = data_dir() / "ledgers"
    d.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    p = d / f"session-{stamp}.db"
    n = 1
    while p.exists():
        n += 1
        p = d / f"session-{stamp}-{n}.db"
    return p


def _has(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def now_ms() -> float:
    """Wall-clock ms, the same clock as Kivy's touch.time_start (time.time())."""
    return time.time() * 1000.0


# ------------------------------------------------------------------ the parts, landed or not


def camera_status() -> tuple[bool, str]:
    if _has("vision.detect") and _has("vision.camera"):
        return True, "camera reader available"
    return False, "Camera reader (vision/) is not installed: enter the cards by touch."


def camera_devices() -> list[str]:
    """Video devices the system lists (Linux /dev/video*), without opening them or importing OpenCV."""
    import glob

    return sorted(glob.glob("/dev/video*"))


def box_status() -> tuple[bool, str]:
    """Whether a real CALL button box is plugged in (a serial port with a known USB VID:PID)."""
    try:
        from hardware.driver import find_box_ports

        ports = find_box_ports()
    except Exception as exc:  # no pyserial list_ports backend here
        return False, f"No button box found ({exc}): the software box (keys 1-8, CALL buttons)."
    if ports:
        return True, f"button box on {ports[0]}"
    return False, "No button box found: the software box (keys 1-8, on-screen CALL buttons)."


def ledger_status() -> tuple[bool, str]:
    if _has("companion.ledger"):
        return True, "ledger available"
    return False, "The ledger (companion/ledger/) has not landed yet: stacks are kept in the session file."


def beep_wav(freq: int = 880, ms: int = 120) -> Path:
    """A short sine beep as a WAV file in the data dir (stdlib wave; written once, atomically)."""
    import math
    import struct
    import wave

    p = data_dir() / f"beep-{freq}-{ms}.wav"
    if not p.exists():
        rate = 22050
        n = rate * ms // 1000
        frames = b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * freq * i / rate)
                                                * min(1.0, (n - i) / 400))) for i in range(n))
        tmp = p.with_suffix(".tmp")
        with wave.open(str(tmp), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(frames)
        os.replace(tmp, p)
    return p
