"""Faces of the Island Deck (companion/decks/island54.py, ../shared/cards.md): six suits told apart by colour
AND symbol, ranks A-7, Q, K. The index in the corners is the rank and the suit symbol, in the suit's colour.

Symbols (the rules' four and the project's two): anchor, boat, crab, flower, palm, skull; each in several
drawings (``vision.decks.suited.DRAWINGS``). Colours (the published deck's names) come in palettes: 0 the
print colours, 1 deeper, 2 paler shades. Red, pink and purple sit close together for colour-blind players;
the symbol is what tells them apart, so every drawing keeps the symbols' shapes distinct.
"""

from __future__ import annotations

from vision.decks.suited import Canvas, SuitedFaces, SuitedStyle, polar

PALETTES = (  # BGR per colour name
    {"blue": (200, 95, 20), "red": (40, 40, 205), "pink": (170, 95, 240), "yellow": (0, 170, 225),
     "green": (60, 145, 25), "purple": (160, 45, 120)},
    {"blue": (150, 60, 10), "red": (25, 25, 165), "pink": (140, 60, 215), "yellow": (0, 140, 200),
     "green": (40, 110, 15), "purple": (120, 30, 90)},
    {"blue": (225, 140, 70), "red": (80, 80, 225), "pink": (195, 140, 245), "yellow": (40, 190, 235),
     "green": (100, 175, 70), "purple": (190, 100, 160)},
)


def _anchor(c: Canvas, simple: bool) -> None:
    c.circle(0.5, 0.1, 0.08, thick=0.05)  # the ring
    c.line([(0.5, 0.18), (0.5, 0.88)], 0.09)  # the shank
    c.line([(0.25, 0.3), (0.75, 0.3)], 0.08)  # the stock
    if simple:
        c.line([(0.12, 0.6), (0.5, 0.92), (0.88, 0.6)], 0.09)
        return
    c.ellipse(0.5, 0.58, 0.38, 0.34, 0, 20, 160, thick=0.09)  # the arms
    for x in (0.13, 0.87):  # the flukes
        c.poly([(x - 0.1, 0.66), (x + 0.1, 0.66), (x, 0.5)])


def _boat(c: Canvas, simple: bool) -> None:
    c.poly([(0.02, 0.68), (0.98, 0.68), (0.8, 0.95), (0.2, 0.95)])  # the hull
    c.line([(0.5, 0.68), (0.5, 0.04)], 0.06)  # the mast
    c.poly([(0.55, 0.06), (0.55, 0.6), (0.92, 0.6)])  # the main sail
    if not simple:
        c.poly([(0.45, 0.14), (0.45, 0.6), (0.14, 0.6)])  # the jib


def _crab(c: Canvas, simple: bool) -> None:
    c.ellipse(0.5, 0.6, 0.3, 0.2)  # the body
    for s in (-1, 1):
        for k in range(3):  # legs
            y = 0.58 + 0.09 * k
            c.line([(0.5 + s * 0.25, y), (0.5 + s * 0.42, y + 0.08), (0.5 + s * 0.48, y + 0.2)], 0.04)
        c.line([(0.5 + s * 0.18, 0.45), (0.5 + s * 0.3, 0.3)], 0.05)  # arm
        if simple:
            c.circle(0.5 + s * 0.32, 0.2, 0.12)
        else:  # an open claw
            c.circle(0.5 + s * 0.32, 0.22, 0.13)
            c.poly([(0.5 + s * 0.32, 0.22), (0.5 + s * 0.22, 0.02), (0.5 + s * 0.42, 0.02)], fill=0)
    if not simple:  # eyes on stalks
        c.circle(0.42, 0.36, 0.04)
        c.circle(0.58, 0.36, 0.04)


def _flower(c: Canvas, simple: bool) -> None:
    n = 5
    for k in range(n):
        a = -90 + 360 * k / n
        x, y = polar(0.5, 0.5, 0.28, a)
        if simple:
            c.circle(x, y, 0.19)
        else:
            c.ellipse(x, y, 0.22, 0.14, a)
    c.circle(0.5, 0.5, 0.13, fill=0)
    c.circle(0.5, 0.5, 0.09)


def _palm(c: Canvas, simple: bool) -> None:
    c.line([(0.5, 0.98), (0.47, 0.7), (0.5, 0.45), (0.56, 0.28)], 0.08)  # the trunk
    c.poly([(0.36, 0.98), (0.64, 0.98), (0.5, 0.9)])
    leaves = (200, 240, 290, 330, 20) if not simple else (210, 270, 330)
    for a in leaves:
        x, y = polar(0.56, 0.28, 0.27, a)
        c.ellipse((0.56 + x) / 2, (0.28 + y) / 2, 0.25, 0.075, a)
    if not simple:
        c.circle(0.5, 0.36, 0.05)
        c.circle(0.62, 0.37, 0.05)


def _skull(c: Canvas, simple: bool) -> None:
    c.circle(0.5, 0.42, 0.36)  # the cranium
    c.poly([(0.28, 0.6), (0.72, 0.6), (0.68, 0.92), (0.32, 0.92)])  # the jaw
    c.circle(0.36, 0.45, 0.1, fill=0)  # the eyes
    c.circle(0.64, 0.45, 0.1, fill=0)
    c.poly([(0.5, 0.58), (0.45, 0.7), (0.55, 0.7)], fill=0)  # the nose
    if not simple:  # the teeth
        for x in (0.4, 0.5, 0.6):
            c.line([(x, 0.8), (x, 0.92)], 0.03, fill=0)


SYMBOLS = {"anchors": _anchor, "boats": _boat, "crabs": _crab, "flowers": _flower, "palms": _palm,
           "skulls": _skull}
PIP_COUNT = {"A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7}

PRINT_STYLE = SuitedStyle(weight=1.15, index="stacked", drawing="filled", palette=0, border=True, centre="pips")


class IslandFaces(SuitedFaces):
    """The face renderer of island54 (``Deck.faces``)."""

    deck_id = "island54"
    PALETTES = PALETTES
    PRINT = PRINT_STYLE

    def face(self, card, style: SuitedStyle) -> tuple:  # an ``IslandCard``
        ink = PALETTES[style.palette % len(PALETTES)][card.colour]
        return card.rank, PIP_COUNT.get(card.rank, 0), card.rank in ("Q", "K"), SYMBOLS[card.suit], ink


FACES = IslandFaces()
