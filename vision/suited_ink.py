"""The frame's own inks: an unsure card's suit told by the inks of the cards read with confidence beside it.

Every card of one suit in a deck is printed in one ink: in a two-colour deck spades and clubs share black and hearts
and diamonds red, in a four-colour deck each suit has its own, in the Island Deck each of the six suits has its
colour. Which ink goes with which suit is the deck's, not a rule the reader can assume: the suited readers are
trained with a quarter of their cards in another suit's colour or grey (``vision.suited_reader``), so their
posterior leans on colour only a little, and an index whose symbol is hard to see (a black spade or club drawn in
outline, 1-2 px strokes) often ends between a red suit and a black one.

The cards read with confidence in the same frame say what this deck's inks are. ``suit_weights`` compares an
unsure card's ink with theirs, suit by suit: a suit whose confidently read cards in this frame are all printed in
an ink far from this card's is demoted; a suit with no confident card in the frame is left as it is (nothing is
known of its ink); and when the card's ink matches no confident card's ink closely (another deck's card, a light
the frame's cards do not share) nothing changes at all, nor in a frame whose confident cards show one suit in two
inks (``one_ink_per_suit``: two decks on the table, or a confident misread).

The ink of a view (``ink_colour``) is taken from its marks: the pixels at least ``INK_DARK`` of the way from the
paper to the darkest pixel and enclosed by paper (a card's outline snapped a little off takes in some table, which
is not ink), the view's colours first scaled so that its paper is grey (the light's colour cast taken out); of
those marks the more colourful half's median (Lab a*, b*), so that a red index beside the face's grey border line
or a shadow is red.

The scanner (``SuitedScanner._frame_ink``) multiplies these weights into the posterior of each read not yet sure
of its card and reads it again at the same bars, for a deck whose reader's report says ``frame_ink`` (island54; for
standard52 it read more cards on fresh calibration scenes but made one more mistake). Session 64
(``models/MODEL_CARD.md``).
"""

from __future__ import annotations

import cv2
import numpy as np

from vision import corner as cr

INK_ZONE = (0.06, 0.06, 0.6, 0.6)  # of a corner region (x0, y0, x1, y1): where a whole card's index ink lies, clear
# of the card's edge
INK_PX = (42, 56)  # a view's size when its ink is measured
PAPER_CLOSE = 13  # px: paper closed over strokes this wide (a glyph is enclosed by paper, the table beside is not)
INK_DARK = 0.3  # marks: at least this share of the way from the paper to the darkest pixel
MIN_CONTRAST = 25  # L units (0-255): a view with less is paper or blur, no ink to tell
MIN_PX = 6  # ink and paper pixels at least
CORNERS_AGREE = 10.0  # a whole card's two corners' inks further apart than this: no ink (one corner is not the card)
INK_SIGMA = 4.0  # a suit's weight: exp(-((its distance - the nearest suit's) / INK_SIGMA)^2 / 2)
INK_MATCH = 20.0  # ... only where the card's ink lies within this of some confidently read card's


def _zone(region: np.ndarray, zone=INK_ZONE) -> np.ndarray:
    """The part ``zone`` (x0, y0, x1, y1 as fractions) of a quad (TL, TR, BR, BL)."""
    tl, tr, bl = region[0], region[1], region[3]
    u, v = tr - tl, bl - tl
    x0, y0, x1, y1 = zone
    return np.array([tl + x0 * u + y0 * v, tl + x1 * u + y0 * v, tl + x1 * u + y1 * v, tl + x0 * u + y1 * v],
                    np.float32)


def ink_colour(bgr: np.ndarray, quad: np.ndarray) -> np.ndarray | None:
    """The ink of the view ``quad`` (TL, TR, BR, BL) in the frame: the median (a*, b*) of the more colourful half of
    its marks, with the paper made grey; None where the view shows no ink on paper."""
    W, H = INK_PX
    dst = np.array([[0, 0], [W, 0], [W, H], [0, H]], np.float32)
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
    crop = cv2.warpPerspective(bgr, M, (W, H), flags=cv2.INTER_AREA, borderMode=cv2.BORDER_REPLICATE)
    crop = crop.astype(np.float32) / 255.0
    L = cv2.cvtColor(crop, cv2.COLOR_BGR2LAB)[..., 0] * 2.55
    lo, hi = (float(v) for v in np.percentile(L, [1, 90]))
    if hi - lo < MIN_CONTRAST:
        return None
    paper = (L > hi - 0.15 * (hi - lo)).astype(np.uint8)
    k = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (PAPER_CLOSE, PAPER_CLOSE))
    on = cv2.morphologyEx(paper, cv2.MORPH_CLOSE, k).astype(bool)
    if on.sum() > 20:
        lo = float(np.percentile(L[on], 1))
    ink = on & (L < hi - INK_DARK * (hi - lo)) & (paper == 0)
    if ink.sum() < MIN_PX or paper.sum() < MIN_PX:
        return None
    # the light's colour taken out: the paper made grey (each channel scaled by the paper's), then Lab
    white = np.median(crop[paper.astype(bool)], 0)
    balanced = np.clip(crop[ink] * (float(white.mean()) / np.maximum(white, 1e-3)), 0.0, 1.0)
    ab = cv2.cvtColor(balanced[:, None], cv2.COLOR_BGR2LAB)[:, 0, 1:]
    # the more colourful half of the marks: a red index beside a grey border line or a shadow is red
    chroma = np.hypot(ab[:, 0], ab[:, 1])
    return np.median(ab[chroma >= np.median(chroma)], 0).astype(np.float32)


def card_ink(bgr: np.ndarray, card_quad: np.ndarray) -> np.ndarray | None:
    """A whole card's ink (its quad TL, TR, BR, BL as read upright): its two index corners' (``INK_ZONE`` of each
    corner region), their mean; None where neither shows ink or the two disagree (``CORNERS_AGREE``)."""
    inks = [ink_colour(bgr, _zone(q)) for q in cr.corner_regions(np.asarray(card_quad, np.float32))]
    inks = [i for i in inks if i is not None]
    if not inks or (len(inks) == 2 and float(np.linalg.norm(inks[0] - inks[1])) > CORNERS_AGREE):
        return None
    return np.mean(inks, 0)


def one_ink_per_suit(refs: dict) -> bool:
    """Whether the confidently read cards of each suit in the frame wear one ink (no two of a suit further apart
    than INK_MATCH). Two decks on one table (a two-colour and a four-colour one), or a confident misread, give a
    suit two inks: then the frame's inks do not tell which suit an ink is."""
    return all(float(np.linalg.norm(a - b)) <= INK_MATCH for inks in refs.values()
               for i, a in enumerate(inks) for b in inks[i + 1:])


def suit_weights(ink: np.ndarray | None, refs: dict, n_suits: int) -> np.ndarray | None:
    """Per suit, how far this frame's inks let it be this card's: ``refs`` {suit index: [inks of the cards read
    with confidence in the frame]}. 1 for a suit with no such card; None (no change) where the card has no ink or
    its ink lies within INK_MATCH of no confident card's."""
    if ink is None or not refs:
        return None
    dist = np.full(n_suits, np.nan)
    for s, inks in refs.items():
        dist[s] = min(float(np.linalg.norm(ink - r)) for r in inks)
    near = float(np.nanmin(dist))
    if near > INK_MATCH:
        return None
    w = np.exp(-0.5 * ((np.nan_to_num(dist, nan=near) - near) / INK_SIGMA) ** 2)
    return np.where(np.isnan(dist), 1.0, w)
