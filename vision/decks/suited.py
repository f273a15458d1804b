"""Faces of suited decks (standard52, island54): a rank and a suit symbol in the corners, pips or a framed
court in the middle. The deck modules (``vision/decks/standard.py``, ``vision/decks/island.py``) give the suit
symbols, colours and pip counts; this module draws.

A face is drawn in millimetre coordinates at ``px_per_mm`` pixels per millimetre. Like the Pirate's Bluff faces
(``vision/decks/render.py``), ``render_suited`` returns the image and the index quads in card-image pixels, each
ordered (top-left, top-right, bottom-right, bottom-left) *of the index as read upright*: the top-left index, the
bottom-right one turned 180 degrees, and with ``four_corners`` also the top-right (upright) and bottom-left
(turned) ones.

Index styles (``SuitedStyle.index``): ``stacked`` (rank over symbol, the classic index), ``beside`` (symbol
right of the rank), ``jumbo`` (a large rank over a small symbol) and ``small`` (a compact bridge-deck index).
Symbol drawings (``SuitedStyle.drawing``): ``filled``, ``outline``, ``bold`` and ``simple`` (a plainer shape).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import cv2
import numpy as np

from vision.decks.render import CARD_SIZES_MM

FONTS = (
    cv2.FONT_HERSHEY_SIMPLEX,
    cv2.FONT_HERSHEY_DUPLEX,
    cv2.FONT_HERSHEY_COMPLEX,
    cv2.FONT_HERSHEY_TRIPLEX,
    cv2.FONT_HERSHEY_PLAIN,
)
INDEX_STYLES = ("stacked", "beside", "jumbo", "small")
DRAWINGS = ("filled", "outline", "bold", "simple")
CENTRES = ("pips", "big", "plain")
PAPERS = ((250, 250, 250), (235, 245, 250), (225, 240, 248), (240, 240, 235), (245, 235, 220))

# Index geometry in mm (the rank's cap height and the symbol's height for the "stacked" style).
RANK_H_MM = 6.5
SYMBOL_H_MM = 5.5
GAP_MM = 1.2


@dataclass(frozen=True)
class SuitedStyle:
    font: int = cv2.FONT_HERSHEY_DUPLEX
    font_path: str | None = None  # a TrueType/OpenType file (PIL) instead of the Hershey ``font``
    weight: float = 1.0  # stroke weight multiplier (Hershey) / extra stroke (TrueType)
    index: str = "stacked"
    drawing: str = "filled"
    palette: int = 0  # the deck module's colour set (0: the print colours)
    paper: tuple = (250, 250, 250)
    border: bool = True
    centre: str = "pips"  # pips | big (one large symbol) | plain (nothing but the indices)
    four_corners: bool = False
    margin_mm: float = 2.8
    index_scale: float = 1.0
    size: str = "poker"
    seed: int = 0
    reshape: bool = False  # the rank's glyphs redrawn at random (vision.decks.render.reshaped): training faces only

    @property
    def size_mm(self) -> tuple[float, float]:
        return CARD_SIZES_MM[self.size]


def random_suited_style(rng: np.random.Generator, n_palettes: int, fonts=None) -> SuitedStyle:
    """A random face. ``fonts``: (family, files) pairs (as vision.fonts.split_fonts gives) to set the index in;
    None: Hershey faces only."""
    path = None
    if fonts:
        _fam, files = fonts[int(rng.integers(len(fonts)))]
        path = files[int(rng.integers(len(files)))]
    return SuitedStyle(
        font=FONTS[int(rng.integers(len(FONTS)))],
        font_path=path,
        weight=float(rng.uniform(0.7, 1.5)),
        index=INDEX_STYLES[int(rng.integers(len(INDEX_STYLES)))],
        drawing=DRAWINGS[int(rng.integers(len(DRAWINGS)))],
        palette=int(rng.integers(n_palettes)),
        paper=PAPERS[int(rng.integers(len(PAPERS)))],
        border=bool(rng.random() < 0.6),
        centre=CENTRES[int(rng.integers(len(CENTRES)))],
        four_corners=bool(rng.random() < 0.2),
        margin_mm=float(rng.uniform(2.0, 4.0)),
        index_scale=float(rng.uniform(0.8, 1.2)),
        size=("poker", "poker", "bridge", "uno")[int(rng.integers(4))],
        seed=int(rng.integers(1 << 30)),
    )


class SuitedFaces:
    """A suited deck's face renderer (``Deck.faces``). A subclass names its deck (``deck_id``), its ``PALETTES``
    and print style (``PRINT``), and says in ``face(card, style)`` what the card shows: (index text, pips, court
    card?, symbol drawing, ink)."""

    deck_id: str
    PALETTES: tuple
    PRINT: SuitedStyle

    @property
    def palettes(self) -> int:
        return len(self.PALETTES)

    def print_style(self, size: str = "poker") -> SuitedStyle:
        from dataclasses import replace

        return replace(self.PRINT, size=size)

    def random_style(self, rng: np.random.Generator, fonts=None) -> SuitedStyle:
        return random_suited_style(rng, len(self.PALETTES), fonts)

    def face(self, card, style: SuitedStyle) -> tuple:  # pragma: no cover - abstract
        raise NotImplementedError

    def render(self, card, style: SuitedStyle | None = None, px_per_mm: float = 4.0):
        """(image uint8 BGR, index quads) of ``card``."""
        style = self.PRINT if style is None else style
        return render_suited(*self.face(card, style), style, px_per_mm)


# ---------------------------------------------------------------- symbols
SS = 4  # supersampling for symbol drawings


class Canvas:
    """A square canvas in unit coordinates (0..1 both ways, y down) for drawing one symbol as a mask."""

    def __init__(self, px: int):
        self.n = px
        self.m = np.zeros((px, px), np.uint8)

    def p(self, x, y):
        return (int(round(x * self.n)), int(round(y * self.n)))

    def circle(self, x, y, r, fill=255, thick=-1):
        t = thick if thick < 0 else max(1, int(round(thick * self.n)))
        cv2.circle(self.m, self.p(x, y), max(1, int(round(r * self.n))), fill, t, cv2.LINE_AA)

    def ellipse(self, x, y, rx, ry, ang=0.0, a0=0, a1=360, fill=255, thick=-1):
        t = thick if thick < 0 else max(1, int(round(thick * self.n)))
        cv2.ellipse(self.m, self.p(x, y), (max(1, int(round(rx * self.n))), max(1, int(round(ry * self.n)))),
                    ang, a0, a1, fill, t, cv2.LINE_AA)

    def poly(self, pts, fill=255):
        cv2.fillPoly(self.m, [np.array([self.p(x, y) for x, y in pts], np.int32)], fill, cv2.LINE_AA)

    def line(self, pts, w, fill=255):
        pp = np.array([self.p(x, y) for x, y in pts], np.int32)
        cv2.polylines(self.m, [pp], False, fill, max(1, int(round(w * self.n))), cv2.LINE_AA)


def symbol_mask(draw: Callable[[Canvas, bool], None], height_px: float, drawing: str) -> np.ndarray:
    """The symbol drawn by ``draw(canvas, simple)`` as a float alpha tile ``height_px`` tall, cropped to its ink."""
    n = max(16, int(round(height_px * SS)))
    c = Canvas(n)
    draw(c, drawing == "simple")
    m = c.m
    if drawing == "outline":
        k = max(3, int(round(n * 0.09)) | 1)
        m = cv2.subtract(m, cv2.erode(m, np.ones((k, k), np.uint8)))
    elif drawing == "bold":
        k = max(3, int(round(n * 0.05)) | 1)
        m = cv2.dilate(m, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    ys, xs = np.nonzero(m > 30)
    if len(xs) == 0:
        return np.zeros((max(1, int(height_px)), 1), np.float32)
    m = m[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    h = max(1, int(round(height_px)))
    w = max(1, int(round(m.shape[1] * h / m.shape[0])))
    return cv2.resize(m, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


# ---------------------------------------------------------------- text
_TTF: dict = {}


def text_mask(text: str, height_px: float, style: SuitedStyle) -> np.ndarray:
    """``text`` as a float alpha tile, its ink ``height_px`` tall (Hershey, or the style's TrueType file)."""
    if style.font_path:
        from PIL import Image, ImageDraw, ImageFont

        key = style.font_path
        if key not in _TTF:
            _TTF[key] = ImageFont.truetype(style.font_path, 96)
        font = _TTF[key]
        sw = int(round(max(0.0, style.weight - 1.0) * 6))
        l, t, r, b = font.getbbox(text, stroke_width=sw)
        pad = 12 + sw
        im = Image.new("L", (r - l + 2 * pad, b - t + 2 * pad), 0)
        ImageDraw.Draw(im).text((pad - l, pad - t), text, font=font, fill=255, stroke_width=sw, stroke_fill=255)
        tile = np.asarray(im, np.uint8)
    else:
        base = 64
        (_w, h0), _ = cv2.getTextSize(text, style.font, 1.0, 1)
        scale = base / max(h0, 1)
        t = max(1, int(round(0.16 * base * style.weight * 0.55)))
        (w, h), bl = cv2.getTextSize(text, style.font, scale, t)
        pad = 10 + t
        tile = np.zeros((h + bl + 2 * pad, w + 2 * pad), np.uint8)
        cv2.putText(tile, text, (pad, pad + h), style.font, scale, 255, t, cv2.LINE_AA)
    if style.reshape:
        from vision.decks.render import reshaped

        tile = reshaped(tile, np.random.default_rng([style.seed, *map(ord, text)]))
    ys, xs = np.nonzero(tile > 40)
    if len(xs) == 0:
        return np.zeros((max(1, int(height_px)), 1), np.float32)
    tile = tile[ys.min(): ys.max() + 1, xs.min(): xs.max() + 1]
    h = max(1, int(round(height_px)))
    w = max(1, int(round(tile.shape[1] * h / tile.shape[0])))
    if len(text) > 1:  # a two-character rank ("10") is set condensed, as on real cards
        w = max(1, int(round(w * 0.8)))
    return cv2.resize(tile, (w, h), interpolation=cv2.INTER_AREA).astype(np.float32) / 255.0


# ---------------------------------------------------------------- layout
def _stack(parts: list[np.ndarray], gap: int, vertical: bool) -> tuple[np.ndarray, list[tuple[int, int]]]:
    if vertical:
        w = max(p.shape[1] for p in parts)
        h = sum(p.shape[0] for p in parts) + gap * (len(parts) - 1)
        out = np.zeros((h, w), np.float32)
        pos, y = [], 0
        for p in parts:
            x = (w - p.shape[1]) // 2
            out[y: y + p.shape[0], x: x + p.shape[1]] = np.maximum(out[y: y + p.shape[0], x: x + p.shape[1]], p)
            pos.append((x, y))
            y += p.shape[0] + gap
        return out, pos
    h = max(p.shape[0] for p in parts)
    w = sum(p.shape[1] for p in parts) + gap * (len(parts) - 1)
    out = np.zeros((h, w), np.float32)
    pos, x = [], 0
    for p in parts:
        y = (h - p.shape[0]) // 2
        out[y: y + p.shape[0], x: x + p.shape[1]] = np.maximum(out[y: y + p.shape[0], x: x + p.shape[1]], p)
        pos.append((x, y))
        x += p.shape[1] + gap
    return out, pos


def index_mask(rank_text: str, symbol: Callable, style: SuitedStyle, ppm: float) -> np.ndarray:
    """The index (rank and suit symbol) as one alpha tile, laid out in the style's index style."""
    s = style.index_scale
    rh, sh, gap = RANK_H_MM * s, SYMBOL_H_MM * s, GAP_MM * s
    vertical = True
    if style.index == "beside":
        sh, vertical = rh * 0.85, False
    elif style.index == "jumbo":
        rh, sh = rh * 1.5, sh * 0.8
    elif style.index == "small":
        rh, sh, gap = rh * 0.75, sh * 0.75, gap * 0.8
    r = text_mask(rank_text, rh * ppm, style)
    y = symbol_mask(symbol, sh * ppm, style.drawing)
    tile, _ = _stack([r, y], max(1, int(round(gap * ppm))), vertical)
    return tile


def _paste(img: np.ndarray, alpha: np.ndarray, ink, x: int, y: int) -> None:
    h, w = alpha.shape
    x0, y0 = max(x, 0), max(y, 0)
    x1, y1 = min(x + w, img.shape[1]), min(y + h, img.shape[0])
    if x1 <= x0 or y1 <= y0:
        return
    a = alpha[y0 - y: y1 - y, x0 - x: x1 - x, None]
    roi = img[y0:y1, x0:x1]
    roi[:] = roi * (1 - a) + np.asarray(ink, np.float32) * a


# Pip positions in a pip box (x 0..1, y 0..1), for 1..10 pips; pips below the middle are drawn turned.
_L, _M, _R = 0.0, 0.5, 1.0
PIPS: dict[int, list[tuple[float, float]]] = {
    1: [(_M, 0.5)],
    2: [(_M, 0.0), (_M, 1.0)],
    3: [(_M, 0.0), (_M, 0.5), (_M, 1.0)],
    4: [(_L, 0.0), (_R, 0.0), (_L, 1.0), (_R, 1.0)],
    5: [(_L, 0.0), (_R, 0.0), (_M, 0.5), (_L, 1.0), (_R, 1.0)],
    6: [(_L, 0.0), (_R, 0.0), (_L, 0.5), (_R, 0.5), (_L, 1.0), (_R, 1.0)],
    7: [(_L, 0.0), (_R, 0.0), (_M, 0.25), (_L, 0.5), (_R, 0.5), (_L, 1.0), (_R, 1.0)],
    8: [(_L, 0.0), (_R, 0.0), (_M, 0.25), (_L, 0.5), (_R, 0.5), (_M, 0.75), (_L, 1.0), (_R, 1.0)],
    9: [(_L, 0.0), (_R, 0.0), (_L, 1 / 3), (_R, 1 / 3), (_M, 0.5), (_L, 2 / 3), (_R, 2 / 3), (_L, 1.0), (_R, 1.0)],
    10: [(_L, 0.0), (_R, 0.0), (_M, 1 / 6), (_L, 1 / 3), (_R, 1 / 3), (_L, 2 / 3), (_R, 2 / 3), (_M, 5 / 6),
         (_L, 1.0), (_R, 1.0)],
}


def render_suited(rank_text: str, pips: int, court: bool, symbol: Callable, ink, style: SuitedStyle,
                  px_per_mm: float, seed: int = 0):
    """Draw one face. ``pips``: how many suit symbols in the middle (1 = a big ace symbol); ``court``: a framed
    court card showing ``rank_text`` large instead. Returns (image uint8 BGR, index quads)."""
    ppm = px_per_mm
    wmm, hmm = style.size_mm
    W, H = int(round(wmm * ppm)), int(round(hmm * ppm))
    img = np.empty((H, W, 3), np.float32)
    img[:] = style.paper
    ink = tuple(float(c) for c in ink)
    if style.border:
        m = int(round(1.5 * ppm))
        cv2.rectangle(img, (m, m), (W - 1 - m, H - 1 - m), (60, 60, 60), max(1, int(round(0.25 * ppm))), cv2.LINE_AA)
    idx = index_mask(rank_text, symbol, style, ppm)
    ih, iw = idx.shape
    x = int(round(style.margin_mm * ppm))
    y = int(round(style.margin_mm * ppm))
    # the middle: keep clear of the index columns
    side = (style.margin_mm + iw / ppm + 1.5) * ppm
    top = (style.margin_mm + 1.0) * ppm
    if style.centre != "plain":
        if court:
            fx0, fy0, fx1, fy1 = int(side), int(top + 2 * ppm), int(W - side), int(H - top - 2 * ppm)
            cv2.rectangle(img, (fx0, fy0), (fx1, fy1), ink, max(1, int(round(0.5 * ppm))), cv2.LINE_AA)
            big = text_mask(rank_text, min(fx1 - fx0, fy1 - fy0) * 0.45, style)
            _paste(img, big, ink, (fx0 + fx1 - big.shape[1]) // 2, (fy0 + fy1 - big.shape[0]) // 2)
            sm = symbol_mask(symbol, 0.14 * (fx1 - fx0), style.drawing)
            pad = int(round(1.2 * ppm))
            _paste(img, sm, ink, fx0 + pad, fy0 + pad)
            _paste(img, sm[::-1, ::-1], ink, fx1 - pad - sm.shape[1], fy1 - pad - sm.shape[0])
        elif pips == 1 or style.centre == "big":
            s = symbol_mask(symbol, min(W - 2 * side, H * 0.4) * (0.8 if pips == 1 else 0.55), style.drawing)
            _paste(img, s, ink, (W - s.shape[1]) // 2, (H - s.shape[0]) // 2)
        else:
            bw, bh = W - 2 * side, H - 2 * top - 4 * ppm
            ph = min(bh / 5.2, bw / 3.2) * (0.95 if pips <= 8 else 0.85)
            pm = symbol_mask(symbol, ph, style.drawing)
            px0 = side + pm.shape[1] / 2
            px1 = W - side - pm.shape[1] / 2
            py0 = top + 2 * ppm + ph / 2
            py1 = H - top - 2 * ppm - ph / 2
            for u, v in PIPS[pips]:
                cx = px0 + u * (px1 - px0)
                cy = py0 + v * (py1 - py0)
                t = pm[::-1, ::-1] if v > 0.5 else pm
                _paste(img, t, ink, int(round(cx - t.shape[1] / 2)), int(round(cy - t.shape[0] / 2)))
    # the indices
    _paste(img, idx, ink, x, y)
    _paste(img, idx[::-1, ::-1], ink, W - x - iw, H - y - ih)
    pad = 0.8 * ppm
    q1 = np.array([[x - pad, y - pad], [x + iw + pad, y - pad], [x + iw + pad, y + ih + pad], [x - pad, y + ih + pad]],
                  np.float32)
    quads = [q1, np.array([[W, H]], np.float32) - q1]
    if style.four_corners:
        _paste(img, idx, ink, W - x - iw, y)
        _paste(img, idx[::-1, ::-1], ink, x, H - y - ih)
        q3 = q1 + np.array([[W - 2 * x - iw, 0]], np.float32)
        quads += [q3, np.array([[W, H]], np.float32) - q3]
    return np.clip(img, 0, 255).astype(np.uint8), quads


def polar(cx: float, cy: float, r: float, deg: float) -> tuple[float, float]:
    a = math.radians(deg)
    return cx + r * math.cos(a), cy + r * math.sin(a)
