"""Live camera: read the table only when it has been still, and only what several frames agree on.

``StableReader`` is fed frames; it keeps a small grey thumbnail of each, calls the table *still* when the
mean absolute difference between consecutive thumbnails stays under ``motion_thresh`` for ``still_frames``
frames, then scans the next ``agree_frames`` frames and reports a card only when every scan read the same
code at (about) the same place. Anything that moves resets it.
"""

from __future__ import annotations

import json
import sys
import time

import cv2
import numpy as np


class StableReader:
    def __init__(self, scanner, still_frames: int = 5, agree_frames: int = 3, motion_thresh: float = 2.0):
        self.scanner = scanner
        self.still_frames = still_frames
        self.agree_frames = agree_frames
        self.motion_thresh = motion_thresh
        self.prev = None
        self.still = 0
        self.pending: list = []

    def feed(self, frame: np.ndarray):
        """Returns a list of agreed CardReads when a reading is complete, else None."""
        thumb = cv2.resize(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY), (160, 90), interpolation=cv2.INTER_AREA).astype(np.float32)
        moving = self.prev is not None and float(np.abs(thumb - self.prev).mean()) > self.motion_thresh
        self.prev = thumb
        if moving or self.prev is None:
            self.still = 0
            self.pending = []
            return None
        self.still += 1
        if self.still < self.still_frames:
            return None
        cards, _ = self.scanner.scan(frame)
        self.pending.append(cards)
        if len(self.pending) < self.agree_frames:
            return None
        agreed = agree(self.pending)
        self.pending = []
        self.still = 0
        return agreed


def agree(scans: list) -> list:
    """Cards of the first scan whose code is read identically, near the same place, in every other scan."""
    out = []
    for c in scans[0]:
        tol = 0.25 * float(np.hypot(*(c.corners[0] - c.corners[2])))
        same = True
        for other in scans[1:]:
            near = [o for o in other if o.kind == c.kind and np.hypot(*(o.center - c.center)) < tol]
            if not near or near[0].code != c.code:
                same = False
                break
        if not same:
            c = c.unread()
        out.append(c)
    return out


def run_live(device, max_readings: int = 0, players: int | None = None) -> int:
    from companion.errors import PirateTableError
    from companion.games import registry
    from vision.detect import Scanner

    first_bidder = registry.reads_rule_for_deck("pirates72")  # the camera reads; the game decides

    from vision.imageio import captured_c_stderr

    with captured_c_stderr():  # OpenCV's videoio warnings are not the first line of our error
        cap = cv2.VideoCapture(device)
        opened = cap.isOpened()
    if not opened:
        raise PirateTableError(f"camera {device!r}: cannot open it")
    cap.set(cv2.CAP_PROP_FRAME_WIDTH, 1280)
    cap.set(cv2.CAP_PROP_FRAME_HEIGHT, 720)
    sr = StableReader(Scanner("ort"))
    n = 0
    try:
        while True:
            ok, frame = cap.read()
            if not ok:
                raise PirateTableError(f"camera {device!r} stopped giving frames")
            res = sr.feed(frame)
            if res is not None:
                print(json.dumps({"t": time.time(), "cards": [c.to_json() for c in res], "first_bidder": first_bidder(res, players=players)}))
                sys.stdout.flush()
                n += 1
                if max_readings and n >= max_readings:
                    return 0
    finally:
        cap.release()
