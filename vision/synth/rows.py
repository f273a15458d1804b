"""Enrollment photos: the eight cards of one rank lying upright side by side, A to H from left to right, as a
player photographs them for `pirate-table deck enroll` (a 1280x720 frame from above, slightly tilted)."""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.decks.render import render_card
from vision.synth.scene import _light
from vision.synth.surfaces import make_surface

LETTERS = "ABCDEFGH"


def row_photo(style, rank: int, seed: int, n: int = 8, width: int = 1280, height: int = 720,
              letters: str = LETTERS) -> np.ndarray:
    """The photo of cards ``rank`` + letters[:n], left to right (n != 8 makes the wrong photos tests need)."""
    rng = np.random.default_rng(seed)
    plain = ("felt", "wood", "cloth", "gradient")  # a table, not a patterned cloth
    img = make_surface(plain[rng.integers(len(plain))], rng, width, height).astype(np.float32)
    slot = width / (max(n, 8) + 0.3)
    cw = slot * rng.uniform(0.8, 0.86)
    for i in range(n):
        face, _ = render_card(rank, letters[i % len(letters)], style, 4.0)
        fh, fw = face.shape[:2]
        ch = cw * fh / fw
        cx = slot * (i + 0.65) + rng.uniform(-3, 3)
        cy = height / 2 + rng.uniform(-15, 15)
        a = math.radians(rng.uniform(-4, 4))
        c, s = math.cos(a), math.sin(a)
        base = np.array([[-cw / 2, -ch / 2], [cw / 2, -ch / 2], [cw / 2, ch / 2], [-cw / 2, ch / 2]])
        dst = (base @ np.array([[c, s], [-s, c]]) + [cx, cy] + rng.normal(0, 1.0, (4, 2))).astype(np.float32)
        M = cv2.getPerspectiveTransform(np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32), dst)
        warped = cv2.warpPerspective(face, M, (width, height), flags=cv2.INTER_AREA).astype(np.float32)
        m = cv2.warpPerspective(np.ones((fh, fw), np.float32), M, (width, height))[..., None]
        img = img * (1 - m) + warped * m
    return _light(np.clip(img, 0, 255), np.random.default_rng(seed + 1))
