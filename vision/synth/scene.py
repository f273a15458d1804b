"""Synthetic scenes: Pirate's Bluff cards on a table seen by a tablet camera, with labels.

``make_scene(seed, layout)`` is a pure function of its arguments. The camera is a pinhole at 380-620 mm
above the table, tilted 0-35 degrees off vertical, focal length ~1000 px for 1280x720 (cards come out
~100-170 px wide). Layouts: ``"start"`` (3-8 cards lying apart, any rotation), ``"fan"`` (one or two fanned
showdown hands of 2-6 cards, only the corner indices of the lower cards show) and ``"mixed"``.

Labels (``SceneCard``): the card, its four image corners (TL, TR, BR, BL of the upright card), both index
quads (TL, TR, BR, BL of each index read upright) and the visible fraction of the card and of each index.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from vision.decks.render import random_style, render_card
from vision.synth.surfaces import TRAIN_SURFACES, make_surface

LETTERS = "ABCDEFGH"


@dataclass
class SceneCard:
    rank: int
    letter: str
    quad: np.ndarray  # (4, 2) image points of the card corners
    index_quads: list  # two (4, 2) arrays
    card_visible: float = 1.0
    index_visible: list = field(default_factory=lambda: [1.0, 1.0])

    @property
    def code(self) -> str:
        return f"{self.rank}{self.letter}"


@dataclass
class Scene:
    image: np.ndarray
    cards: list
    layout: str
    surface: str
    seed: int


def _camera(rng, w, h):
    f = rng.uniform(0.72, 0.86) * w
    tilt = math.radians(rng.uniform(0, 35))
    yaw = rng.uniform(-math.pi, math.pi) * 0.1
    D = rng.uniform(380, 620) * (w / 1280) / (f / (0.79 * w)) * (f / 1000) * (1000 / (0.79 * 1280))
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    ct, st = math.cos(tilt), math.sin(tilt)
    Rx = np.array([[1, 0, 0], [0, ct, -st], [0, st, ct]])
    cy_, sy_ = math.cos(yaw), math.sin(yaw)
    Rz = np.array([[cy_, -sy_, 0], [sy_, cy_, 0], [0, 0, 1]])
    R = Rx @ Rz
    H = K @ np.column_stack([R[:, 0], R[:, 1], np.array([0, 0, D])])
    return H / H[2, 2]


def _apply(H, pts):
    p = np.column_stack([pts, np.ones(len(pts))]) @ H.T
    return p[:, :2] / p[:, 2:3]


def _card_to_table(cx, cy, ang, wmm, hmm, ppm):
    """3x3 from card-image pixels to table mm (card centre at cx, cy, rotated by ang radians)."""
    S = np.array([[1 / ppm, 0, -wmm / 2], [0, 1 / ppm, -hmm / 2], [0, 0, 1]])
    c, s = math.cos(ang), math.sin(ang)
    R = np.array([[c, -s, cx], [s, c, cy], [0, 0, 1]])
    return R @ S


def _place_start(rng, n, inside):
    """Up to ``n`` card centres (table mm) at least 112 mm apart, each with the rotation (radians) that
    ``inside(p, angle)`` checked: the card is placed at exactly the angle it was checked at."""
    out = []
    for _ in range(400):
        if len(out) == n:
            break
        p = rng.uniform(-400, 400, 2)
        a = rng.uniform(0, 2 * math.pi)
        if not inside(p, a):
            continue
        if all(np.hypot(*(p - q)) > 112 for q, _a in out):
            out.append((p, a))
    return out


def make_scene(seed: int, layout: str = "start", surfaces=TRAIN_SURFACES, width: int = 1280, height: int = 720,
               fonts=None, deck_style=None) -> Scene:
    """``fonts``: (family, files) pairs (vision.fonts.split_fonts) the decks' faces are set in, with many index
    layouts; None: the project's own Hershey faces with the contract's index layout (the original scenes).
    ``deck_style``: every card in this one face (a given deck, e.g. an enrolled one)."""
    rng = np.random.default_rng(seed)
    surface = surfaces[rng.integers(len(surfaces))]
    img = make_surface(surface, rng, width, height).astype(np.float32)
    H = _camera(rng, width, height)
    margin = 0.03 * width

    def quad_inside(q):
        return (q[:, 0] > margin).all() and (q[:, 0] < width - margin).all() and (q[:, 1] > margin).all() and (q[:, 1] < height - margin).all()

    deck = [(r, l) for r in range(9) for l in LETTERS]
    order = rng.permutation(len(deck))
    di = iter(order)
    # A table has one deck style (or two when a mixed/home-made deck is on the table).
    styles = [random_style(rng, fonts) for _ in range(2)]
    if deck_style is not None:
        styles = [deck_style, deck_style]
    ppm = 3.5
    placements = []  # (rank, letter, style, cx, cy, ang)
    if layout == "mixed":
        parts = ["fan", "start"]
    else:
        parts = [layout]
    for part in parts:
        if part == "start":
            n = int(rng.integers(3, 9)) if layout == "start" else int(rng.integers(1, 4))
            size = styles[0].size_mm

            def inside(p, a, size=size):
                T = _card_to_table(p[0], p[1], a, size[0], size[1], 1.0)
                q = _apply(H, _apply(T, np.array([[0, 0], [size[0], 0], [size[0], size[1]], [0, size[1]]], float)))
                return quad_inside(q)

            taken = [np.array([pl[3], pl[4]]) for pl in placements]
            fits = lambda p, a: inside(p, a) and all(np.hypot(*(p - q)) > 150 for q in taken)  # noqa: E731
            for p, a in _place_start(rng, n + len(taken), fits)[:n]:
                r, l = deck[next(di)]
                st = styles[0] if rng.random() < 0.85 else styles[1]
                placements.append((r, l, st, p[0], p[1], a))
        else:
            hands = 1 if (layout == "mixed" or rng.random() < 0.6) else 2
            for hand in range(hands):
                n = int(rng.integers(2, 7))
                st = styles[hand % 2]
                wmm, hmm = st.size_mm
                for _try in range(100):
                    # the table origin is under the image centre: later tries move the hand towards it and
                    # drop cards, so a hand always fits (a wide fan near a low camera may not fit at the edge)
                    px, py = rng.uniform(-350, 350, 2) * max(0.05, 1 - _try / 60)
                    if _try >= 60 and _try % 10 == 0 and n > 2:
                        n -= 1
                    base = rng.uniform(0, 2 * math.pi)
                    linear = rng.random() < 0.4
                    step = math.radians(rng.uniform(9, 16))
                    radius = rng.uniform(55, 110)
                    spread = rng.uniform(15, 22)
                    cards = []
                    for i in range(n):
                        if linear:
                            a = base + rng.uniform(-0.05, 0.05)
                            off = (i - (n - 1) / 2) * spread
                            cx = px + off * math.cos(base)
                            cy = py + off * math.sin(base)
                        else:
                            a = base + (i - (n - 1) / 2) * step
                            # rotate about a pivot `radius` mm below the card centre
                            cx = px + radius * math.sin(a) - radius * math.sin(base)
                            cy = py - radius * math.cos(a) + radius * math.cos(base)
                        cards.append((cx, cy, a))
                    ok = True
                    for cx, cy, a in cards:
                        T = _card_to_table(cx, cy, a, wmm, hmm, 1.0)
                        q = _apply(H, _apply(T, np.array([[0, 0], [wmm, 0], [wmm, hmm], [0, hmm]], float)))
                        ok &= quad_inside(q)
                    for pl in placements:
                        ok &= np.hypot(pl[3] - px, pl[4] - py) > 170
                    if ok:
                        for cx, cy, a in cards:
                            r, l = deck[next(di)]
                            placements.append((r, l, st, cx, cy, a))
                        break
    # Render, in placement order (later cards lie on top).
    masks = []
    cards = []
    shadow_dir = rng.uniform(-1, 1, 2) * rng.uniform(2, 9)
    shadow_k = rng.uniform(0.15, 0.5)
    for r, l, st, cx, cy, a in placements:
        face, iq = render_card(r, l, st, ppm)
        fh, fw = face.shape[:2]
        T = _card_to_table(cx, cy, a, fw / ppm, fh / ppm, ppm)
        M = H @ T
        corners = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], float)
        quad = _apply(M, corners)
        x0, y0 = np.floor(quad.min(0)).astype(int) - 12
        x1, y1 = np.ceil(quad.max(0)).astype(int) + 12
        x0, y0 = max(x0, 0), max(y0, 0)
        x1, y1 = min(x1, width), min(y1, height)
        Tr = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], float)
        Mr = Tr @ M
        sz = (x1 - x0, y1 - y0)
        warped = cv2.warpPerspective(face, Mr, sz, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        m = cv2.warpPerspective(np.full((fh, fw), 255, np.uint8), Mr, sz, flags=cv2.INTER_LINEAR).astype(np.float32) / 255
        # shadow
        Ms = np.array([[1, 0, shadow_dir[0]], [0, 1, shadow_dir[1]]], np.float32)
        sh = cv2.GaussianBlur(cv2.warpAffine(m, Ms, sz), (0, 0), 3 + abs(shadow_dir).max() / 2)
        roi = img[y0:y1, x0:x1]
        roi *= (1 - shadow_k * sh)[..., None]
        roi[:] = roi * (1 - m[..., None]) + warped.astype(np.float32) * m[..., None]
        full = np.zeros((height, width), np.uint8)
        full[y0:y1, x0:x1] = (m > 0.5).astype(np.uint8)
        masks.append(full)
        cards.append(SceneCard(r, l, quad.astype(np.float32), [_apply(M, q).astype(np.float32) for q in iq]))
    # Visibility from occlusion by later cards.
    cover = np.zeros((height, width), np.uint8)
    for i in range(len(cards) - 1, -1, -1):
        c = cards[i]
        area = max(1, int(masks[i].sum()))
        c.card_visible = 1 - float((masks[i] & cover).sum()) / area
        vis = []
        for q in c.index_quads:
            qm = np.zeros((height, width), np.uint8)
            cv2.fillConvexPoly(qm, np.round(q).astype(np.int32), 1)
            qa = max(1, int(qm.sum()))
            vis.append(1 - float((qm & cover).sum()) / qa)
        c.index_visible = vis
        cover |= masks[i]
    img = _light(img, rng)
    return Scene(img, cards, layout, surface, seed)


def _light(img, rng):
    h, w = img.shape[:2]
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    g = 1 + rng.uniform(-0.35, 0.35) * (xs / w - 0.5) + rng.uniform(-0.35, 0.35) * (ys / h - 0.5)
    for _ in range(int(rng.integers(0, 3))):
        cx, cy, s = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(150, 600)
        g += rng.uniform(-0.3, 0.3) * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * s * s))
    tint = np.array([1, 1, 1], np.float32) + rng.uniform(-0.12, 0.12) * np.array([1, 0, -1], np.float32)
    img = img * g[..., None] * tint * rng.uniform(0.65, 1.1)
    if rng.random() < 0.6:  # glare spot
        cx, cy, s = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(25, 110)
        img += rng.uniform(40, 140) * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * s * s))[..., None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    if rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.1))
    elif rng.random() < 0.3:
        k = int(rng.integers(3, 6))
        ker = np.zeros((k, k), np.float32)
        ker[k // 2, :] = 1 / k
        M = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1)
        ker = cv2.warpAffine(ker, M, (k, k))
        img = cv2.filter2D(img, -1, ker / max(ker.sum(), 1e-6))
    img = img.astype(np.float32) + rng.normal(0, rng.uniform(0, 7), img.shape)
    img = np.clip(img, 0, 255).astype(np.uint8)
    q = int(rng.integers(45, 96))
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR)


def far_scene(scene, factor: float = 2.0):
    """``scene`` (a ``Scene`` or a ``vision.synth.suited.SuitedScene``) as a camera ``factor`` times further from the
    table sees it: the frame shrunk ``factor`` times and set in the middle of a fresh stretch of the same kind of
    table, its labels moved with it (what shows of each card is unchanged). The fresh table is drawn ``factor``
    times larger and shrunk the same way, so its weave, grain, stripes and dots are as far away as the shrunk
    frame's (drawn at the frame's own size, its pattern would be ``factor`` times coarser than the camera sees it).
    Pure function of the scene."""
    h, w = scene.image.shape[:2]
    sw, sh = int(round(w / factor)), int(round(h / factor))
    big = make_surface(scene.surface, np.random.default_rng(scene.seed), int(round(w * factor)), int(round(h * factor)))
    canvas = cv2.resize(np.clip(big, 0, 255).astype(np.uint8), (w, h), interpolation=cv2.INTER_AREA)
    x0, y0 = (w - sw) // 2, (h - sh) // 2
    canvas[y0:y0 + sh, x0:x0 + sw] = cv2.resize(scene.image, (sw, sh), interpolation=cv2.INTER_AREA)
    k, off = np.array([sw / w, sh / h]), np.array([x0, y0], float)
    move = lambda q: np.asarray(q, float) * k + off  # noqa: E731
    cards = [replace(c, quad=move(c.quad), index_quads=[move(q) for q in c.index_quads]) for c in scene.cards]
    return replace(scene, image=canvas, cards=cards)
