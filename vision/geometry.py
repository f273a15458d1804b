"""Geometry shared by training and runtime (numpy + cv2 only, no torch)."""

from __future__ import annotations

import math

import cv2
import numpy as np

# Classifier input: an index crop, upright, CROP_W x CROP_H grey pixels.
CROP_W, CROP_H = 24, 48
CROP_EXPAND = 1.15


def rect_from_quad(q: np.ndarray) -> tuple[float, float, float, float, float]:
    """(cx, cy, w, h, angle_rad) of the min-area rectangle around a quad, ultralytics' xywhr convention."""
    (cx, cy), (w, h), a = cv2.minAreaRect(q.astype(np.float32))
    return cx, cy, w, h, math.radians(a)


def rect_corners(cx, cy, w, h, r) -> np.ndarray:
    c, s = math.cos(r), math.sin(r)
    u = np.array([c, s]) * w / 2
    v = np.array([-s, c]) * h / 2
    ctr = np.array([cx, cy])
    return np.array([ctr - u - v, ctr + u - v, ctr + u + v, ctr - u + v], np.float32)


def upright_quad(cx, cy, w, h, r) -> np.ndarray:
    """Corners (TL, TR, BR, BL) of the rectangle with its long side taken as 'up' (one of two readings)."""
    if w > h:
        w, h, r = h, w, r + math.pi / 2
    return rect_corners(cx, cy, w, h, r)


def crop_quad(gray: np.ndarray, quad: np.ndarray, expand: float = CROP_EXPAND) -> np.ndarray:
    """Warp the quad (TL, TR, BR, BL), grown by ``expand`` about its centre, to a CROP_W x CROP_H crop."""
    ctr = quad.mean(0)
    q = (quad - ctr) * expand + ctr
    dst = np.array([[0, 0], [CROP_W, 0], [CROP_W, CROP_H], [0, CROP_H]], np.float32)
    M = cv2.getPerspectiveTransform(q.astype(np.float32), dst)
    return cv2.warpPerspective(gray, M, (CROP_W, CROP_H), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def stretch_range(crops: np.ndarray, qs=(2, 98)) -> np.ndarray:
    """Each crop's ``qs`` percentiles over all its pixels (and channels): float64 [len(qs), N], the same numbers as
    ``np.percentile(crops.astype(np.float32), qs, axis=(1, ...))`` (linear interpolation between order statistics).
    uint8 crops (the readers' views) are counted in one histogram per crop instead of sorted: about 7 times faster
    on a frame's views, bit for bit the same."""
    n = crops.shape[0]
    if crops.dtype != np.uint8 or n == 0:
        return np.percentile(crops.astype(np.float32), list(qs), axis=tuple(range(1, crops.ndim)))
    flat = crops.reshape(n, -1)
    m = flat.shape[1]
    counts = np.bincount((flat + (np.arange(n, dtype=np.int64) * 256)[:, None]).ravel(), minlength=256 * n)
    cum = np.cumsum(counts.reshape(n, 256), axis=1)
    out = []
    for q in qs:
        i = q / 100 * (m - 1)
        lo = int(math.floor(i))
        hi, t = min(lo + 1, m - 1), i - lo
        a = (cum > lo).argmax(1).astype(np.float64)  # the lo-th smallest value of each crop
        b = (cum > hi).argmax(1).astype(np.float64)
        d = b - a
        out.append(b - d * (1 - t) if t >= 0.5 else a + d * t)  # numpy's lerp, both branches
    return np.stack(out)


def normalize_crops(crops: np.ndarray) -> np.ndarray:
    """uint8 crops (N, H, W) -> float32 (N, 1, H, W) in [-1, 1], each contrast-stretched between its 2nd and
    98th percentiles so lighting and ink colour matter less."""
    c = crops.astype(np.float32)
    lo, hi = stretch_range(crops)
    c = (c - lo[:, None, None]) / np.maximum(hi - lo, 8.0)[:, None, None]
    return (np.clip(c, 0, 1) * 2 - 1)[:, None].astype(np.float32)


# The index quad on a poker card, in mm from the top-left corner (renderer: index at 3 mm, 0.8 mm pad).
CARD_MM = (63.0, 88.0)
INDEX_MM = np.array([[1.9, 2.2], [9.5, 2.2], [9.5, 18.4], [1.9, 18.4]], np.float32)


def image_gradients(gray: np.ndarray) -> np.ndarray:
    """The x and y 3x3 Sobel gradients of the uint8 image blurred 3x3, as one (h, w, 2) int16 array (x, y side by
    side). The blurred image is whole numbers, so OpenCV's int16 ``spatialGradient`` gives the float Sobel's numbers
    exactly; kept as int16 pairs (no float copies of the frame) so that ``snap_quads`` fetches a sample point's two
    gradients in one 4-byte read."""
    return cv2.merge(cv2.spatialGradient(cv2.GaussianBlur(gray, (3, 3), 0)))


_NEXT = np.array([1, 2, 3, 0])  # a quad's corners: the next one, and the one before
_PREV = np.array([3, 0, 1, 2])


def snap_quads(grad: np.ndarray, quads: np.ndarray, search: float = 0.08,
               max_turn: float = 4.0, turn_step: float = 1.0, step: float = 1.0, samples: int = 28,
               reach_px: int | None = None, within: np.ndarray | None = None, sides: bool = False) -> tuple:
    """Move each side of each approximate card quad (K x 4 x 2) onto the strongest straight edge near it.

    Each side is tried at offsets up to ``search`` x the card's short side along its normal and at turns up
    to ``max_turn`` degrees (offsets ``step`` px apart, or within ``reach_px`` when given; ``samples`` points
    along the side); the score is the gradient across the line (the card's outline is one straight
    edge, paper brighter inside). The four fitted lines are intersected, which recovers the perspective quad.
    Returns (K x 4 x 2 quads, K scores): a score is the mean of the four sides' scores, or -inf (and the input
    quad) when the fit is implausible. All K quads are tried in one pass over the gradients (several starts for
    one card cost little more than one; the x and y of the sample points are built apart from a side's
    points and its offsets, and the big arrays are worked in place).

    ``within`` (K x 4 ints: x0, y0, x1, y1) gives each quad a window of the gradients of its own: the quad's
    corners are in the window's coordinates, and its sample points are clipped to the window as they are to the
    whole image when there is none (several cards' quads snapped in one pass over one image's gradients, each
    as it would be alone over the gradients of its window).

    ``sides``: also return each fit's four sides' scores (K x 4, side i from corner i to corner i + 1), as a third
    value."""
    if grad.dtype != np.int16 or grad.ndim != 3 or grad.shape[2] != 2:
        raise ValueError(f"snap_quads: the gradients must be image_gradients' (h, w, 2) int16 array, not {grad.dtype} "
                         f"{grad.shape}")
    h, w = grad.shape[:2]
    packed = np.ascontiguousarray(grad).view(np.int32).reshape(-1)  # a pixel's (x, y) gradients as one word
    quads = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    K = len(quads)
    ctr = quads.mean(1)
    e1, e3 = quads[:, 1] - quads[:, 0], quads[:, 3] - quads[:, 0]
    short = np.minimum(np.sqrt((e1 * e1).sum(1)), np.sqrt((e3 * e3).sum(1)))
    if reach_px is not None:
        R = np.full(K, reach_px, np.float32)
    else:
        R = np.maximum(3, np.rint(search * short)).astype(np.float32)
    n_off = np.floor((2 * R + step / 2) / step).astype(np.int64) + 1  # len(arange(-R, R + step / 2, step))
    offs = -R[:, None] + step * np.arange(int(n_off.max()), dtype=np.float32)[None]  # K x O (padded)
    valid = np.arange(offs.shape[1])[None] < n_off[:, None]
    angs = np.radians(np.arange(-max_turn, max_turn + turn_step / 2, turn_step, dtype=np.float32))
    A = len(angs)
    s = np.linspace(-0.35, 0.35, samples, dtype=np.float32)
    P = quads
    Q = quads[:, _NEXT]
    mid = (P + Q) / 2
    D = Q - P
    L = np.sqrt((D * D).sum(2))
    t0 = D / np.maximum(L, 1e-6)[..., None]
    ca, sa = np.cos(angs), np.sin(angs)
    tx = t0[..., None, 0] * ca - t0[..., None, 1] * sa  # K x 4 x A
    ty = t0[..., None, 0] * sa + t0[..., None, 1] * ca
    nx, ny = ty, -tx  # each side's normal at each turn, turned to point out of the card
    sign = np.sign((mid[..., 0] - ctr[:, None, 0]) * nx[:, :, A // 2] + (mid[..., 1] - ctr[:, None, 1]) * ny[:, :, A // 2])
    sign[sign == 0] = 1.0
    nx, ny = nx * sign[..., None], ny * sign[..., None]
    sl = (s * L[..., None])[:, :, None, :]  # K x 4 x 1 x S: the sample points' places along each side
    bx = mid[..., 0, None, None] + sl * tx[..., None]  # K x 4 x A x S
    by = mid[..., 1, None, None] + sl * ty[..., None]
    ox = offs[:, None, None, :] * nx[..., None]  # K x 4 x A x O
    oy = offs[:, None, None, :] * ny[..., None]
    px = bx[:, :, :, None, :] + ox[..., None]  # K x 4 x A x O x S
    py = by[:, :, :, None, :] + oy[..., None]
    xi = np.rint(px, out=px).astype(np.int32)
    flat = np.rint(py, out=py).astype(np.int32)
    if within is None:
        np.clip(xi, 0, w - 1, out=xi)
        np.clip(flat, 0, h - 1, out=flat)
    else:
        win = np.asarray(within, np.int32).reshape(K, 1, 1, 1, 1, 4)
        np.clip(xi, 0, win[..., 2] - win[..., 0] - 1, out=xi)
        xi += win[..., 0]
        np.clip(flat, 0, win[..., 3] - win[..., 1] - 1, out=flat)
        flat += win[..., 1]
    flat *= w
    flat += xi
    g = packed[flat].view(np.int16)  # ... x 2S: each sample point's x and y gradients side by side
    gn = g[..., 0::2] * nx[..., None, None]  # float32, as the float gradients gave
    gn += g[..., 1::2] * ny[..., None, None]
    m = gn.mean(-1)
    gn *= gn
    sd = np.sqrt(np.maximum(gn.mean(-1) - m * m, 0))
    score = -m - 0.5 * sd  # K x 4 x A x O: paper brighter inside, strong and consistent
    score = np.where(valid[:, None, None, :], score, -np.inf)
    best = score.reshape(K, 4, -1).argmax(-1)  # K x 4
    a, o = np.divmod(best, offs.shape[1])
    kk, ii = np.arange(K)[:, None], np.arange(4)[None]
    side = score[kk, ii, a, o]  # K x 4
    total = side.mean(1)  # K
    d = np.stack([tx[kk, ii, a], ty[kk, ii, a]], -1)  # K x 4 x 2: each side's fitted line, a point and a direction
    nsel = np.stack([nx[kk, ii, a], ny[kk, ii, a]], -1)
    p = mid + offs[kk, o][..., None] * nsel
    p1, d1 = p[:, _PREV], d[:, _PREV]  # corner i joins side i - 1 and side i
    det = d1[..., 1] * d[..., 0] - d1[..., 0] * d[..., 1]
    diff = p - p1
    k1 = (diff[..., 1] * d[..., 0] - diff[..., 0] * d[..., 1]) / np.where(np.abs(det) < 1e-3, 1.0, det)
    out = (p1 + k1[..., None] * d1).astype(np.float32)

    def area(q):  # shoelace, K quads
        x, y = q[..., 0].astype(np.float64), q[..., 1].astype(np.float64)
        return np.abs((x * y[:, _NEXT] - x[:, _NEXT] * y).sum(1)) / 2

    ratio = area(out) / np.maximum(area(quads), 1)
    ok = ((np.abs(det) >= 1e-3).all(1) & (ratio > 0.75) & (ratio < 1.33)
          & (np.abs(out - quads).reshape(K, -1).max(1) <= 2.5 * R + 0.1 * short))
    if sides:
        return np.where(ok[:, None, None], out, quads), np.where(ok, total, -np.inf), side
    return np.where(ok[:, None, None], out, quads), np.where(ok, total, -np.inf)


def card_index_quads(card_quad: np.ndarray) -> list[np.ndarray]:
    """The two index quads (upright reading order) of a card quad (TL, TR, BR, BL, long side vertical)."""
    src = np.array([[0, 0], [CARD_MM[0], 0], [CARD_MM[0], CARD_MM[1]], [0, CARD_MM[1]]], np.float32)
    out = []
    for roll in (0, 2):
        q = np.roll(card_quad, -roll, axis=0).astype(np.float32)
        M = cv2.getPerspectiveTransform(src, q)
        p = cv2.perspectiveTransform(INDEX_MM[None], M)[0]
        out.append(p.astype(np.float32))
    return out
