"""Procedural table surfaces. TRAIN_SURFACES are used for training; HELD_OUT_SURFACES only by the benchmark."""

from __future__ import annotations

import cv2
import numpy as np

TRAIN_SURFACES = ("felt", "wood", "cloth", "stripes", "dots", "gradient")
HELD_OUT_SURFACES = ("plaid", "marble", "tiles")


def _color(rng, light: bool | None = None) -> np.ndarray:
    hsv = np.uint8([[[rng.integers(0, 180), rng.integers(0, 256), rng.integers(30, 256)]]])
    if light is True:
        hsv[0, 0, 1] = rng.integers(0, 90)
        hsv[0, 0, 2] = rng.integers(170, 256)
    return cv2.cvtColor(hsv, cv2.COLOR_HSV2BGR)[0, 0].astype(np.float32)


def _noise(rng, h, w, scale) -> np.ndarray:
    small = rng.standard_normal((max(2, h // scale), max(2, w // scale))).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def make_surface(kind: str, rng: np.random.Generator, w: int = 1280, h: int = 720) -> np.ndarray:
    c1 = _color(rng, light=bool(rng.random() < 0.2))
    c2 = _color(rng)
    ys, xs = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "felt":
        t = 0.5 + 0.08 * _noise(rng, h, w, 4) + 0.05 * _noise(rng, h, w, 40)
        img = c1[None, None] * (t[..., None] * 2)
    elif kind == "wood":
        a = rng.uniform(0, np.pi)
        u = xs * np.cos(a) + ys * np.sin(a) + 25 * _noise(rng, h, w, 80)
        f = rng.uniform(0.03, 0.12)
        t = 0.5 + 0.5 * np.sin(u * f + 3 * _noise(rng, h, w, 30))
        t = t ** rng.uniform(1, 4)
        img = c1[None, None] * (1 - t[..., None]) + c2[None, None] * t[..., None] * 0.6 + c1 * 0.0
    elif kind == "cloth":
        p = rng.uniform(3, 8)
        t = 0.5 + 0.25 * np.sin(xs / p * np.pi) * np.sin(ys / p * np.pi) + 0.05 * _noise(rng, h, w, 3)
        img = c1[None, None] * (0.6 + 0.8 * t[..., None])
    elif kind == "stripes":
        a = rng.uniform(0, np.pi)
        u = xs * np.cos(a) + ys * np.sin(a)
        per = rng.uniform(10, 90)
        t = ((u // per) % 2).astype(np.float32)
        img = c1[None, None] * (1 - t[..., None]) + c2[None, None] * t[..., None]
    elif kind == "dots":
        img = np.empty((h, w, 3), np.float32)
        img[:] = c1
        for _ in range(int(rng.integers(50, 400))):
            cv2.circle(img, (int(rng.integers(w)), int(rng.integers(h))), int(rng.integers(3, 30)), _color(rng).tolist(), -1)
    elif kind == "gradient":
        t = (xs / w * rng.uniform(-1, 1) + ys / h * rng.uniform(-1, 1))
        t = (t - t.min()) / (np.ptp(t) + 1e-6)
        img = c1[None, None] * (1 - t[..., None]) + c2[None, None] * t[..., None]
    elif kind == "plaid":
        p1, p2 = rng.uniform(20, 80, 2)
        t1 = ((xs // p1) % 2).astype(np.float32)
        t2 = ((ys // p2) % 2).astype(np.float32)
        c3 = _color(rng)
        img = c1[None, None] * 0.5 + (c2[None, None] * t1[..., None] + c3[None, None] * t2[..., None]) * 0.35
    elif kind == "marble":
        t = np.abs(np.sin((xs + ys) / rng.uniform(30, 90) + 6 * _noise(rng, h, w, 60) + 2 * _noise(rng, h, w, 12)))
        img = c1[None, None] * (0.5 + 0.5 * t[..., None]) + c2[None, None] * (0.3 * (1 - t[..., None]))
    elif kind == "tiles":
        p = rng.uniform(40, 160)
        g = ((xs % p) < 3) | ((ys % p) < 3)
        img = np.empty((h, w, 3), np.float32)
        img[:] = c1
        img[g] = c2 * 0.5
        img += 10 * _noise(rng, h, w, 8)[..., None]
    else:
        raise ValueError(f"unknown surface {kind!r}")
    return np.clip(img, 0, 255).astype(np.uint8)
