"""Synthetic scenes for the suited decks (island54, standard52; any deck with a face renderer): cards on a table
seen by a tablet camera, with labels, for training the next camera model.

``make_deck_scene(seed, deck, layout)`` is a pure function of its arguments and uses the same camera, tables,
light and noise as the Pirate's Bluff scenes (``vision/synth/scene.py``). Layouts:

- ``start``: 3-8 cards lying apart, any rotation (a Powderkeg dock card, cards in front of the seats);
- ``fan``: one or two fanned hands of 2-7 cards (a showdown): only the corner indices of the lower cards show;
- ``trick``: a trick pile of 2-6 cards thrown on one another, each turned, so that mostly only a corner index of
  the lower cards shows;
- ``mixed``: a fan or a trick pile and 1-3 cards apart;
- ``hand`` (not among the default ``LAYOUTS``): one hand of 5-13 cards held tight, as a bridge or whist hand is
  laid down: each card shows only a strip a little wider than its corner index, so the view of an index holds
  its neighbours' indices too.

Labels (``SuitedSceneCard``) are those of the Pirate's Bluff scenes: the card (the deck's notation, e.g.
``"K:anchors"``, ``"10H"``), its four image corners (TL, TR, BR, BL of the upright card), every index quad (TL,
TR, BR, BL of the index read upright: top-left, bottom-right, and on four-index faces top-right, bottom-left) and
the visible fraction of the card and of each index. ``scene.labels()`` gives them as JSON.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import cv2
import numpy as np

from vision.synth.scene import _apply, _camera, _card_to_table, _light, _place_start, far_scene  # noqa: F401
from vision.synth.surfaces import TRAIN_SURFACES, make_surface

LAYOUTS = ("start", "fan", "trick", "mixed")
HAND = "hand"
ALL_LAYOUTS = LAYOUTS + (HAND,)
PPM = 3.5  # face pixels per mm before the camera warp (as the Pirate's Bluff scenes)


@dataclass
class SuitedSceneCard:
    card: str  # the deck's notation
    quad: np.ndarray  # (4, 2) image corners of the card
    index_quads: list  # (4, 2) arrays, one per printed index
    card_visible: float = 1.0
    index_visible: list = field(default_factory=list)
    style: Any = None  # the face style it was drawn in (not part of the labels)

    @property
    def code(self) -> str:
        return self.card

    def to_json(self) -> dict:
        r = lambda a: [[round(float(x), 1) for x in p] for p in a]  # noqa: E731
        return {"card": self.card, "center": [round(float(v), 1) for v in self.quad.mean(0)], "quad": r(self.quad),
                "index_quads": [r(q) for q in self.index_quads], "card_visible": round(self.card_visible, 3),
                "index_visible": [round(v, 3) for v in self.index_visible]}


@dataclass
class SuitedScene:
    image: np.ndarray
    cards: list
    layout: str
    surface: str
    seed: int
    deck: str

    def labels(self) -> dict:
        return {"seed": self.seed, "deck": self.deck, "layout": self.layout, "surface": self.surface,
                "cards": [c.to_json() for c in self.cards]}


def _fan(rng, n, px, py, wmm, hmm):
    base = rng.uniform(0, 2 * math.pi)
    linear = rng.random() < 0.4
    step = math.radians(rng.uniform(9, 16))
    radius = rng.uniform(55, 110)
    spread = rng.uniform(14, 20) * wmm / 63
    out = []
    for i in range(n):
        if linear:
            a = base + rng.uniform(-0.05, 0.05)
            off = (i - (n - 1) / 2) * spread
            out.append((px + off * math.cos(base), py + off * math.sin(base), a))
        else:
            a = base + (i - (n - 1) / 2) * step
            out.append((px + radius * math.sin(a) - radius * math.sin(base),
                        py - radius * math.cos(a) + radius * math.cos(base), a))
    return out


def _hand(rng, n, px, py, wmm, hmm, strip):
    """A hand held tight: each card shows a strip of ``strip`` mm (a little wider than its corner index) beyond the
    next one, along a line or an arc."""
    base = rng.uniform(0, 2 * math.pi)
    out = []
    if rng.random() < 0.5:
        for i in range(n):
            a = base + rng.uniform(-0.04, 0.04)
            off = (i - (n - 1) / 2) * strip
            out.append((px + off * math.cos(base), py + off * math.sin(base), a))
    else:
        radius = rng.uniform(60, 150)
        step = strip / (radius + 0.4 * hmm)  # the strip measured where the index lies, near the card's top
        for i in range(n):
            a = base + (i - (n - 1) / 2) * step
            out.append((px + radius * math.sin(a) - radius * math.sin(base),
                        py - radius * math.cos(a) + radius * math.cos(base), a))
    return out


def _trick(rng, n, px, py, wmm, hmm):
    """A pile thrown from the seats: each card pushed out from the centre towards its thrower, turned."""
    base = rng.uniform(0, 2 * math.pi)
    out = []
    for i in range(n):
        d = base + 2 * math.pi * i / n + rng.uniform(-0.3, 0.3)
        r = rng.uniform(0.28, 0.45) * hmm
        out.append((px + r * math.cos(d), py + r * math.sin(d), d + math.pi / 2 + rng.uniform(-0.5, 0.5)))
    return out


def _masks(H, placements, size_mm, width, height, index_quads_mm):
    """``index_quads_mm``: each placed card's index quads in card mm."""
    # the visible fraction of each card / index (later cards lie on top), from geometry
    wmm, hmm = size_mm
    polys, iqs = [], []
    for (cx, cy, a), qs in zip(placements, index_quads_mm):
        T = H @ _card_to_table(cx, cy, a, wmm, hmm, 1.0)
        polys.append(_apply(T, np.array([[0, 0], [wmm, 0], [wmm, hmm], [0, hmm]], float)))
        iqs.append([_apply(T, q) for q in qs])
    cover = np.zeros((height, width), np.uint8)
    vis = [None] * len(polys)
    for i in range(len(polys) - 1, -1, -1):
        m = np.zeros_like(cover)
        cv2.fillConvexPoly(m, np.round(polys[i]).astype(np.int32), 1)
        area = max(1, int(m.sum()))
        iv = []
        for q in iqs[i]:
            qm = np.zeros_like(cover)
            cv2.fillConvexPoly(qm, np.round(q).astype(np.int32), 1)
            iv.append(1 - float((qm & cover).sum()) / max(1, int(qm.sum())))
        vis[i] = (1 - float((m & cover).sum()) / area, iv)
        cover |= m
    return polys, vis


def make_deck_scene(seed: int, deck: str = "island54", layout: str = "start", surfaces=TRAIN_SURFACES,
                    width: int = 1280, height: int = 720, fonts=None) -> SuitedScene:
    """One scene of ``deck`` (id or alias). ``fonts``: (family, files) pairs to set the indices in (None:
    Hershey faces). Pure function of the arguments."""
    from companion.decks import get_deck
    from vision.decks.faces import faces_for

    if layout not in ALL_LAYOUTS:
        raise ValueError(f"unknown layout {layout!r} (known: {', '.join(ALL_LAYOUTS)})")
    d = get_deck(deck)
    faces = faces_for(d)
    rng = np.random.default_rng(seed)
    surface = surfaces[rng.integers(len(surfaces))]
    img = make_surface(surface, rng, width, height).astype(np.float32)
    H = _camera(rng, width, height)
    margin = 0.03 * width
    order = iter(rng.permutation(len(d.cards)))
    styles = [faces.random_style(rng, fonts) for _ in range(2)]
    styles[1] = replace(styles[1], size=styles[0].size)  # one card size on a table
    wmm, hmm = styles[0].size_mm
    drawn: dict = {}

    def face(k, si):  # (face image, index quads) of card k in style si, drawn once
        if (k, si) not in drawn:
            drawn[k, si] = faces.render(d.cards[k], styles[si], PPM)
        return drawn[k, si]

    def inside(q):
        return ((q[:, 0] > margin).all() and (q[:, 0] < width - margin).all() and (q[:, 1] > margin).all()
                and (q[:, 1] < height - margin).all())

    def card_quad(cx, cy, a):
        return _apply(H, _apply(_card_to_table(cx, cy, a, wmm, hmm, 1.0),
                                np.array([[0, 0], [wmm, 0], [wmm, hmm], [0, hmm]], float)))

    placements: list[tuple[int, int, float, float, float]] = []  # (card, style index, cx, cy, angle)
    parts = {"start": ["start"], "fan": ["fan"], "trick": ["trick"], HAND: [HAND],
             "mixed": [("fan" if rng.random() < 0.5 else "trick"), "start"]}[layout]
    for part in parts:
        if part == "start":
            n = int(rng.integers(3, 9)) if layout == "start" else int(rng.integers(1, 4))
            taken = [np.array([p[2], p[3]]) for p in placements]
            fits = lambda p, a: inside(card_quad(p[0], p[1], a)) and all(  # noqa: E731
                np.hypot(*(p - q)) > 150 for q in taken)
            for p, a in _place_start(rng, n + len(taken), fits)[:n]:
                placements.append((int(next(order)), 0 if rng.random() < 0.85 else 1, p[0], p[1], a))
            continue
        groups = 1 if (layout != "fan" or rng.random() < 0.6) else 2
        for g in range(groups):
            n = {"fan": (2, 8), "trick": (2, 7), HAND: (5, 14)}[part]
            n = int(rng.integers(*n))
            ks = [int(next(order)) for _ in range(n)]
            si = g % 2
            if part == HAND:  # the strip each card shows: its top-left index's width and a little more
                strip = float(max(face(k, si)[1][0][:, 0].max() for k in ks)) / PPM * rng.uniform(1.02, 1.3)
            best = None
            for _try in range(80):
                px, py = rng.uniform(-350, 350, 2) * max(0.05, 1 - _try / 50)
                if _try >= 50 and _try % 10 == 0 and n > 2:
                    n -= 1
                if part == HAND:
                    cards = _hand(rng, n, px, py, wmm, hmm, strip)
                else:
                    cards = (_fan if part == "fan" else _trick)(rng, n, px, py, wmm, hmm)
                if not all(inside(card_quad(*c)) for c in cards):
                    continue
                if any(np.hypot(p[2] - px, p[3] - py) < 170 for p in placements):
                    continue
                iqs = [[q / PPM for q in face(k, si)[1]] for k in ks[:n]]
                _polys, vis = _masks(H, cards, (wmm, hmm), width, height, iqs)
                shows = min(max(iv) for _cv, iv in vis)  # every card shows a corner index
                if best is None or shows > best[0]:
                    best = (shows, list(zip(ks, cards)))
                if shows >= 0.9:
                    break
            if best is not None:
                keep = best[1]
                if best[0] < 0.9:  # drop the lower cards that show no index (the cards above them are unchanged)
                    iqs = [[q / PPM for q in face(k, si)[1]] for k, _c in keep]
                    _polys, vis = _masks(H, [c for _k, c in keep], (wmm, hmm), width, height, iqs)
                    keep = [kc for kc, (_cv, iv) in zip(keep, vis) if max(iv) >= 0.9]
                placements += [(k, si, cx, cy, a) for k, (cx, cy, a) in keep]
    img, cards = _render(img, H, placements, face, styles, d, rng, width, height)
    img = _light(img, rng)
    return SuitedScene(img, cards, layout, surface, seed, d.id)


def seat_scene(seed: int, deck: str, seats, middle=(), fonts=None, surfaces=TRAIN_SURFACES, width: int = 1280,
               height: int = 720, style=None) -> SuitedScene:
    """Cards laid in front of the seats, as at a table in play: ``seats[k]`` the cards (the deck's notation) in
    front of seat k + 1, side by side, each turned to face its player; ``middle`` cards in the middle of the table
    (a dock card). The tablet stands by seat 1: seat 1 is at 6 o'clock in the frame, the other seats follow
    clockwise (the order of play), evenly around the table. One deck, one face style (``style``: this one, e.g. a
    deck being enrolled; else a random one with ``fonts``). Pure function of the arguments; ValueError when the
    cards do not fit in the frame."""
    from companion.decks import get_deck
    from vision.decks.faces import faces_for

    d = get_deck(deck)
    faces = faces_for(d)
    rng = np.random.default_rng(seed)
    surface = surfaces[rng.integers(len(surfaces))]
    img = make_surface(surface, rng, width, height).astype(np.float32)
    drawn_style = faces.random_style(rng, fonts)  # drawn either way: a given style leaves the rest of the scene as is
    style = drawn_style if style is None else style
    wmm, hmm = style.size_mm
    keys = [[d.cards.index(d.parse(c)) for c in cs] for cs in list(seats) + [list(middle)]]
    n = len(seats)
    margin = 0.03 * width
    for attempt in range(400):
        H = _camera(rng, width, height)
        k = 1.0 - 0.35 * min(attempt, 300) / 300  # the ring closes in when the cards do not fit
        rx, ry = 250 * k, 150 * k
        placements = []
        for i, cs in enumerate(keys[:n]):
            t = math.pi / 2 + 2 * math.pi * i / n + rng.uniform(-0.08, 0.08)
            a = t - math.pi / 2 + rng.uniform(-0.25, 0.25)
            for j, key in enumerate(cs):
                off = (j - (len(cs) - 1) / 2) * (wmm + 8)
                cx = rx * math.cos(t) - off * math.sin(t)
                cy = ry * math.sin(t) + off * math.cos(t)
                placements.append((key, 0, cx, cy, a))
        for j, key in enumerate(keys[n]):
            off = (j - (len(keys[n]) - 1) / 2) * (wmm + 8)
            placements.append((key, 0, off, 0.0, rng.uniform(-0.3, 0.3)))
        quads = [_apply(H, _apply(_card_to_table(cx, cy, a, wmm, hmm, 1.0),
                                  np.array([[0, 0], [wmm, 0], [wmm, hmm], [0, hmm]], float)))
                 for _k, _s, cx, cy, a in placements]
        fits = all((q[:, 0] > margin).all() and (q[:, 0] < width - margin).all() and (q[:, 1] > margin).all()
                   and (q[:, 1] < height - margin).all() for q in quads)
        centres = [np.array(p[2:4]) for p in placements]
        apart = all(np.hypot(*(centres[i] - centres[j])) > 1.05 * min(wmm, hmm)
                    for i in range(len(centres)) for j in range(i))
        if fits and apart:
            break
    else:
        raise ValueError(f"{sum(map(len, keys))} cards for {n} seats do not fit in a {width}x{height} frame")
    drawn: dict = {}

    def face(key, si):
        if key not in drawn:
            drawn[key] = faces.render(d.cards[key], style, PPM)
        return drawn[key]

    img, cards = _render(img, H, placements, face, [style], d, rng, width, height)
    img = _light(img, rng)
    return SuitedScene(img, cards, "seats", surface, seed, d.id)


def _render(img, H, placements, face, styles, d, rng, width, height):
    """Draw the placed cards (card index, style index, table x, y mm, angle) on the table image ``img`` (float32)
    seen through ``H``, in order (later cards lie on top), with their shadows; each card's visible fraction and
    its indices' from the masks. Returns (image, SuitedSceneCards)."""
    shadow_dir = rng.uniform(-1, 1, 2) * rng.uniform(2, 9)
    shadow_k = rng.uniform(0.15, 0.5)
    cards, masks = [], []
    for k, si, cx, cy, a in placements:
        card = d.cards[k]
        st = styles[si]
        img_face, iq = face(k, si)
        fh, fw = img_face.shape[:2]
        M = H @ _card_to_table(cx, cy, a, fw / PPM, fh / PPM, PPM)
        quad = _apply(M, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], float))
        x0, y0 = np.maximum(np.floor(quad.min(0)).astype(int) - 12, 0)
        x1, y1 = np.minimum(np.ceil(quad.max(0)).astype(int) + 12, (width, height))
        Mr = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], float) @ M
        sz = (int(x1 - x0), int(y1 - y0))
        warped = cv2.warpPerspective(img_face, Mr, sz, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
        m = cv2.warpPerspective(np.full((fh, fw), 255, np.uint8), Mr, sz, flags=cv2.INTER_LINEAR)
        m = m.astype(np.float32) / 255
        Ms = np.array([[1, 0, shadow_dir[0]], [0, 1, shadow_dir[1]]], np.float32)
        sh = cv2.GaussianBlur(cv2.warpAffine(m, Ms, sz), (0, 0), 3 + abs(shadow_dir).max() / 2)
        roi = img[y0:y1, x0:x1]
        roi *= (1 - shadow_k * sh)[..., None]
        roi[:] = roi * (1 - m[..., None]) + warped.astype(np.float32) * m[..., None]
        full = np.zeros((height, width), np.uint8)
        full[y0:y1, x0:x1] = (m > 0.5).astype(np.uint8)
        masks.append(full)
        cards.append(SuitedSceneCard(d.notation(card), quad.astype(np.float32),
                                     [_apply(M, q).astype(np.float32) for q in iq], style=st))
    cover = np.zeros((height, width), np.uint8)
    for i in range(len(cards) - 1, -1, -1):
        c = cards[i]
        c.card_visible = 1 - float((masks[i] & cover).sum()) / max(1, int(masks[i].sum()))
        vis = []
        for q in c.index_quads:
            qm = np.zeros((height, width), np.uint8)
            cv2.fillConvexPoly(qm, np.round(q).astype(np.int32), 1)
            vis.append(1 - float((qm & cover).sum()) / max(1, int(qm.sum())))
        c.index_visible = vis
        cover |= masks[i]
    return img, cards


def write_scenes(out, deck: str, count: int, seed: int = 0, layouts=LAYOUTS, surfaces=TRAIN_SURFACES,
                 fonts=None, quality: int = 95) -> dict:
    """Write ``count`` scenes of ``deck`` (seeds ``seed``, ``seed + 1``, ...; layouts in turn) as JPEG files and
    one ``labels.json`` (file name -> ``scene.labels()``) into the folder ``out``, for training. Returns the
    labels."""
    import json
    from pathlib import Path

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    labels = {}
    for i in range(count):
        sc = make_deck_scene(seed + i, deck, layouts[i % len(layouts)], surfaces, fonts=fonts)
        name = f"{sc.deck}_{sc.layout}_{sc.seed}.jpg"
        cv2.imwrite(str(out / name), sc.image, [cv2.IMWRITE_JPEG_QUALITY, quality])
        labels[name] = sc.labels()
    tmp = out / "labels.json.part"
    tmp.write_text(json.dumps(labels, indent=1))
    tmp.replace(out / "labels.json")
    return labels
