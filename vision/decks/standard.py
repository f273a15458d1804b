"""Faces of the standard 52-card deck (companion/decks/standard52.py): the rank (2-10, J, Q, K, A) and the
suit symbol in the corners, pips or a framed court in the middle.

Suit symbols come in several drawings (``vision.decks.suited.DRAWINGS``: filled, outline, bold and a plainer
``simple`` shape); colours in two palettes: 0 the two-colour deck (spades and clubs black, hearts and diamonds
red), 1 the four-colour deck (diamonds blue, clubs green), 2 a soft two-colour print.
"""

from __future__ import annotations

import numpy as np

from vision.decks.suited import Canvas, SuitedFaces, SuitedStyle

PALETTES = (  # BGR per suit letter
    {"S": (20, 20, 20), "C": (20, 20, 20), "H": (30, 30, 200), "D": (30, 30, 200)},
    {"S": (20, 20, 20), "C": (40, 130, 20), "H": (30, 30, 200), "D": (190, 90, 20)},
    {"S": (50, 40, 40), "C": (50, 40, 40), "H": (60, 40, 170), "D": (60, 40, 170)},
)


def _heart(c: Canvas, simple: bool) -> None:
    if simple:  # straight-sided heart
        c.poly([(0.5, 0.28), (0.27, 0.06), (0.03, 0.3), (0.5, 0.95), (0.97, 0.3), (0.73, 0.06)])
        return
    c.circle(0.285, 0.32, 0.235)
    c.circle(0.715, 0.32, 0.235)
    c.poly([(0.07, 0.42), (0.93, 0.42), (0.5, 0.95)])


def _diamond(c: Canvas, simple: bool) -> None:
    if simple:
        c.poly([(0.5, 0.02), (0.85, 0.5), (0.5, 0.98), (0.15, 0.5)])
        return
    pts = []  # gently curved-in sides
    for (x0, y0), (x1, y1) in (((0.5, 0.02), (0.88, 0.5)), ((0.88, 0.5), (0.5, 0.98)),
                               ((0.5, 0.98), (0.12, 0.5)), ((0.12, 0.5), (0.5, 0.02))):
        for t in np.linspace(0, 1, 9)[:-1]:
            x, y = x0 + (x1 - x0) * t, y0 + (y1 - y0) * t
            bend = 0.06 * np.sin(np.pi * t)
            pts.append((x + (0.5 - x) * bend * 2, y + (0.5 - y) * bend * 2))
    c.poly(pts)


def _spade(c: Canvas, simple: bool) -> None:
    if simple:
        c.poly([(0.5, 0.02), (0.95, 0.55), (0.72, 0.72), (0.5, 0.6), (0.28, 0.72), (0.05, 0.55)])
    else:
        c.circle(0.29, 0.56, 0.21)
        c.circle(0.71, 0.56, 0.21)
        c.poly([(0.09, 0.5), (0.91, 0.5), (0.5, 0.03)])
        # the waist: the two lobes only touch at one point, which left a pinhole above the stem (and a stray
        # square inside the outline drawing); every vertex lies inside a lobe or the stem, so the outer shape stays
        c.poly([(0.29, 0.5), (0.71, 0.5), (0.71, 0.56), (0.5, 0.62), (0.29, 0.56)])
    c.poly([(0.5, 0.55), (0.32, 0.98), (0.68, 0.98)])


def _club(c: Canvas, simple: bool) -> None:
    r = 0.2 if simple else 0.215
    c.circle(0.5, 0.26, r)
    c.circle(0.26, 0.58, r)
    c.circle(0.74, 0.58, r)
    if not simple:
        c.circle(0.5, 0.5, 0.12)
    else:  # the simple leaves only touch: fill the hole between them and the stem (inside the leaves and stem)
        c.poly([(0.5, 0.26), (0.26, 0.58), (0.4, 0.64), (0.6, 0.64), (0.74, 0.58)])
    c.poly([(0.5, 0.5), (0.33, 0.98), (0.67, 0.98)])


SYMBOLS = {"S": _spade, "H": _heart, "D": _diamond, "C": _club}
RANK_TEXT = {**{r: str(r) for r in range(2, 11)}, 11: "J", 12: "Q", 13: "K", 14: "A"}

PRINT_STYLE = SuitedStyle(weight=1.1, index="stacked", drawing="filled", palette=0, border=True, centre="pips")


class StandardFaces(SuitedFaces):
    """The face renderer of standard52 (``Deck.faces``)."""

    deck_id = "standard52"
    PALETTES = PALETTES
    PRINT = PRINT_STYLE

    def face(self, card, style: SuitedStyle) -> tuple:  # a ``StdCard``
        ink = PALETTES[style.palette % len(PALETTES)][card.suit]
        court = card.rank in (11, 12, 13)
        pips = 1 if card.rank == 14 else (0 if court else card.rank)
        return RANK_TEXT[card.rank], pips, court, SYMBOLS[card.suit], ink


FACES = StandardFaces()
