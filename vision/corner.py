"""The corner reader: reads a card's rank and letter from a whole corner region, wherever the index sits in it.

The first reader (``index_reader``) reads a fixed 7.6 x 16.2 mm box where our own renderer puts the index. Real
decks put it elsewhere: letter beside or above the rank, bigger or smaller, further from the edge, a big centre
index with a small corner one. This reader takes the card's whole corner region (``CORNER_FRAC`` of the card's
width and height from a corner, as the card's outline puts it: ~26 x 35 mm of a poker card) and finds the index
in it itself (a CNN whose last features are pooled over the whole region). Outputs: rank 0-8 or 9 = "no index
upright in this corner" (a corner without an index, or the card read the wrong way round), letter A-H, and the
pooled features (``feat``: deck enrollment builds its per-deck head on them, see vision/enroll.py).

Training data (``gen_corner_crops``): single cards, each rendered in a random face of the ``train`` font split
(vision/fonts.py; 15 % Hershey or pen faces, and a share of the project's own Hershey-only faces), random layout,
index size and margin, paper and ink; put on a random training surface through a random perspective (card
90-190 px wide, turned any way, up to ~35 degrees of tilt), lit unevenly, glare, blur, noise, JPEG; then cropped
with the runtime's own crop code from an outline with an edge snapper's typical error. Per card: the two index
corners (labelled) and the two corners a card read the wrong way round would give (labelled 9). Cards made for
the middle views (``--middle-cards``) add the card's middle as ``Scanner.scan`` step 3 reads it
(``centre_region``), both ways up: labelled with the card's code when the card prints a big index there, the right
way up ("centre" layout), and 9 otherwise (the middle of any other card; the big index upside down, unless the
code reads the same turned round, as 0H / 1H / 8H can).

Calibration: one temperature (rank and letter logits divided by T) fitted on crops of the ``calibration`` font
split only; the reliability table of the calibrated reader is written beside the model.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import cv2
import numpy as np

CORNER_FRAC = (0.42, 0.40)  # of the card's (width, height), from the corner
CORNER_W, CORNER_H = 42, 56
LETTERS = "ABCDEFGH"


def corner_regions(card_quad: np.ndarray) -> list[np.ndarray]:
    """The two index corner regions (TL, TR, BR, BL as read upright) of a card quad (TL, TR, BR, BL, long side
    vertical): the top-left one and the bottom-right one (turned 180 degrees)."""
    fx, fy = CORNER_FRAC
    unit = np.array([[0, 0], [fx, 0], [fx, fy], [0, fy]], np.float32)
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    out = []
    for roll in (0, 2):
        q = np.roll(card_quad, -roll, axis=0).astype(np.float32)
        M = cv2.getPerspectiveTransform(src, q)
        out.append(cv2.perspectiveTransform(unit[None], M)[0].astype(np.float32))
    return out


FAN_REGION = (2.0, 0.115, 0.086)  # a lone index box's region: its height x this, the box this far in (see below)


def index_region(index_quad: np.ndarray) -> np.ndarray:
    """The corner region a lone index box (TL, TR, BR, BL as read upright: a fanned hand's) would sit in: as tall
    as FAN_REGION[0] index heights, the reader's aspect, the box's top-left corner FAN_REGION[1:] of the region in
    from the region's (where a printed index sits in a card's corner region). Chosen on the calibration font split's
    fan scenes: read at the bar, 2.3 times as many indices as the box grown about its centre, none wrong."""
    sy, ox, oy = FAN_REGION
    q = np.asarray(index_quad, np.float32)
    u, v = q[1] - q[0], q[3] - q[0]
    h = float(np.linalg.norm(v))
    u, v = u / max(float(np.linalg.norm(u)), 1e-6), v / max(h, 1e-6)
    H = sy * h
    W = H * CORNER_W / CORNER_H
    tl = q[0] - u * ox * W - v * oy * H
    return np.array([tl, tl + u * W, tl + u * W + v * H, tl + v * H], np.float32)


CENTRE_REGION = (2.1, 0.4, 0.4)  # a card's middle, read as a corner region: its size in corner regions, the card's
# centre this far into it (x, y). Chosen on the calibration font split's "centre" layout cards (big index in the
# middle, small ones in the corners): of a 5 x 3 x 3 grid (1.5-2.8 x 0.2-0.4 x 0.2-0.4), the most read at 0.995.


def centre_region(card_quad: np.ndarray) -> np.ndarray:
    """The middle of a card (TL, TR, BR, BL as read upright) as the corner reader reads it: a region
    CENTRE_REGION[0] corner regions in size, the card's centre CENTRE_REGION[1:] of the way into it, so that a big
    index printed in the middle of the card (a UNO card's numeral) sits where a corner region's index sits. It
    reaches past the card's edges (what lies there is read as the card's surroundings, as at a corner)."""
    s, fx, fy = CENTRE_REGION
    w, h = s * CORNER_FRAC[0], s * CORNER_FRAC[1]
    x0, y0 = 0.5 - fx * w, 0.5 - fy * h
    unit = np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], np.float32)
    src = np.array([[0, 0], [1, 0], [1, 1], [0, 1]], np.float32)
    M = cv2.getPerspectiveTransform(src, np.asarray(card_quad, np.float32))
    return cv2.perspectiveTransform(unit[None], M)[0].astype(np.float32)


def grown_from_corner(region: np.ndarray, g: float) -> np.ndarray:
    """A corner region (TL at the card's corner) grown ``g`` times from the card's corner."""
    return (region - region[0]) * g + region[0]


def scaled_about_centre(quad: np.ndarray, g: float) -> np.ndarray:
    """A quad (an index box) scaled ``g`` times about its centre."""
    c = quad.mean(0)
    return (quad - c) * g + c


def turned_about_centre(quad: np.ndarray, deg: float) -> np.ndarray:
    """A box (TL, TR, BR, BL) turned ``deg`` degrees about its centre: the same size, its sides square."""
    from vision.geometry import rect_corners

    q = np.asarray(quad, np.float32)
    u, v = q[1] - q[0], q[3] - q[0]
    cx, cy = q.mean(0)
    return rect_corners(cx, cy, float(np.linalg.norm(u)), float(np.linalg.norm(v)),
                        math.atan2(float(u[1]), float(u[0])) + math.radians(deg)).astype(np.float32)


def mix_views(probs, p_none) -> np.ndarray:
    """Several views of the same printed index (the same pixels, framed differently) mixed into one distribution,
    each weighed by how sure it is that it sees an index there (1 - P(no index)): a view framed off the index
    weighs little. A mixture, not a product: looking again never makes a reading surer than its surest view."""
    w = 1.0 - np.asarray(p_none) + 1e-3
    return (w[:, None] * np.stack(probs)).sum(0) / w.sum()


def crop_region(gray: np.ndarray, quad: np.ndarray) -> np.ndarray:
    dst = np.array([[0, 0], [CORNER_W, 0], [CORNER_W, CORNER_H], [0, CORNER_H]], np.float32)
    M = cv2.getPerspectiveTransform(quad.astype(np.float32), dst)
    return cv2.warpPerspective(gray, M, (CORNER_W, CORNER_H), flags=cv2.INTER_AREA if _shrink(quad) else cv2.INTER_LINEAR,
                               borderMode=cv2.BORDER_REPLICATE)


def _shrink(quad) -> bool:
    return float(np.linalg.norm(quad[1] - quad[0])) > 1.6 * CORNER_W


def normalize(crops: np.ndarray) -> np.ndarray:
    """uint8 (N, H, W) -> float32 (N, 1, H, W) in [-1, 1], contrast-stretched per crop (2nd-98th percentile).
    Colour crops (N, H, W, 3) -> (N, 3, H, W), stretched by one range over all three channels (the hue stays)."""
    from vision.geometry import stretch_range

    if len(crops) > NORMALIZE_BLOCK:  # a training set: block by block into one array (the same numbers, a fraction
        # of the memory: the per-crop histogram alone would take 8 bytes per pixel of the whole set)
        out = np.empty((len(crops), 1 if crops.ndim == 3 else crops.shape[3], *crops.shape[1:3]), np.float32)
        for i in range(0, len(crops), NORMALIZE_BLOCK):
            out[i : i + NORMALIZE_BLOCK] = normalize(crops[i : i + NORMALIZE_BLOCK])
        return out
    lo, hi = stretch_range(crops)
    if crops.dtype == np.uint8 and len(crops):
        # a uint8 crop has 256 values: each crop's 256 results are worked out once (in float64 as below, then float32)
        # and looked up, the same numbers as working every pixel, in a third of the time
        n = len(crops)
        v = np.arange(256, dtype=np.float64)[None]
        lut = (np.clip((v - lo[:, None]) / np.maximum(hi - lo, 8.0)[:, None], 0, 1) * 2 - 1).astype(np.float32)
        out = np.empty(crops.shape, np.float32)
        for i in range(n):
            out[i] = cv2.LUT(crops[i], lut[i]).reshape(crops.shape[1:])
        return out[:, None] if out.ndim == 3 else np.ascontiguousarray(out.transpose(0, 3, 1, 2))
    c = crops.astype(np.float32)
    shape = (-1,) + (1,) * (c.ndim - 1)
    c = (c - lo.reshape(shape)) / np.maximum(hi - lo, 8.0).reshape(shape)
    c = np.clip(c, 0, 1) * 2 - 1
    return (c[:, None] if c.ndim == 3 else c.transpose(0, 3, 1, 2)).astype(np.float32)


NORMALIZE_BLOCK = 8192  # crops normalized at a time


# ------------------------------------------------------------------ data
LOWER_SHARE = 0.1  # training cards whose letter is drawn as a small letter, where the face draws a-h
RESHAPE_SHARE = 0.0  # training cards whose glyphs are redrawn at random (vision.decks.render.reshaped)
# Focus (session 61, off by default): FOCUS_SHARE of the train split's cards draw their rank from FOCUS_RANKS, and
# (independently) FOCUS_SHARE draw their letter from FOCUS_LETTERS (indices): ranks and letters the reader confuses
FOCUS_RANKS: tuple = ()
FOCUS_LETTERS: tuple = ()
FOCUS_SHARE = 0.3


def focus_codes(ranks: str | None, letters: str | None) -> tuple[tuple, tuple]:
    """``--focus-ranks`` ("0,8,3,2") and ``--focus-letters`` ("A,H") as (rank indices, letter indices); ValueError
    (one line) for anything else: an empty item, a rank not 0-8, a letter not A-H, one named twice."""
    out = []
    for text, allowed, what in ((ranks, "012345678", "rank (0-8)"), (letters, LETTERS, "letter (A-H)")):
        if text is None:
            out.append(())
            continue
        items = text.split(",")
        bad = next((t for t in items if len(t) != 1 or t not in allowed), None)
        if bad is not None:
            raise ValueError(f"{bad!r}: not a {what}")
        if len(set(items)) != len(items):
            raise ValueError(f"{text!r}: named twice")
        out.append(tuple(allowed.index(t) for t in items))
    return out[0], out[1]


def _card_sample(rng, fonts, legacy_share: float = 0.2, lower_share: float = 0.0, reshape_share: float = 0.0,
                 focus: tuple = ((), ()), focus_share: float = 0.0):
    """One synthetic card in a camera's view: (gray image, true card quad, rank, letter index, layout).
    ``lower_share``: that share of the cards have their letter drawn as a small letter ("a" for A) where the face
    draws small letters (``vision.fonts.draws_lower``; Hershey and pen faces always do); 0 draws nothing more from
    the generators, so the cards are the same as without it. ``reshape_share``: that share of the cards have their
    glyphs redrawn (``vision.decks.render.reshaped``); 0 draws nothing more either. ``focus`` (rank indices, letter
    indices): ``focus_share`` of the cards draw their rank from the first, and independently that share their letter
    from the second (where given); an empty focus draws nothing more."""
    from dataclasses import replace

    from vision.decks.render import random_style, render_card
    from vision.fonts import draws_lower

    style_rng = np.random.default_rng(int(rng.integers(1 << 62)))
    style = random_style(style_rng, None if rng.random() < legacy_share else fonts)
    if lower_share and style_rng.random() < lower_share and (style.font_path is None or draws_lower(style.font_path)):
        style = replace(style, lower_letter=True)
    if reshape_share and style_rng.random() < reshape_share:
        style = replace(style, reshape=True)
    rank, lt = int(rng.integers(9)), int(rng.integers(8))
    f_ranks, f_letters = focus
    if f_ranks and focus_share and rng.random() < focus_share:
        rank = int(f_ranks[int(rng.integers(len(f_ranks)))])
    if f_letters and focus_share and rng.random() < focus_share:
        lt = int(f_letters[int(rng.integers(len(f_letters)))])
    face, _ = render_card(rank, LETTERS[lt], style, 4.0)
    img, quad, _M = camera_view(rng, face)
    gray = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    return gray, quad, rank, lt, style.layout


def camera_view(rng, face: np.ndarray, surfaces=None):
    """A rendered face (BGR) put on a random training surface through a random perspective (card 90-190 px
    wide, any turn, up to ~35 degrees of tilt), lit unevenly, glare, shadow, blur, noise and JPEG: (BGR image,
    the card's quad in it, the face -> image homography)."""
    from vision.synth.surfaces import TRAIN_SURFACES, make_surface

    surfaces = TRAIN_SURFACES if surfaces is None else surfaces
    fh, fw = face.shape[:2]
    wpx = rng.uniform(90, 190)
    hpx = wpx * fh / fw
    S = int(max(wpx, hpx) * 1.6) + 20
    bg = make_surface(surfaces[rng.integers(len(surfaces))], rng, S, S).astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    c, s = math.cos(ang), math.sin(ang)
    base = np.array([[-wpx / 2, -hpx / 2], [wpx / 2, -hpx / 2], [wpx / 2, hpx / 2], [-wpx / 2, hpx / 2]])
    # perspective: a tilted camera shrinks the far side (up to ~30 %), plus a little shear
    tilt = rng.uniform(0, 0.3)
    tdir = rng.uniform(0, 2 * math.pi)
    dvec = np.array([math.cos(tdir), math.sin(tdir)])
    k = 1 - tilt * (base @ dvec) / max(wpx, hpx)
    pts = base * k[:, None]
    pts = pts @ np.array([[c, s], [-s, c]]) + S / 2 + rng.normal(0, 0.015 * wpx, (4, 2))
    quad = pts.astype(np.float32)
    src = np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float32)
    M = cv2.getPerspectiveTransform(src, quad)
    warped = cv2.warpPerspective(face, M, (S, S), flags=cv2.INTER_AREA).astype(np.float32)
    mask = cv2.warpPerspective(np.full((fh, fw), 1.0, np.float32), M, (S, S), flags=cv2.INTER_LINEAR)
    img = bg * (1 - mask[..., None]) + warped * mask[..., None]
    # occasionally another card's edge lies near (a neighbour in a fan or on the table)
    ys, xs = np.mgrid[0:S, 0:S].astype(np.float32)
    g = 1 + rng.uniform(-0.35, 0.35) * (xs / S - 0.5) + rng.uniform(-0.35, 0.35) * (ys / S - 0.5)
    tint = 1 + rng.uniform(-0.12, 0.12) * np.array([1, 0, -1], np.float32)
    img = img * g[..., None] * tint * rng.uniform(0.6, 1.1)
    if rng.random() < 0.35:
        cx, cy, r = rng.uniform(0, S), rng.uniform(0, S), rng.uniform(10, 60)
        img += rng.uniform(40, 150) * np.exp(-((xs - cx) ** 2 + (ys - cy) ** 2) / (2 * r * r))[..., None]
    if rng.random() < 0.3:  # a shadow band
        a, off = rng.uniform(0, math.pi), rng.uniform(-S / 3, S / 3)
        band = (xs - S / 2) * math.cos(a) + (ys - S / 2) * math.sin(a) > off
        img *= np.where(band, rng.uniform(0.55, 0.9), 1.0)[..., None]
    img = np.clip(img, 0, 255).astype(np.uint8)
    u = rng.random()
    if u < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 1.4))
    elif u < 0.7:
        kk = int(rng.integers(3, 7))
        ker = np.zeros((kk, kk), np.float32)
        ker[kk // 2, :] = 1 / kk
        R = cv2.getRotationMatrix2D((kk / 2 - 0.5, kk / 2 - 0.5), rng.uniform(0, 180), 1)
        ker = cv2.warpAffine(ker, R, (kk, kk))
        img = cv2.filter2D(img, -1, ker / max(ker.sum(), 1e-6))
    img = np.clip(img.astype(np.float32) + rng.normal(0, rng.uniform(0, 8), img.shape), 0, 255).astype(np.uint8)
    ok, buf = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 96))])
    return cv2.imdecode(buf, cv2.IMREAD_COLOR), quad, M


def _noisy(quad, rng):
    short = min(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[3] - quad[0]))
    sd = 0.025 if rng.random() < 0.85 else 0.06
    return (quad + rng.normal(0, sd * short, (4, 2))).astype(np.float32)


SYMMETRIC_CODES = {(0, 7), (1, 7), (8, 7)}  # (rank, letter): "0H", "1H", "8H" can read the same turned round


def _crops_chunk(args):
    seed, n, split, middle = args
    from vision.fonts import split_fonts

    fonts = split_fonts(split)
    rng = np.random.default_rng(seed)
    lower = LOWER_SHARE if split == "train" else 0.0  # calibration crops stay the faces as their families draw them
    reshape = RESHAPE_SHARE if split == "train" else 0.0
    focus = (FOCUS_RANKS, FOCUS_LETTERS) if split == "train" else ((), ())
    C, R, L = [], [], []
    for _ in range(n):
        gray, quad, rank, lt, layout = _card_sample(rng, fonts, lower_share=lower, reshape_share=reshape, focus=focus,
                                                    focus_share=FOCUS_SHARE)
        q = _noisy(quad, rng)
        for reg in corner_regions(q):
            C.append(crop_region(gray, reg))
            R.append(rank)
            L.append(lt)
        for reg in corner_regions(np.roll(q, -1, axis=0)):  # read the wrong way round: no upright index
            C.append(crop_region(gray, reg))
            R.append(9)
            L.append(-100)
        if middle:  # the card's middle, both ways up (Scanner.scan step 3)
            big = layout == "centre"
            for turn in (0, 2):
                if big and turn and (rank, lt) in SYMMETRIC_CODES:
                    continue
                C.append(crop_region(gray, centre_region(np.roll(q, -turn, axis=0))))
                R.append(rank if big and not turn else 9)
                L.append(lt if big and not turn else -100)
    return np.stack(C), np.array(R, np.int64), np.array(L, np.int64)


def gen_corner_crops(n_cards: int, seed: int, split: str = "train", workers: int = 1, middle: bool = False):
    """Corner crops of ``n_cards`` synthetic cards in faces of font split ``split``: (X uint8 [N,H,W], R, L).
    ``middle``: each card's middle both ways up too (see the module's text)."""
    chunks = [(seed * 1000 + k, min(500, n_cards - k * 500), split, middle) for k in range((n_cards + 499) // 500)]
    return run_chunks([(_crops_chunk, c) for c in chunks], workers)


def _run_chunk(job):
    f, args = job
    return f(args)


def run_chunks(jobs, workers: int = 1):
    """Labelled views made chunk by chunk: ``jobs`` is a list of (function, its argument), each giving (views, rank
    labels, letter or suit labels); run in a pool of ``workers`` spawned processes where there is more than one
    worker and chunk, and joined in the jobs' order."""
    if workers > 1 and len(jobs) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_run_chunk, jobs)
    else:
        parts = [_run_chunk(j) for j in jobs]
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


# ------------------------------------------------------------------ model
def make_net(in_ch: int = 1, n_rank: int = 10, n_letter: int = 8, extra: int = 0):
    """The corner reader's CNN: ``in_ch`` input channels (1: grey, 3: colour), heads of ``n_rank`` classes (the
    last one "no index upright here") and ``n_letter`` classes (the Pirate's Bluff letter, or a deck's suit).
    ``extra``: that many more convolutions at each of the two smallest scales (14 x 10 and 7 x 5), where a block
    costs little; ``net.extra`` lists their places in ``net.f`` (``load_onnx_weights`` can start them from a
    reader without them)."""
    import torch
    import torch.nn as nn

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1, bias=False), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class CornerReader(nn.Module):
        def __init__(self):
            super().__init__()
            layers = [block(in_ch, 16), block(16, 16), nn.MaxPool2d(2),  # 28 x 21
                      block(16, 32), block(32, 32), nn.MaxPool2d(2),  # 14 x 10
                      block(32, 64), block(64, 64)]
            self.extra = []
            for _ in range(extra):
                self.extra.append(len(layers))
                layers.append(block(64, 64))
            layers += [nn.MaxPool2d(2), block(64, 128)]  # 7 x 5
            for _ in range(extra):
                self.extra.append(len(layers))
                layers.append(block(128, 128))
            self.f = nn.Sequential(*layers)
            self.drop = nn.Dropout(0.1)
            self.rank = nn.Linear(256, n_rank)
            self.letter = nn.Linear(256, n_letter)

        def forward(self, x):
            z = self.f(x)
            feat = torch.cat([z.mean((2, 3)), z.amax((2, 3))], 1)  # the index can be anywhere in the region
            h = self.drop(feat)
            return self.rank(h), self.letter(h), feat

    return CornerReader()


BASE_CONVS = 7  # make_net's convolutions with extra=0


def reader_extra(path: Path) -> int:
    """``make_net``'s ``extra`` of a saved reader, an exported ``.onnx`` or a state dict (``.pt``), from its
    number of convolutions."""
    path = Path(path)
    try:
        if path.suffix == ".onnx":
            import onnx

            return _extra_of(sum(node.op_type == "Conv" for node in onnx.load(str(path)).graph.node))
        import torch

        return state_extra(torch.load(str(path), map_location="cpu"))
    except ValueError as e:
        raise ValueError(f"{path}: {e}") from None


def state_extra(sd) -> int:
    """``make_net``'s ``extra`` of a reader's state dict, from its convolutions (``f.<k>.0.weight``, 4-dimensional);
    ValueError for anything that is no such state dict."""
    if not isinstance(sd, dict) or not all(hasattr(v, "dim") for v in sd.values()):
        raise ValueError("not a state dict of tensors")
    return _extra_of(sum(1 for k, v in sd.items() if k.startswith("f.") and k.endswith(".0.weight") and v.dim() == 4))


def _extra_of(n: int) -> int:
    if n < BASE_CONVS or (n - BASE_CONVS) % 2:
        raise ValueError(f"{n} convolutions is no corner reader")
    return (n - BASE_CONVS) // 2


def _start_as_identity(blk) -> None:
    """A ``make_net`` block (convolution, BatchNorm, ReLU) that passes its input on: a Dirac convolution and a fresh
    BatchNorm (in eval mode the identity to its eps; the ReLU keeps the non-negative input it gets as it is)."""
    import torch

    with torch.no_grad():
        torch.nn.init.dirac_(blk[0].weight)
        blk[1].reset_parameters()  # weight 1, bias 0 and the running statistics reset


def load_state_deeper(net, sd: dict) -> None:
    """``net`` (``make_net``) from the state dict ``sd`` of a reader like it with as many or fewer extra
    convolutions: each of sd's convolution blocks goes to the same place in its scale's run of blocks, the ones
    ``net`` has beyond them start as the identity (a Dirac convolution and a fresh BatchNorm: in eval mode the deeper
    reader reads as sd's does, to the BatchNorm's eps, and training takes it on from there), the heads are sd's.
    ValueError when sd is no such reader or is the deeper of the two."""
    import torch

    def runs(f):  # the convolution blocks of each scale, in order (a MaxPool ends a scale)
        out = [[]]
        for m in f:
            if isinstance(m, torch.nn.MaxPool2d):
                out.append([])
            else:
                out[-1].append(m)
        return out

    have, want = state_extra(sd), len(net.extra) // 2
    if have > want:
        raise ValueError(f"a reader with {have} extra convolutions per small scale does not fit one with {want}")
    shallow = make_net(net.f[0][0].in_channels, net.rank.out_features, net.letter.out_features, have)
    try:
        shallow.load_state_dict(sd)
    except RuntimeError as e:  # a state dict of another shape (heads, input channels)
        raise ValueError(f"not a reader of this shape ({str(e).splitlines()[0]})") from e
    with torch.no_grad():
        for deep_run, shallow_run in zip(runs(net.f), runs(shallow.f)):
            for k, blk in enumerate(deep_run):
                if k < len(shallow_run):
                    blk.load_state_dict(shallow_run[k].state_dict())
                else:
                    _start_as_identity(blk)
        net.rank.load_state_dict(shallow.rank.state_dict())
        net.letter.load_state_dict(shallow.letter.state_dict())


def _augment(xb, rng):
    import torch

    n, dev = xb.shape[0], xb.device
    g = torch.from_numpy(rng.uniform(0.7, 1.2, (n, 1, 1, 1)).astype(np.float32)).to(dev)
    b = torch.from_numpy(rng.uniform(-0.2, 0.2, (n, 1, 1, 1)).astype(np.float32)).to(dev)
    xb = xb * g + b + torch.randn_like(xb) * float(rng.uniform(0, 0.1))
    if xb.shape[1] == 3:  # colour: a white balance off by a little, per crop and channel
        xb = xb * torch.from_numpy(rng.uniform(0.85, 1.15, (n, 3, 1, 1)).astype(np.float32)).to(dev)
    dx, dy = int(rng.integers(-2, 3)), int(rng.integers(-2, 3))
    return torch.roll(xb, shifts=(dy, dx), dims=(2, 3))


def train(X, R, L, steps: int, out_onnx: Path, batch: int = 64, lr: float = 3e-3, log=print, threads: int = 2,
          init: Path | None = None, net_kw: dict | None = None, checkpoint: Path | None = None,
          checkpoint_every: int = 500, device: str = "cpu", letter_weight: float = 1.0):
    """Train from scratch on normalized crops X (N,C,H,W); export ONNX (outputs rank, letter, feat) + .pt
    (``out_onnx`` None: no files, the trained net is returned on the CPU). ``device``: torch's device ("cuda" on
    a lent GPU machine: the crops are held there; the same batches and augmentation as on the CPU).
    ``net_kw``: make_net's arguments (channels, head sizes; default: the Pirate's Bluff reader).
    ``checkpoint``: every ``checkpoint_every`` steps the whole training state (weights, optimiser, schedule, both
    random generators) is written there, and a run of the same length finding it goes on from that step (a run
    cut off loses at most ``checkpoint_every`` steps); it is removed when the training ends.
    ``letter_weight``: the second head's (the letter; a suited reader's suit) share of the loss beside the rank
    head's 1."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = make_net(**(net_kw or {}))
    if init:  # continue an earlier run of this recipe
        if Path(init).suffix == ".onnx":
            load_onnx_weights(net, Path(init))
        else:
            net.load_state_dict(torch.load(str(init)))
    net.to(device)
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=max(steps, 2))
    Xt, Rt, Lt = (torch.from_numpy(a).to(device) for a in (X, R, L))
    start = 0
    if checkpoint and Path(checkpoint).exists():
        ck = torch.load(str(checkpoint), weights_only=False)
        if (ck["steps"] == steps and ck["n"] == len(X) and ck["batch"] == batch
                and ck.get("letter_weight", 1.0) == letter_weight):  # another loss starts afresh
            net.load_state_dict(ck["net"])
            opt.load_state_dict(ck["opt"])
            sched.load_state_dict(ck["sched"])
            rng.bit_generator.state = ck["rng"]
            torch.set_rng_state(ck["torch_rng"])
            start = ck["step"]
            log(f"corner reader: going on from step {start} ({checkpoint})")
    net.train()
    t0 = time.time()
    for step in range(start, steps):
        idx = torch.from_numpy(rng.integers(0, len(X), batch)).to(device)
        pr, pl, _ = net(_augment(Xt[idx], rng))
        loss = F.cross_entropy(pr, Rt[idx]) + letter_weight * F.cross_entropy(pl, Lt[idx], ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 200 == 0 or step == steps - 1:
            log(f"corner reader step {step}/{steps} loss {loss.item():.4f} ({time.time() - t0:.0f}s)")
        if checkpoint and (step + 1) % checkpoint_every == 0 and step + 1 < steps:
            tmp = Path(checkpoint).with_suffix(".tmp")
            torch.save({"steps": steps, "n": len(X), "batch": batch, "letter_weight": letter_weight,
                        "step": step + 1, "net": net.state_dict(),
                        "opt": opt.state_dict(), "sched": sched.state_dict(), "rng": rng.bit_generator.state,
                        "torch_rng": torch.get_rng_state()}, str(tmp))
            tmp.replace(checkpoint)
    if checkpoint:
        Path(checkpoint).unlink(missing_ok=True)
    net.to("cpu").eval()
    if out_onnx is not None:
        export(net, out_onnx)
    return net


def onnx_float_values(onnx_path: Path):
    """``(model, values)``: an ONNX file and the float value of each of its weights, by the name the graph uses: the
    initializers, and in a static int8 (QDQ) file each DequantizeLinear's output of a stored weight, (q - zero point)
    x scale per channel along its axis (the float weight to within half a step)."""
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(onnx_path))
    w = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for node in m.graph.node:  # a QDQ file: each weight's float value under the name its DequantizeLinear gives it
        if node.op_type == "Identity" and node.input[0] in w:  # the exporter shares equal initializers this way
            w[node.output[0]] = w[node.input[0]]
        elif node.op_type == "DequantizeLinear" and node.input[0] in w:
            q, scale = w[node.input[0]].astype(np.float64), w[node.input[1]].astype(np.float64)
            zp = w[node.input[2]].astype(np.float64) if len(node.input) > 2 and node.input[2] else np.zeros_like(scale)
            if scale.ndim:  # per channel, along the attribute's axis
                axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
                shape = [1] * q.ndim
                shape[axis] = -1
                scale, zp = scale.reshape(shape), zp.reshape(shape)
            w[node.output[0]] = ((q - zp) * scale).astype(np.float32)
    return m, w


def load_onnx_weights(net, onnx_path: Path) -> None:
    """Warm start from an exported reader (only the .onnx is committed): the exporter folded each BatchNorm into
    its convolution, so the conv takes the folded weight and the BatchNorm becomes the identity plus the folded
    bias; the heads are multiplied back by the temperature that was divided into them (``corner_reader.json``;
    ``<name>.json`` beside ``<name>.int8.onnx``). A static int8 file (QDQ) gives its weights dequantized, (q - zero
    point) x scale per output channel: the float weights to within half a step, for a reader whose float file
    was never committed."""
    import torch

    m, w = onnx_float_values(onnx_path)
    heads = {}
    for node in m.graph.node:  # the heads' Gemm: its weight and bias by the names the graph gives them
        if node.op_type == "Gemm":
            for head in ("rank", "letter"):
                if node.input[1].startswith(f"{head}.weight"):
                    heads[head] = (w[node.input[1]], w[node.input[2]])
    convs = [n for n in m.graph.node if n.op_type == "Conv"]
    pairs = [(blk[0], blk[1]) for blk in net.f if isinstance(blk, torch.nn.Sequential)]
    if len(pairs) != len(convs):  # a reader without the extra convolutions: those start as the identity
        base = [(blk[0], blk[1]) for k, blk in enumerate(net.f) if isinstance(blk, torch.nn.Sequential) and k not in net.extra]
        if len(base) != len(convs):
            raise ValueError(f"{onnx_path}: {len(convs)} convolutions, the reader has {len(pairs)}")
        for k in net.extra:
            _start_as_identity(net.f[k])
        pairs = base
    name = onnx_path.name[: -len(".int8.onnx")] if onnx_path.name.endswith(".int8.onnx") else onnx_path.stem
    rep = onnx_path.with_name(f"{name}.json")
    T = float(json.loads(rep.read_text()).get("temperature", 1.0)) if rep.exists() else 1.0
    with torch.no_grad():
        for (conv, bn), node in zip(pairs, convs):
            conv.weight.copy_(torch.from_numpy(np.array(w[node.input[1]])))
            bn.weight.fill_(1.0)
            bn.bias.copy_(torch.from_numpy(np.array(w[node.input[2]])))
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
        for head in ("rank", "letter"):
            if head not in heads:
                raise ValueError(f"{onnx_path}: no {head} head")
            hw, hb = heads[head]
            getattr(net, head).weight.copy_(torch.from_numpy(np.array(hw) * T))
            getattr(net, head).bias.copy_(torch.from_numpy(np.array(hb) * T))


def export(net, out_onnx: Path, temperature: float = 1.0):
    """ONNX with the temperature folded into the heads (logits / T): the runtime's softmax is calibrated."""
    import copy

    import torch

    net = copy.deepcopy(net).eval()
    with torch.no_grad():
        for head in (net.rank, net.letter):
            head.weight /= temperature
            head.bias /= temperature
    out_onnx.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(net, torch.zeros(1, net.f[0][0].in_channels, CORNER_H, CORNER_W), str(out_onnx), input_names=["crop"],
                      output_names=["rank", "letter", "feat"],
                      dynamic_axes={k: {0: "n"} for k in ("crop", "rank", "letter", "feat")}, opset_version=17, dynamo=False)
    torch.save(net.state_dict(), out_onnx.with_suffix(".pt"))


def quantize(onnx_fp32: Path, out: Path, X: np.ndarray) -> Path:
    """Static int8 (QDQ, per-channel weights, MinMax calibration on the normalized crops X) for the runtime, its
    weights then made unsigned (``vision.ortsession.unsigned_weights``)."""
    import tempfile

    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from vision.ortsession import unsigned_weights

    class Crops(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"crop": X[i : i + 64]} for i in range(0, len(X), 64)])

        def get_next(self):
            return next(self.it, None)

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(onnx_fp32), str(pre))
        quantize_static(str(pre), str(out), Crops(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=True, calibrate_method=CalibrationMethod.MinMax)
    unsigned_weights(out)  # the same weights, summed exactly on every CPU (vision.ortsession)
    return out


def logits(onnx_path: Path, X: np.ndarray, threads: int = 2):
    from vision.ortsession import session

    sess = session(onnx_path, threads, spin=True)
    outs = [sess.run(None, {"crop": X[i : i + 512]}) for i in range(0, len(X), 512)]
    return np.concatenate([o[0] for o in outs]), np.concatenate([o[1] for o in outs]), np.concatenate([o[2] for o in outs])


def _softmax(z):
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def code_probs(pr: np.ndarray, pl: np.ndarray) -> np.ndarray:
    """(N, R*L) P(code) from rank (N, R+1; the last: no index) and letter (N, L) probabilities, code = rank * L +
    letter (Pirate's Bluff: 72 codes); the "no index" share spread evenly."""
    nr, nl = pr.shape[1] - 1, pl.shape[1]
    return (pr[:, :nr, None] * pl[:, None, :]).reshape(len(pr), nr * nl) + pr[:, nr:] / (nr * nl)


TEMPERATURE_GRID = np.exp(np.linspace(math.log(0.5), math.log(4.0), 417))  # 0.5 % steps (61 points, 3.5 %, until
# session 88: a round could land a whole step from where its int8 file's NLL is least; model card, session 87)
INT8_FACTORS = np.exp(np.arange(-45, 46) * math.log(1.25) / 45)  # the int8 file's own factor, 0.8-1.25 in 0.5 % steps
# (exactly 1 in the middle)


def fit_temperature(zr, zl, R, L, grid=None) -> float:
    """One temperature for both heads, minimising the NLL on (calibration-split) crops, from ``grid``
    (``TEMPERATURE_GRID`` when None)."""
    best, best_t = np.inf, 1.0
    lab = L >= 0
    for t in TEMPERATURE_GRID if grid is None else grid:
        pr, pl = _softmax(zr / t), _softmax(zl / t)
        nll = -np.log(np.maximum(pr[np.arange(len(R)), R], 1e-12)).mean()
        nll += -np.log(np.maximum(pl[np.arange(len(L))[lab], L[lab]], 1e-12)).mean()
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def calibrated_int8(net, onnx_path: Path, int8_path: Path, Xc: np.ndarray, Rc, Lc, Xq: np.ndarray,
                    threads: int = 2) -> dict:
    """The temperature fitted where the runtime reads: ``onnx_path`` (the trained net exported at temperature 1) gives
    the float logits of the calibration crops ``Xc`` (labels ``Rc``, ``Lc``), T is fitted on them
    (``TEMPERATURE_GRID``), folded into the heads (``export``) and quantized to ``int8_path`` (ranges from ``Xq``).
    Quantizing moves the logits a little, so the int8 file's logits are fitted again, for a factor (``INT8_FACTORS``);
    where it is not 1, T times it is exported and quantized again (the same ranges' crops); T stays within the grid's
    range (0.5-4). Returns ``{"temperature": the T in both files, "temperature_fp32": the float fit, "int8_factor": the
    factor, "int8_factor_after": the int8 file's factor at the end (1 where it landed)}``."""
    zr, zl, _ = logits(onnx_path, Xc, threads=threads)
    T0 = fit_temperature(zr, zl, Rc, Lc)
    export(net, onnx_path, T0)
    quantize(onnx_path, int8_path, Xq)
    zr8, zl8, _ = logits(int8_path, Xc, threads=threads)
    lo, hi = TEMPERATURE_GRID[0], TEMPERATURE_GRID[-1]  # the temperature stays in the grid's range (a reader barely
    # trained sits at its edge)
    factors = INT8_FACTORS[(T0 * INT8_FACTORS >= lo * (1 - 1e-9)) & (T0 * INT8_FACTORS <= hi * (1 + 1e-9))]
    s = fit_temperature(zr8, zl8, Rc, Lc, factors)
    T, after = T0, s
    if s != 1.0:
        T = T0 * s
        export(net, onnx_path, T)
        quantize(onnx_path, int8_path, Xq)
        zr8, zl8, _ = logits(int8_path, Xc, threads=threads)
        after = fit_temperature(zr8, zl8, Rc, Lc, INT8_FACTORS)  # over the whole range: what it would still want
    return {"temperature": round(float(T), 4), "temperature_fp32": round(float(T0), 4), "int8_factor": round(float(s), 4),
            "int8_factor_after": round(float(after), 4)}


def reliability(conf: np.ndarray, right: np.ndarray, bins=(0.0, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 1.0001)) -> list:
    rows = []
    for lo, hi in zip(bins[:-1], bins[1:]):
        m = (conf >= lo) & (conf < hi)
        if m.any():
            rows.append({"bin": [lo, min(hi, 1.0)], "n": int(m.sum()), "mean_conf": round(float(conf[m].mean()), 4),
                         "accuracy": round(float(right[m].mean()), 4)})
    return rows


def evaluate_crops(onnx_path: Path, X, R, L) -> dict:
    """Per-crop figures on labelled corner crops (index corners only): code accuracy, wrong at >= 0.9."""
    zr, zl, _ = logits(onnx_path, X)
    p = code_probs(_softmax(zr), _softmax(zl))
    nr, nl = zr.shape[1] - 1, zl.shape[1]
    m = R < nr
    truth = R[m] * nl + L[m]
    k = p[m].argmax(1)
    conf = p[m].max(1)
    right = k == truth
    none_ok = float((_softmax(zr)[~m].argmax(1) == nr).mean()) if (~m).any() else float("nan")
    return {"crops": int(m.sum()), "code_accuracy": round(float(right.mean()), 4),
            "read_at_0.9": round(float((conf >= 0.9).mean()), 4),
            "wrong_at_0.9": round(float(((conf >= 0.9) & ~right).mean()), 5),
            "no_index_recognised": round(none_ok, 4), "reliability": reliability(conf, right)}


def main(argv=None) -> int:
    import argparse

    from companion.inputs import OneLineParser, cli_float, cli_int

    ap = OneLineParser(prog="python -m vision.corner", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cards", type=cli_int(1), default=30000, help="training cards (4 crops each)")
    ap.add_argument("--middle-cards", type=cli_int(0), default=0,
                    help="more training cards whose middles are read too (6 crops each; Scanner.scan step 3)")
    ap.add_argument("--calib-cards", type=cli_int(1), default=3000)
    ap.add_argument("--steps", type=cli_int(1), default=6000)
    ap.add_argument("--batch", type=cli_int(1), default=64)
    ap.add_argument("--workers", type=cli_int(1, 64), default=2)
    ap.add_argument("--out", default=None, help="default models/")
    ap.add_argument("--name", default="corner_reader", choices=("corner_reader", "middle_reader", "second_reader"),
                    help="the files' name: corner_reader, middle_reader (a continuation with --middle-cards that "
                         "Scanner.scan step 3 reads a card's middle with) or second_reader (a continuation on a fresh "
                         "set of cards, --data-seed 5, that step 3 reads an unsure card's corners with once more)")
    ap.add_argument("--work", default=None, help="crop cache folder (default out/train)")
    ap.add_argument("--threads", type=cli_int(1, 256), default=2, help="torch threads (1 is faster on a busy machine)")
    ap.add_argument("--init", default=None, help="continue from this corner_reader.pt or .onnx")
    ap.add_argument("--lr", type=cli_float(0, 1, lo_open=True), default=3e-3)
    ap.add_argument("--seed", type=cli_int(0), default=0, help="batch order seed")
    ap.add_argument("--data-seed", type=cli_int(1), default=1,
                    help="the training cards' seed (1: the first set; another value draws a fresh set of cards in the "
                         "same train families, cached apart; 2 and 4 are the calibration and middle cards')")
    ap.add_argument("--extra", type=cli_int(0, 8), default=0,
                    help="more convolutions at the two smallest scales (make_net's extra; with --init of a reader "
                         "without them they start as the identity)")
    ap.add_argument("--smoke", action="store_true", help="a few cards and steps (tests)")
    a = ap.parse_args(argv)
    if a.data_seed in (2, 4):
        ap.error(f"argument --data-seed: {a.data_seed} is the {'calibration' if a.data_seed == 2 else 'middle'} "
                 "cards' seed; give 1, 3 or >= 5")
    if a.init and not Path(a.init).is_file():
        ap.error(f"argument --init: no such file: {a.init}")
    for opt, path in (("--out", a.out), ("--work", a.work)):
        if path and Path(path).exists() and not Path(path).is_dir():
            ap.error(f"argument {opt}: not a folder: {path}")
    root = Path(__file__).resolve().parent.parent
    out = Path(a.out) if a.out else root / "models"
    work = Path(a.work) if a.work else root / "out" / "train"
    if a.smoke:
        a.cards, a.calib_cards, a.steps, a.batch, a.workers = 20, 10, 3, 16, 1
        a.middle_cards = min(a.middle_cards, 10)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    rep = {"recipe": {"name": a.name, "cards": a.cards, "middle_cards": a.middle_cards, "steps": a.steps, "batch": a.batch, "lr": a.lr,
                      "init": Path(a.init).name if a.init else None, "extra": a.extra, "data_seed": a.data_seed}}
    t0 = time.time()
    cache = work / (f"corner_train_{a.cards}.npz" if a.data_seed == 1 else f"corner_train_{a.cards}_s{a.data_seed}.npz")
    if cache.exists() and not a.smoke:
        z = np.load(cache)
        C, R, L = z["C"], z["R"], z["L"]
    else:
        C, R, L = gen_corner_crops(a.cards, seed=a.data_seed, split="train", workers=a.workers)
        if not a.smoke:
            np.savez(cache, C=C, R=R, L=L)
    if a.middle_cards:
        mcache = work / f"corner_middle_{a.middle_cards}.npz"
        if mcache.exists() and not a.smoke:
            z = np.load(mcache)
            Cm, Rm, Lm = z["C"], z["R"], z["L"]
        else:
            Cm, Rm, Lm = gen_corner_crops(a.middle_cards, seed=4, split="train", workers=a.workers, middle=True)
            if not a.smoke:
                np.savez(mcache, C=Cm, R=Rm, L=Lm)
        C, R, L = np.concatenate([C, Cm]), np.concatenate([R, Rm]), np.concatenate([L, Lm])
    rep["train_crops"] = int(len(C))
    rep["gen_s"] = round(time.time() - t0, 1)
    t0 = time.time()
    onnx_path = out / f"{a.name}.onnx"
    net = train(normalize(C), R, L, a.steps, onnx_path, batch=a.batch, threads=a.threads, lr=a.lr,
                init=Path(a.init) if a.init else None, net_kw={"extra": a.extra}, checkpoint=None if a.smoke else work / "corner_train.ckpt")
    rep["train_s"] = round(time.time() - t0, 1)
    # temperature on the calibration font split only
    Cc, Rc, Lc = gen_corner_crops(a.calib_cards, seed=2, split="calibration", workers=a.workers)
    Xc = normalize(Cc)
    t0 = time.time()
    rng = np.random.default_rng(3)
    rep.update(calibrated_int8(net, onnx_path, out / f"{a.name}.int8.onnx", Xc, Rc, Lc,
                               normalize(C[rng.choice(len(C), min(len(C), 2048), replace=False)])))
    rep["quantize_s"] = round(time.time() - t0, 1)
    rep["calibration"] = evaluate_crops(onnx_path, Xc, Rc, Lc)
    rep["calibration_int8"] = evaluate_crops(out / f"{a.name}.int8.onnx", Xc, Rc, Lc)
    (out / f"{a.name}.json").write_text(json.dumps(rep, indent=1) + "\n")
    print(json.dumps({k: v for k, v in rep.items() if k != "calibration"}))
    for k in ("calibration", "calibration_int8"):
        print(k, json.dumps({a: b for a, b in rep[k].items() if a != "reliability"}))
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
