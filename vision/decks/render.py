"""Render Pirate's Bluff card faces following the card-face contract (cards.md).

A face is drawn in millimetre coordinates at ``px_per_mm`` pixels per millimetre. The index (rank numeral
0-8 or W for a wild, with the letter A-H directly below it) sits in the top-left corner and again in the
bottom-right corner turned 180 degrees. ``render_card`` returns the image and the two index boxes as
quads in pixel coordinates of the card image, each quad ordered (top-left, top-right, bottom-right,
bottom-left) *of the index as read upright*, so a quad always says which way the index faces.

Faces vary by :class:`FaceStyle`: Hershey font or a TrueType/OpenType file (``font_path``, drawn with PIL),
stroke weight, outlined glyphs, slant, condensed/widened glyphs, ink and paper colours, a border, centre art,
"pen-written" letters and ranks (a thin stroke with per-glyph jitter, as on a home-made deck), and the index
layout (``layout``: letter ``under`` / ``above`` / ``beside`` the rank, or ``centre``: a big rank and letter in the
middle with a small corner index), its size (``index_scale``) and margin (``margin_mm``).
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
    font_path: str | None = None  # a TrueType/OpenType file (PIL) instead of the Hershey ``font``
    layout: str = "under"  # letter under / above / beside the rank; "centre": big centre index + small corners
    index_scale: float = 1.0  # index size relative to the contract's 7.5 mm numeral
    margin_mm: float = INDEX_X_MM  # the index's distance from the card's top and left edges
    slant: float = 0.0  # shear of the glyphs (italic look)
    condense: float = 1.0  # glyph width factor (condensed < 1 < extended)
    outline: bool = False  # glyphs drawn as outlines
    pen_rank: bool = False  # the rank is pen-written too
    lower_letter: bool = False  # the letter drawn as its small letter ("a" for A): a hand-lettered deck, or a face
    #                             whose capitals are small letters; only where the face draws a-h (training faces)
    reshape: bool = False  # each glyph's shape redrawn at random (``reshaped``): a type design no font file draws;
    #                        training faces only (vision.corner.RESHAPE_SHARE)

    @property
    def size_mm(self) -> tuple[float, float]:
        return CARD_SIZES_MM[self.size]


PRINT_STYLE = FaceStyle(font=cv2.FONT_HERSHEY_DUPLEX, weight=1.15, border=True, art=2, wild_w=False)


LAYOUTS = ("under", "under", "above", "beside", "centre")


def random_style(rng: np.random.Generator, fonts=None) -> FaceStyle:
    """A random face. ``fonts``: (family, files) pairs (vision.fonts.split_fonts) to set the index in; None
    keeps the original Hershey-only faces (the project's own scenes: the same draws from ``rng`` either way,
    the extra choices come from a generator seeded by the style's own seed)."""
    st = _random_hershey_style(rng)
    if fonts is None:
        return st
    from dataclasses import replace

    r2 = np.random.default_rng(st.seed + 12345)
    hershey = r2.random() < 0.15
    path = None
    if not hershey:
        _fam, files = fonts[r2.integers(len(fonts))]
        path = files[r2.integers(len(files))]
    pen_rank = bool(hershey and r2.random() < 0.3)
    return replace(
        st, font_path=path, layout=LAYOUTS[r2.integers(len(LAYOUTS))], index_scale=float(r2.uniform(0.75, 1.3)),
        margin_mm=float(r2.uniform(2.0, 5.0)), slant=float(r2.uniform(-0.25, 0.25)) if r2.random() < 0.3 else 0.0,
        condense=float(r2.uniform(0.75, 1.2)) if r2.random() < 0.4 else 1.0, outline=bool(r2.random() < 0.08),
        pen_rank=pen_rank, pen_letter=st.pen_letter or pen_rank,
        paper=tuple(int(np.clip(c + r2.integers(-25, 10), 150, 255)) for c in st.paper) if r2.random() < 0.4 else st.paper,
        ink=tuple(int(v) for v in r2.integers(0, 160, 3)) if r2.random() < 0.25 else st.ink,
    )


def _random_hershey_style(rng: np.random.Generator) -> FaceStyle:
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


_TTF_CACHE: dict = {}


def _ttf(path: str, size: int):
    from PIL import ImageFont

    key = (path, size)
    if key not in _TTF_CACHE:
        if len(_TTF_CACHE) > 256:
            _TTF_CACHE.clear()
        _TTF_CACHE[key] = ImageFont.truetype(path, size)
    return _TTF_CACHE[key]


def _ttf_tile(text: str, path: str, weight: float, outline: bool) -> np.ndarray:
    """One glyph from a TrueType/OpenType file, white on black, about 80 px tall."""
    from PIL import Image, ImageDraw

    font = _ttf(path, 80)
    sw = int(round(max(0.0, weight - 1.0) * 6))  # heavier than the design: PIL's stroke
    l, t, r, b = font.getbbox(text, stroke_width=sw)
    pad = 12 + sw
    im = Image.new("L", (r - l + 2 * pad, b - t + 2 * pad), 0)
    d = ImageDraw.Draw(im)
    if outline:
        d.text((pad - l, pad - t), text, font=font, fill=0, stroke_width=max(2, sw + 2), stroke_fill=255)
        d.text((pad - l, pad - t), text, font=font, fill=0)
    else:
        d.text((pad - l, pad - t), text, font=font, fill=255, stroke_width=sw, stroke_fill=255)
    return np.asarray(im, np.uint8).copy()


def _glyph(text: str, font: int, height_px: float, thick: int, ink, rng, pen: bool, style: FaceStyle | None = None,
           ttf: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Render one glyph on a transparent tile; return (bgr, alpha) cropped to the ink."""
    if style is not None and style.font_path and ttf:
        tile = _ttf_tile(text, style.font_path, style.weight, style.outline)
    else:
        base = 40
        scale = 1.0
        (w, h), _ = cv2.getTextSize(text, font, scale, 1)
        scale = base / max(h, 1)
        t = max(1, int(round(thick * base / max(height_px, 1))))
        (w, h), bl = cv2.getTextSize(text, font, scale, t)
        pad = 10 + t
        tile = np.zeros((h + bl + 2 * pad, w + 2 * pad), np.uint8)
        cv2.putText(tile, text, (pad, pad + h), font, scale, 255, t, cv2.LINE_AA)
    if style is not None and (style.slant or style.condense != 1.0):
        hh, ww = tile.shape
        m = np.array([[style.condense, -style.slant, style.slant * hh / 2 + ww * (1 - style.condense) / 2], [0, 1, 0]], np.float32)
        nw = int(ww * max(style.condense, 1.0) + abs(style.slant) * hh) + 2
        m[0, 2] += (nw - ww) / 2
        tile = cv2.warpAffine(tile, m, (nw, hh))
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
    if style is not None and style.reshape:
        tile = reshaped(tile, rng)
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


def _shape_count(tile: np.ndarray) -> tuple[int, int]:
    """A glyph's topology: (strokes, holes), each counted only where it is more than a speck."""
    ink = cv2.copyMakeBorder((tile > 127).astype(np.uint8), 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)
    total = max(int(ink.sum()), 1)
    _n, _lab, st, _c = cv2.connectedComponentsWithStats(ink, connectivity=8)
    strokes = int((st[1:, cv2.CC_STAT_AREA] >= 0.03 * total).sum())
    _n, _lab, st, _c = cv2.connectedComponentsWithStats(1 - ink, connectivity=4)
    holes = int((st[1:, cv2.CC_STAT_AREA] >= max(12, 0.01 * total)).sum()) - 1  # less the background around it
    return strokes, holes


def _dots(on: np.ndarray, cell: int, radius: float) -> np.ndarray:
    """A dot-matrix glyph: a dot of ``radius`` x ``cell`` in each cell of the grid ``on`` (0/1) that is on, apart
    from its neighbours' dots."""
    dot = np.zeros((cell, cell), np.uint8)
    cv2.circle(dot, (cell // 2, cell // 2), max(1, min(int(cell * radius), (cell - 2) // 2)), 255, -1)
    return np.kron(on, dot).astype(np.uint8)


def reshaped(tile: np.ndarray, rng) -> np.ndarray:
    """A glyph tile (white on black, about 80 px tall) redrawn as another type design might draw it: bent by a smooth
    random displacement (an elastic distortion: strokes keep their path, proportions and curves change), then at
    random its strokes made heavier or lighter, or the glyph set on a coarse grid of square pixels or of dots (the
    pixel and dot-matrix faces). What the glyph says stays legible: the bend is a few per cent of its height, and a
    step that joins, splits or fills the glyph's strokes or holes (a "4" whose counter fills, a thin "C" that breaks)
    is not taken."""
    pad = 10
    tile = cv2.copyMakeBorder(tile, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=0)
    shape = _shape_count(tile)
    hh, ww = tile.shape
    sigma = rng.uniform(7.0, 14.0)
    amp = rng.uniform(2.0, 6.0)  # px at ~80 px glyph height: a smooth field's largest shift
    ys, xs = np.mgrid[0:hh, 0:ww].astype(np.float32)
    dx, dy = (cv2.GaussianBlur(rng.uniform(-1, 1, (hh, ww)).astype(np.float32), (0, 0), sigma) for _ in range(2))
    dx *= amp / max(float(np.abs(dx).max()), 1e-6)
    dy *= amp / max(float(np.abs(dy).max()), 1e-6)
    bent = cv2.remap(tile, xs + dx, ys + dy, cv2.INTER_LINEAR)
    if _shape_count(bent) != shape:
        return tile
    tile = bent
    u = rng.random()
    if u < 0.25:  # heavier strokes
        k = int(rng.integers(3, 8))
        cand = check = cv2.dilate(tile, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    elif u < 0.45:  # lighter strokes
        k = int(rng.integers(3, 6))
        cand = check = cv2.erode(tile, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    elif u < 0.65:  # a pixel face, or a dot-matrix face: the glyph on a coarse grid
        ys_, _xs = np.nonzero(tile > 40)
        gh = int(rng.integers(7, 14))  # grid cells over the glyph's height
        cell = max(2, int(round((ys_.max() - ys_.min() + 1) / gh))) if len(ys_) else 2
        small = cv2.resize(tile, (max(1, ww // cell), max(1, hh // cell)), interpolation=cv2.INTER_AREA)
        on = (small > rng.uniform(70, 140)).astype(np.uint8)
        check = cv2.resize(on * 255, (on.shape[1] * cell, on.shape[0] * cell), interpolation=cv2.INTER_NEAREST)
        if rng.random() < 0.5:
            cand = check
        else:
            cand = _dots(on, cell, rng.uniform(0.3, 0.5))
    else:
        return tile
    return cand if _shape_count(check) == shape else tile


def _paste(img: np.ndarray, bgr: np.ndarray, alpha: np.ndarray, x: int, y: int) -> None:
    h, w = alpha.shape
    roi = img[y : y + h, x : x + w]
    a = alpha[: roi.shape[0], : roi.shape[1], None]
    roi[:] = roi * (1 - a) + bgr[: roi.shape[0], : roi.shape[1]] * a


def _index_tile(rank: int, letter: str, style: FaceStyle, ppm: float, rng, scale: float | None = None,
                layout: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The index as (bgr, alpha) tile: numeral over letter (``under``, the contract's), letter over numeral
    (``above``) or letter right of the numeral (``beside``)."""
    scale = style.index_scale if scale is None else scale
    layout = (style.layout if style.layout != "centre" else "under") if layout is None else layout
    thick = max(1, int(round((0.6 if style.pen_rank else 0.9) * style.weight * ppm * scale)))
    rank_text = "W" if (rank == 0 and style.wild_w) else str(rank)
    rfont = PEN_FONTS[rng.integers(len(PEN_FONTS))] if style.pen_rank else style.font
    nb, na = _glyph(rank_text, rfont, NUMERAL_H_MM * ppm * scale, thick, style.ink, rng, style.pen_rank, style,
                    ttf=not style.pen_rank)
    lfont = PEN_FONTS[rng.integers(len(PEN_FONTS))] if style.pen_letter else style.font
    lthick = max(1, int(round((0.6 if style.pen_letter else 0.8) * style.weight * ppm * scale)))
    lb, la = _glyph(letter.lower() if style.lower_letter else letter, lfont, LETTER_H_MM * ppm * scale, lthick,
                    style.letter_ink, rng, style.pen_letter, style, ttf=not style.pen_letter)
    gap = int(round(GAP_MM * ppm * scale))
    if layout == "beside":
        w = na.shape[1] + gap + la.shape[1]
        h = max(na.shape[0], la.shape[0])
        parts = [(nb, na, 0, h - na.shape[0]), (lb, la, na.shape[1] + gap, h - la.shape[0])]
    else:
        w = max(na.shape[1], la.shape[1])
        h = na.shape[0] + gap + la.shape[0]
        top, bot = ((nb, na), (lb, la)) if layout == "under" else ((lb, la), (nb, na))
        parts = [(top[0], top[1], (w - top[1].shape[1]) // 2, 0),
                 (bot[0], bot[1], (w - bot[1].shape[1]) // 2, top[1].shape[0] + gap)]
    bgr = np.zeros((h, w, 3), np.float32)
    alpha = np.zeros((h, w), np.float32)
    for b, a, x, y in parts:
        bgr[y : y + a.shape[0], x : x + a.shape[1]] = b
        alpha[y : y + a.shape[0], x : x + a.shape[1]] = a
    return bgr, alpha


def index_boxes_mm(style: FaceStyle) -> float:
    """Nominal index height in mm (numeral + gap + letter)."""
    return NUMERAL_H_MM + GAP_MM + LETTER_H_MM


def _art(img: np.ndarray, rank: int, style: FaceStyle | None, ppm: float, rng) -> None:
    if style is None:
        return
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
    _art(img, rank, style if style.layout != "centre" else None, px_per_mm, rng)
    img = img.astype(np.float32)
    if style.layout == "centre":  # a big index in the middle, a small one in the corners
        cb, ca = _index_tile(rank, letter, style, px_per_mm, rng, scale=2.2 * style.index_scale, layout="under")
        if ca.shape[0] < H - 4 and ca.shape[1] < W - 4:
            cv2.rectangle(img, (W // 2 - ca.shape[1] // 2 - 4, H // 2 - ca.shape[0] // 2 - 4),
                          (W // 2 + ca.shape[1] // 2 + 4, H // 2 + ca.shape[0] // 2 + 4), tuple(float(c) for c in style.paper), -1)
            _paste(img, cb, ca, W // 2 - ca.shape[1] // 2, H // 2 - ca.shape[0] // 2)
        bgr, alpha = _index_tile(rank, letter, style, px_per_mm, rng, scale=0.65 * style.index_scale, layout="under")
    else:
        bgr, alpha = _index_tile(rank, letter, style, px_per_mm, rng)
    ih, iw = alpha.shape
    x = int(round(style.margin_mm * px_per_mm))
    y = int(round(style.margin_mm * px_per_mm))
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
