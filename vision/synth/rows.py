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
    faces = [render_card(rank, letters[i % len(letters)], style, 4.0)[0] for i in range(n)]
    return cards_photo(faces, seed, per_row=max(n, 8), width=width, height=height)


def suit_photo(deck: str, style, suit: str, seed: int, n: int | None = None, width: int = 1280,
               height: int = 720) -> np.ndarray:
    """The enrollment photo of one suit of a suited deck (vision/enroll.py ``photo_layout``): its cards in rank
    order, left to right, in rows of at most 9 (the standard deck's 13: A-7 above, 8-K below). ``n`` cards only
    (the wrong photos tests need)."""
    from companion.decks import get_deck
    from vision.decks.faces import faces_for
    from vision.enroll import suit_cards

    d = get_deck(deck)
    cards = suit_cards(d.id, suit)
    cards = cards[:n] if n is not None else cards
    faces = faces_for(d)
    per_row = 9 if len(cards) <= 9 else 7
    return cards_photo([faces.render(c, style, 4.0)[0] for c in cards], seed, per_row=per_row, width=width,
                       height=height)


def cards_photo(faces, seed: int, per_row: int = 8, width: int = 1280, height: int = 720) -> np.ndarray:
    """Card faces lying upright side by side on a plain table, in rows of ``per_row`` (left to right, top row
    first), photographed from above, slightly tilted."""
    rng = np.random.default_rng(seed)
    plain = ("felt", "wood", "cloth", "gradient")  # a table, not a patterned cloth
    img = make_surface(plain[rng.integers(len(plain))], rng, width, height).astype(np.float32)
    rows = max(1, math.ceil(len(faces) / per_row))
    fh0, fw0 = faces[0].shape[:2]
    slot = min(width / (per_row + 0.3), height / (rows * fh0 / fw0 * 1.08 + 0.3) * fw0 / fh0)
    cw = slot * rng.uniform(0.8, 0.86)
    for i, face in enumerate(faces):
        row, col = divmod(i, per_row)
        fh, fw = face.shape[:2]
        ch = cw * fh / fw
        cx = slot * (col + 0.65) + rng.uniform(-3, 3)
        cy = height / 2 + (row - (rows - 1) / 2) * ch * 1.08 + rng.uniform(-15 / rows, 15 / rows)
        a = math.radians(rng.uniform(-4, 4))
        c, s = math.cos(a), math.sin(a)
        base = np.array([[-cw / 2, -ch / 2], [cw / 2, -ch / 2], [cw / 2, ch / 2], [-cw / 2, ch / 2]])
        dst = (base @ np.array([[c, s], [-s, c]]) + [cx, cy] + rng.normal(0, 1.0, (4, 2))).astype(np.float32)
        M = cv2.getPerspectiveTransform(np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32), dst)
        warped = cv2.warpPerspective(face, M, (width, height), flags=cv2.INTER_AREA).astype(np.float32)
        m = cv2.warpPerspective(np.ones((fh, fw), np.float32), M, (width, height))[..., None]
        img = img * (1 - m) + warped * m
    return _light(np.clip(img, 0, 255), np.random.default_rng(seed + 1))
