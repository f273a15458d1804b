"""A phone held over one card: a rendered scene's first card cut out with a margin and blown up to fill the frame
(shared by the close-up tests of both scanners)."""

import cv2
import numpy as np


def one_card_close_up(scene, height: int = 640) -> np.ndarray:
    """``scene.cards[0]`` cut out with a margin of a quarter of its height, blown up to ``height`` px high."""
    H, W = scene.image.shape[:2]
    q = scene.cards[0].quad
    (x0, y0), (x1, y1) = q.min(0), q.max(0)
    m = 0.25 * (y1 - y0)
    x0, y0, x1, y1 = int(max(0, x0 - m)), int(max(0, y0 - m)), int(min(W, x1 + m)), int(min(H, y1 + m))
    crop = np.ascontiguousarray(scene.image[y0:y1, x0:x1])
    f = height / crop.shape[0]
    return cv2.resize(crop, None, fx=f, fy=f, interpolation=cv2.INTER_CUBIC)
