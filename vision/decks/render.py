"""Render Pirate's Bluff card faces following the card-face contract (cards.md).

A face is drawn in millimetre coordinates at ``px_per_mm`` pixels per millimetre. The index (rank numeral
0-8 or W for a wild, with the letter A-H directly below it) sits in the top-left corner and again in the
bottom-right corner turned 180 degrees. ``render_card`` returns the image and the two index boxes as
quads in pixel coordinates of the card image, each quad ordered (top-left, top-right, bottom-right,
bottom-left) *of the index as read upright*, so a quad always says which way the index faces.

Faces vary by :class:`FaceStyle`: Hershey font, stroke weight, ink and paper colours, a border, centre art,
and "pen-written" letters (a thin stroke with per-glyph jitter, as on a home-made deck).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

CARD_SIZES_MM = {"poker": (63.0, 88.0), "bridge": (57.0, 89.0), "uno": (56.0, 87.0), "mini": (44.0, 63.0)}

FONTS = [
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
]
PEN_FONTS = [cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_PLAIN, cv2.FONT_HERSHEY_SCRIPT_SIMPLEX]
INKS = [(20, 20, 20), (30, 30, 150), (140, 40, 20), (30, 90, 30), (20, 50, 90), (90, 30, 90)]  # BGR
PAPERS = [(250, 250, 250), (225, 240, 248), (235, 245, 250), (240, 230, 235), (225, 245, 235), (245, 235, 220)]

# Index layout in mm from the card's top-left corner (the numeral's cap height and the letter's).
INDEX_X_MM = 3.0
INDEX_Y_MM = 3.0
NUMERAL_H_MM = 7.5
LETTER_H_MM = 5.5
GAP_MM = 1.6
INDEX_W_MM = 6.0


@dataclass(frozen=True)
class FaceStyle:
    font: int = cv2.FONT_HERSHEY_DUPLEX
    weight: float = 1.0  # stroke weight multiplier
    ink: tuple = (20, 20, 20)
    letter_ink: tuple = (20, 20, 20)
    paper: tuple = (250, 250, 250)
    border: bool = True
    art: int = 0  # 0 none, 1 circles, 2 polygon ship, 3 big numeral, 4 stripes
    pen_letter: bool = False
    wild_w: bool = False  # wilds show W instead of 0
    size: str = "poker"
    seed: int = 0  # jitter seed for pen strokes and art

    @property
    def size_mm(self) -> tuple[float, float]:
        return CARD_SIZES_MM[self.size]


PRINT_STYLE = FaceStyle(font=cv2.FONT_HERSHEY_DUPLEX, weight=1.15, border=True, art=2, wild_w=False)


def random_style(rng: np.random.Generator) -> FaceStyle:
    ink = INKS[rng.integers(len(INKS))]
    pen = bool(rng.random() < 0.35)
    letter_ink = (INKS[rng.integers(len(INKS))] if pen else ink)
    return FaceStyle(
        font=FONTS[rng.integers(len(FONTS))],
        weight=float(rng.uniform(0.7, 1.5)),
        ink=ink,
        letter_ink=letter_ink,
        paper=PAPERS[rng.integers(len(PAPERS))],
        border=bool(rng.random() < 0.6),
        art=int(rng.integers(5)),
        pen_letter=pen,
        wild_w=bool(rng.random() < 0.4),
        size=["poker", "poker", "bridge", "uno"][rng.integers(4)],
        seed=int(rng.integers(1 << 30)),
    )


def _glyph(text: str, font: int, height_px: float, thick: int, ink, rng, pen: bool) -> tuple[np.ndarray, np.ndarray]:
    """Render one glyph on a transparent tile; return (bgr, alpha) cropped to the ink."""
    base = 40
    scale = 1.0
    (w, h), _ = cv2.getTextSize(text, font, scale, 1)
    scale = base / max(h, 1)
    t = max(1, int(round(thick * base / max(height_px, 1))))
    (w, h), bl = cv2.getTextSize(text, font, scale, t)
    pad = 10 + t
    tile = np.zeros((h + bl + 2 * pad, w + 2 * pad), np.uint8)
    cv2.putText(tile, text, (pad, pad + h), font, scale, 255, t, cv2.LINE_AA)
    if pen:  # a hand-written look: random shear/rotation/aspect plus a wobble
        hh, ww = tile.shape
        ang = rng.uniform(-12, 12)
        shear = rng.uniform(-0.25, 0.25)
        m = cv2.getRotationMatrix2D((ww / 2, hh / 2), ang, 1.0)
        m[0, 1] += shear
        m[:, 2] += [-shear * hh / 2, 0]
        m[0, :] *= rng.uniform(0.85, 1.15)
        tile = cv2.warpAffine(tile, m, (ww, hh))
        ys, xs = np.mgrid[0:hh, 0:ww].astype(np.float32)
        amp = rng.uniform(0.5, 1.6)
        ph = rng.uniform(0, 6.28, 2)
        mx = xs + amp * np.sin(ys / rng.uniform(5, 9) + ph[0])
        my = ys + amp * np.sin(xs / rng.uniform(5, 9) + ph[1])
        tile = cv2.remap(tile, mx.astype(np.float32), my.astype(np.float32), cv2.INTER_LINEAR)
    ys, xs = np.nonzero(tile > 40)
    if len(xs) == 0:
        tile = np.zeros((4, 4), np.uint8)
    else:
        tile = tile[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    k = height_px / tile.shape[0]
    nw = max(1, int(round(tile.shape[1] * k)))
    nh = max(1, int(round(height_px)))
    alpha = cv2.resize(tile, (nw, nh), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0
    bgr = np.empty((nh, nw, 3), np.float32)
    bgr[:] = ink
    return bgr, alpha


def _paste(img: np.ndarray, bgr: np.ndarray, alpha: np.ndarray, x: int, y: int) -> None:
    h, w = alpha.shape
    roi = img[y : y + h, x : x + w]
    a = alpha[: roi.shape[0], : roi.shape[1], None]
    roi[:] = roi * (1 - a) + bgr[: roi.shape[0], : roi.shape[1]] * a


def _index_tile(rank: int, letter: str, style: FaceStyle, ppm: float, rng) -> tuple[np.ndarray, np.ndarray]:
    """The index (numeral over letter) as (bgr, alpha) tile, left-aligned, centred on a common axis."""
    thick = max(1, int(round(0.9 * style.weight * ppm)))
    rank_text = "W" if (rank == 0 and style.wild_w) else str(rank)
    nb, na = _glyph(rank_text, style.font, NUMERAL_H_MM * ppm, thick, style.ink, rng, False)
    lfont = PEN_FONTS[rng.integers(len(PEN_FONTS))] if style.pen_letter else style.font
    lthick = max(1, int(round((0.6 if style.pen_letter else 0.8) * style.weight * ppm)))
    lb, la = _glyph(letter, lfont, LETTER_H_MM * ppm, lthick, style.letter_ink, rng, style.pen_letter)
    gap = int(round(GAP_MM * ppm))
    w = max(na.shape[1], la.shape[1])
    h = na.shape[0] + gap + la.shape[0]
    bgr = np.zeros((h, w, 3), np.float32)
    alpha = np.zeros((h, w), np.float32)
    x0 = (w - na.shape[1]) // 2
    bgr[: na.shape[0], x0 : x0 + na.shape[1]] = nb
    alpha[: na.shape[0], x0 : x0 + na.shape[1]] = na
    x1 = (w - la.shape[1]) // 2
    y1 = na.shape[0] + gap
    bgr[y1 : y1 + la.shape[0], x1 : x1 + la.shape[1]] = lb
    alpha[y1 : y1 + la.shape[0], x1 : x1 + la.shape[1]] = la
    return bgr, alpha


def index_boxes_mm(style: FaceStyle) -> float:
    """Nominal index height in mm (numeral + gap + letter)."""
    return NUMERAL_H_MM + GAP_MM + LETTER_H_MM


def _art(img: np.ndarray, rank: int, style: FaceStyle, ppm: float, rng) -> None:
    h, w = img.shape[:2]
    cx, cy = w / 2, h / 2
    col = tuple(int(c) for c in style.ink)
    if style.art == 1:
        for _ in range(int(rng.integers(3, 9))):
            r = int(rng.uniform(3, 12) * ppm)
            c2 = tuple(int(v) for v in rng.integers(60, 230, 3))
            cv2.circle(img, (int(cx + rng.uniform(-12, 12) * ppm), int(cy + rng.uniform(-18, 18) * ppm)), r, c2, -1, cv2.LINE_AA)
    elif style.art == 2:  # a little ship: hull polygon + mast + sail
        s = ppm
        hull = np.array([[cx - 16 * s, cy + 6 * s], [cx + 16 * s, cy + 6 * s], [cx + 11 * s, cy + 14 * s], [cx - 11 * s, cy + 14 * s]], np.int32)
        cv2.fillPoly(img, [hull], (40, 70, 110), cv2.LINE_AA)
        cv2.line(img, (int(cx), int(cy + 6 * s)), (int(cx), int(cy - 20 * s)), (40, 50, 60), max(1, int(1.2 * s)), cv2.LINE_AA)
        sail = np.array([[cx + 1 * s, cy - 18 * s], [cx + 13 * s, cy + 2 * s], [cx + 1 * s, cy + 2 * s]], np.int32)
        cv2.fillPoly(img, [sail], (200, 200, 210), cv2.LINE_AA)
        cv2.polylines(img, [sail], True, (60, 60, 60), max(1, int(0.5 * s)), cv2.LINE_AA)
    elif style.art == 3:  # a big centre numeral (must not be needed to read the card)
        text = "W" if (rank == 0 and style.wild_w) else str(rank)
        sc = 22 * ppm / 22.0
        (tw, th), _ = cv2.getTextSize(text, style.font, sc, max(1, int(2 * ppm)))
        cv2.putText(img, text, (int(cx - tw / 2), int(cy + th / 2)), style.font, sc, col, max(1, int(2 * ppm)), cv2.LINE_AA)
    elif style.art == 4:
        c2 = tuple(int(v) for v in rng.integers(120, 230, 3))
        for k in range(-6, 7):
            x = int(cx + k * 4 * ppm)
            cv2.line(img, (x - int(20 * ppm), int(cy + 22 * ppm)), (x + int(20 * ppm), int(cy - 22 * ppm)), c2, max(1, int(ppm)), cv2.LINE_AA)


def render_card(rank: int, letter: str, style: FaceStyle = PRINT_STYLE, px_per_mm: float = 4.0):
    """Render one face. Returns (image uint8 BGR, [quad_top_left_index, quad_bottom_right_index]).

    Each quad is a (4, 2) float array in image pixels ordered TL, TR, BR, BL as the index reads upright.
    """
    rng = np.random.default_rng(style.seed * 131 + rank * 8 + "ABCDEFGH".index(letter))
    wmm, hmm = style.size_mm
    W, H = int(round(wmm * px_per_mm)), int(round(hmm * px_per_mm))
    img = np.empty((H, W, 3), np.uint8)
    img[:] = style.paper
    if style.border:
        m = int(round(1.6 * px_per_mm))
        cv2.rectangle(img, (m, m), (W - 1 - m, H - 1 - m), tuple(int(c) for c in style.ink), max(1, int(0.3 * px_per_mm)), cv2.LINE_AA)
    _art(img, rank, style, px_per_mm, rng)
    img = img.astype(np.float32)
    bgr, alpha = _index_tile(rank, letter, style, px_per_mm, rng)
    ih, iw = alpha.shape
    x = int(round(INDEX_X_MM * px_per_mm))
    y = int(round(INDEX_Y_MM * px_per_mm))
    _paste(img, bgr, alpha, x, y)
    _paste(img, bgr[::-1, ::-1], alpha[::-1, ::-1], W - x - iw, H - y - ih)
    pad = 0.8 * px_per_mm
    # Index quads (pixel coords, upright reading order), fixed nominal width so the crop aspect is stable.
    cxi = x + iw / 2
    half = max(iw / 2, INDEX_W_MM * px_per_mm / 2) + pad
    q1 = np.array([[cxi - half, y - pad], [cxi + half, y - pad], [cxi + half, y + ih + pad], [cxi - half, y + ih + pad]], np.float32)
    q2 = np.array([[W, H]], np.float32) - q1  # rotated 180 degrees: TL of the read index is bottom-right
    img = np.clip(img, 0, 255).astype(np.uint8)
    return img, [q1, q2]
