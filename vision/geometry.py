"""Geometry shared by training and runtime (numpy + cv2 only, no torch)."""

from __future__ import annotations

import math

import cv2
import numpy as np

# Classifier input: an index crop, upright, CROP_W x CROP_H grey pixels.
CROP_W, CROP_H = 32, 64
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


def normalize_crop(crop: np.ndarray) -> np.ndarray:
    """uint8 crop -> float32 (1, H, W), contrast-stretched so lighting and ink colour matter less."""
    c = crop.astype(np.float32)
    lo, hi = np.percentile(c, 2), np.percentile(c, 98)
    c = (c - lo) / max(hi - lo, 8.0)
    return np.clip(c, 0, 1)[None] * 2 - 1
