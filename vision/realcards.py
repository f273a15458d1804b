"""Figures on real photographs (../shared/data/real-cards, evaluation only: never copied into the repository).

The photos show standard decks, not Pirate's Bluff cards, so only what our reader can name is scored:
- ``bidly/``: corner-index boxes labelled rank + suit. Ranks 2-8 are digits our reader knows (its ranks are 0-8);
  each such index is cropped from its box (in all four quarter turns: the photos show every orientation) and
  read by the index reader; the surest upright reading counts. Scored: rank right / rank wrong with confidence
  (P(rank) >= 0.9) / not read. The suit is a symbol, not a letter: not scored. The same indices are read by the
  corner reader (the reader of other decks) as the scan reads a lone fanned index: the corner region the box
  would sit in (``vision.corner.index_region``) in its four quarter turns, the turn surest to hold an index, that
  turn's box also shrunk and grown (``FAN_VIEWS``) and the views mixed; scored at P(rank) >= 0.9 and at the scan's
  fan bar (``FAN_CORNER_MIN``).
- ``edje-pinochle/``: whole-card boxes (ranks 9-A, none of which our reader knows): the detector's card recall
  (a detected card whose centre lies in a labelled box) and its false cards.

    python -m vision.realcards [DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import cv2
import numpy as np

DEFAULT = Path("/work/shared/data/real-cards") if Path("/work/shared/data/real-cards").is_dir() else \
    Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "real-cards"


def _softmax(z):
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


def _bidly_indices(root: Path):
    """bidly's labelled rank 2-8 index boxes: (grey photo, box quad, rank)."""
    for js in sorted((root / "bidly").glob("*.json")):
        lab = json.loads(js.read_text())
        img = cv2.imread(str(root / "bidly" / lab["image"]), cv2.IMREAD_GRAYSCALE)
        for c in lab["cards"]:
            rank = c["label"][:-1]
            if rank not in {"2", "3", "4", "5", "6", "7", "8"}:
                continue
            x0, y0, x1, y1 = c["box"]
            yield img, np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float32), int(rank)


def _surest_upright(zr) -> tuple[int, float]:
    """Of the four quarter turns' rank logits (class 9 = "no index upright here"), the turn surest to hold an
    upright index: its rank and P(rank | an index is there)."""
    pr = _softmax(zr)
    j = int(pr[:, 9].argmin())
    k = int(pr[j, :9].argmax())
    return k, float(pr[j, k] / max(1e-9, 1 - pr[j, 9]))


def bidly(root: Path, min_conf: float = 0.9) -> dict:
    from vision.ortsession import session as ort_session

    from vision.detect import MODELS
    from vision.geometry import crop_quad, normalize_crops

    sess = ort_session(MODELS / "index_reader.onnx", spin=True)
    st = {"indices": 0, "right": 0, "wrong_confident": 0, "unread": 0}
    for img, q, rank in _bidly_indices(root):
        # every quarter turn: the tall reading is upright for two of them
        crops = [crop_quad(img, np.roll(q, -r, axis=0), expand=1.0) for r in range(4)]
        zr, _zl = sess.run(None, {"crop": normalize_crops(np.stack(crops))})
        k, p = _surest_upright(zr)
        st["indices"] += 1
        if p < min_conf:
            st["unread"] += 1
        elif k == rank:
            st["right"] += 1
        else:
            st["wrong_confident"] += 1
    return st


def bidly_corner(root: Path) -> dict:
    """bidly's rank 2-8 indices read by the corner reader (see the module doc)."""
    from vision.corner import crop_region, index_region, normalize
    from vision.corner import mix_views
    from vision.detect import FAN_CORNER_MIN, MODELS, fan_regions

    from vision.ortsession import session as ort_session

    sess = ort_session(MODELS / "corner_reader.int8.onnx", spin=True)
    bars = {"0.9": 0.9, f"{FAN_CORNER_MIN:g}": FAN_CORNER_MIN}
    st = {"indices": 0, **{f"right@{b}": 0 for b in bars}, **{f"wrong@{b}": 0 for b in bars}}
    for img, q, rank in _bidly_indices(root):
        turns = [np.roll(q, -r, axis=0) for r in range(4)]
        zr, _zl, _f = sess.run(None, {"crop": normalize(np.stack([crop_region(img, index_region(t)) for t in turns]))})
        pr = _softmax(zr)
        j = int(pr[:, 9].argmin())  # the turn surest to hold an upright index, then its box shrunk and grown
        pr = pr[[j]]  # (vision.detect.fan_regions) read too and mixed, as `scan` reads a lone index
        extra = fan_regions(turns[j])
        if extra:
            zv, _zl, _f = sess.run(None, {"crop": normalize(np.stack([crop_region(img, r) for r in extra]))})
            pr = np.concatenate([pr, _softmax(zv)])
        mix = mix_views(list(pr), pr[:, 9])
        k = int(mix[:9].argmax())
        p = float(mix[k] / max(1e-9, 1 - mix[9]))
        st["indices"] += 1
        for b, v in bars.items():
            if p >= v:
                st[f"{'right' if k == rank else 'wrong'}@{b}"] += 1
    return st


def edje(root: Path) -> dict:
    from vision.detect import Scanner

    sc = Scanner("ort")
    st = {"images": 0, "cards": 0, "found": 0, "false_cards": 0}
    for js in sorted((root / "edje-pinochle").glob("test_*.json")):
        lab = json.loads(js.read_text())
        img = cv2.imread(str(root / "edje-pinochle" / lab["image"]), cv2.IMREAD_COLOR)
        if img is None:
            continue
        dets = [d for d in sc.detector(img) if d[0] == 0 and d[1] >= 0.4]
        st["images"] += 1
        used = set()
        for c in lab["cards"]:
            x0, y0, x1, y1 = c["box"]
            st["cards"] += 1
            for i, d in enumerate(dets):
                if i not in used and x0 <= d[2] <= x1 and y0 <= d[3] <= y1:
                    used.add(i)
                    st["found"] += 1
                    break
        st["false_cards"] += len(dets) - len(used)
    return st


def main(argv=None) -> int:
    from companion.inputs import OneLineParser

    ap = OneLineParser(prog="python -m vision.realcards", description="Read the real photographs' evaluation "
                       "sets (bidly, edje-pinochle's test split) and print the figures as JSON.")
    ap.add_argument("root", nargs="?", default=str(DEFAULT), help=f"the real-cards folder (default {DEFAULT})")
    a = ap.parse_args(argv)
    root = Path(a.root)
    if not root.is_dir():
        ap.error(f"argument root: no real-card photos at {root}")
    res = {"bidly_rank_2_8": bidly(root), "bidly_rank_2_8_corner_reader": bidly_corner(root),
           "edje_test_cards": edje(root)}
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
