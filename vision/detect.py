"""Camera runtime: find Pirate's Bluff cards in a frame and read their indices.

Pipeline (all on the frame as captured, BGR uint8):
1. The detector (YOLOv8n-OBB, ONNX) runs on the frame scaled to fit 640x384: oriented boxes of whole
   cards (class 0) and of visible corner indices (class 1).
2. Every index box is mapped back to FULL resolution; its crop is rectified upright with the long side
   vertical, in both 180-degree readings, and the index reader CNN (ONNX) scores rank 0-8 / "upside down"
   and letter A-H. The reading whose "upside down" score is lower wins.
3. Indices inside a card's box are that card's two corners: a card is read when both corners agree (or one
   corner alone is very sure); disagreement or low confidence gives ``rank: None`` (unreadable, never guessed).
   Indices outside any whole card are fanned-hand indices and are reported on their own.

Backends: ``ort`` (onnxruntime) and ``cv2`` (OpenCV DNN) for the detector; ``ultralytics`` runs the .pt
weights through ultralytics as the reference path.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.geometry import crop_quad, normalize_crop, upright_quad

MODELS = Path(__file__).resolve().parent.parent / "models"
DET_W, DET_H = 640, 384
LETTERS = "ABCDEFGH"

# Confidence rules (measured on held-out scenes by `pirate-table vision bench`; see docs/camera.md)
INDEX_MIN = 0.60  # an index read counts as a vote at or above this
CARD_AGREE_MIN = 0.80  # two agreeing corners: mean confidence needed
CARD_SINGLE_MIN = 0.97  # one corner alone (the other hidden by glare or missed)
FAN_MIN = 0.90  # a fanned-hand index on its own


@dataclass
class IndexRead:
    quad: np.ndarray  # (4, 2) full-res, TL TR BR BL as read upright
    det_conf: float
    rank: int | None
    letter: str | None
    conf: float

    @property
    def center(self):
        return self.quad.mean(0)


@dataclass
class CardRead:
    kind: str  # "card" or "index"
    corners: np.ndarray
    rank: int | None
    letter: str | None
    confidence: float
    indices: list = field(default_factory=list)

    @property
    def code(self):
        return None if self.rank is None else f"{self.rank}{self.letter}"

    @property
    def center(self):
        return self.corners.mean(0)

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "card": self.code,
            "rank": self.rank,
            "letter": self.letter if self.rank is not None else None,
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
            "confidence": round(float(self.confidence), 4),
        }


def letterbox(bgr: np.ndarray):
    h, w = bgr.shape[:2]
    s = min(DET_W / w, DET_H / h)
    nw, nh = int(round(w * s)), int(round(h * s))
    small = cv2.resize(bgr, (nw, nh), interpolation=cv2.INTER_AREA)
    canvas = np.full((DET_H, DET_W, 3), 114, np.uint8)
    canvas[:nh, :nw] = small
    return canvas, s


def decode_obb(out: np.ndarray, conf_thres: float = 0.25, iou: float = 0.5):
    """ultralytics OBB head output (1, 4+nc+1, N) -> list of (cls, conf, cx, cy, w, h, r) in input pixels."""
    p = out[0].T  # N x (4+nc+1)
    nc = p.shape[1] - 5
    scores = p[:, 4 : 4 + nc]
    cls = scores.argmax(1)
    conf = scores.max(1)
    keep = conf > conf_thres
    p, cls, conf = p[keep], cls[keep], conf[keep]
    dets = []
    for c in range(nc):
        m = cls == c
        if not m.any():
            continue
        pc, cc = p[m], conf[m]
        rects = [((float(a[0]), float(a[1])), (float(a[2]), float(a[3])), math.degrees(float(a[-1]))) for a in pc]
        idx = cv2.dnn.NMSBoxesRotated(rects, cc.tolist(), conf_thres, iou)
        for i in np.array(idx).reshape(-1):
            a = pc[i]
            dets.append((c, float(cc[i]), float(a[0]), float(a[1]), float(a[2]), float(a[3]), float(a[-1])))
    return dets


class Detector:
    def __init__(self, path: Path | None = None, backend: str = "ort", threads: int = 2):
        self.backend = backend
        path = Path(path or MODELS / "card_det.onnx")
        if backend == "ort":
            import onnxruntime as ort

            so = ort.SessionOptions()
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
            self.inp = self.sess.get_inputs()[0].name
        elif backend == "cv2":
            cv2.setNumThreads(threads)
            self.net = cv2.dnn.readNetFromONNX(str(path))
        elif backend == "ultralytics":
            from ultralytics import YOLO

            self.model = YOLO(str(path.with_suffix(".pt")), task="obb")
        else:
            raise ValueError(f"unknown backend {backend!r}")

    def __call__(self, bgr: np.ndarray, conf_thres: float = 0.25):
        """Oriented boxes in FULL-resolution frame coordinates: (cls, conf, cx, cy, w, h, r)."""
        if self.backend == "ultralytics":
            h, w = bgr.shape[:2]
            s = min(DET_W / w, DET_H / h)
            r = self.model.predict(bgr, imgsz=[DET_H, DET_W], conf=conf_thres, iou=0.5, verbose=False, device="cpu")[0]
            o = r.obb
            return [
                (int(c), float(p), *map(float, b))
                for c, p, b in zip(o.cls.numpy(), o.conf.numpy(), o.xywhr.numpy())
            ]
        canvas, s = letterbox(bgr)
        blob = (canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32)) / 255.0
        if self.backend == "ort":
            out = self.sess.run(None, {self.inp: blob})[0]
        else:
            self.net.setInput(blob)
            out = self.net.forward()
        return [(c, p, cx / s, cy / s, w / s, h / s, r) for c, p, cx, cy, w, h, r in decode_obb(out, conf_thres)]


class IndexReader:
    def __init__(self, path: Path | None = None, threads: int = 2):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        self.sess = ort.InferenceSession(str(path or MODELS / "index_reader.onnx"), so, providers=["CPUExecutionProvider"])

    def read(self, gray: np.ndarray, rects) -> list[IndexRead]:
        if not rects:
            return []
        quads, crops = [], []
        for cx, cy, w, h, r in rects:
            uq = upright_quad(cx, cy, w, h, r)
            c = crop_quad(gray, uq)
            quads.append(uq)
            crops.append(normalize_crop(c))
            crops.append(normalize_crop(c[::-1, ::-1].copy()))
        x = np.stack(crops).astype(np.float32)
        rank_logits, letter_logits = self.sess.run(None, {"crop": x})
        pr = _softmax(rank_logits)
        pl = _softmax(letter_logits)
        out = []
        for i, uq in enumerate(quads):
            a, b = 2 * i, 2 * i + 1
            j = a if pr[a, 9] <= pr[b, 9] else b
            q = uq if j == a else uq[[2, 3, 0, 1]]
            rk = int(pr[j, :9].argmax())
            lt = int(pl[j].argmax())
            conf = float(pr[j, rk] * pl[j, lt])
            out.append(IndexRead(q, 0.0, rk, LETTERS[lt], conf))
        return out


def _softmax(z):
    z = z - z.max(1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(1, keepdims=True)


class Scanner:
    """Detector + index reader. ``scan(frame)`` -> (cards, index_reads)."""

    def __init__(self, backend: str = "ort", models: Path | None = None, threads: int = 2):
        models = Path(models or MODELS)
        self.detector = Detector(models / "card_det.onnx", backend, threads)
        self.reader = IndexReader(models / "index_reader.onnx", threads)

    def scan(self, bgr: np.ndarray):
        dets = self.detector(bgr)
        cards = [d for d in dets if d[0] == 0 and d[1] >= 0.4]
        idx = [d for d in dets if d[0] == 1 and d[1] >= 0.3]
        gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        reads = self.reader.read(gray, [d[2:] for d in idx])
        for rd, d in zip(reads, idx):
            rd.det_conf = d[1]
        return assemble(cards, reads), reads


def assemble(card_dets, reads: list[IndexRead]) -> list[CardRead]:
    from vision.geometry import rect_corners

    used = set()
    out = []
    for c in sorted(card_dets, key=lambda d: -d[1]):
        corners = rect_corners(*c[2:])
        poly = corners.reshape(-1, 1, 2)
        mine = [i for i, rd in enumerate(reads) if i not in used and cv2.pointPolygonTest(poly, tuple(map(float, rd.center)), False) >= 0]
        mine = sorted(mine, key=lambda i: -reads[i].det_conf)[:2]
        used.update(mine)
        votes = [reads[i] for i in mine if reads[i].conf >= INDEX_MIN]
        rank = letter = None
        conf = 0.0
        if len(votes) == 2:
            a, b = votes
            if (a.rank, a.letter) == (b.rank, b.letter) and (a.conf + b.conf) / 2 >= CARD_AGREE_MIN:
                rank, letter, conf = a.rank, a.letter, (a.conf + b.conf) / 2
            else:
                conf = max(a.conf, b.conf) if (a.rank, a.letter) == (b.rank, b.letter) else 0.0
        elif len(votes) == 1 and votes[0].conf >= CARD_SINGLE_MIN and len(mine) < 2:
            rank, letter, conf = votes[0].rank, votes[0].letter, votes[0].conf
        elif votes:
            conf = max(v.conf for v in votes)
        # order corners starting from the corner nearest the first index's top-left
        if mine:
            tl = reads[mine[0]].quad[0]
            k = int(np.argmin(((corners - tl) ** 2).sum(1)))
            corners = np.roll(corners, -k, axis=0)
        out.append(CardRead("card", corners, rank, letter, conf, [reads[i] for i in mine]))
    for i, rd in enumerate(reads):
        if i in used:
            continue
        ok = rd.conf >= FAN_MIN
        out.append(CardRead("index", rd.quad, rd.rank if ok else None, rd.letter if ok else None, rd.conf, [rd]))
    return out


def first_bidder(cards: list[CardRead]) -> dict:
    """The lowest of the starting cards (whole cards lying apart), by PBCard ordering; None if any is unreadable."""
    from companion.cards import PBCard

    starting = [c for c in cards if c.kind == "card"]
    if not starting:
        return {"card": None, "reason": "no cards found"}
    if any(c.rank is None for c in starting):
        return {"card": None, "reason": "a starting card is unreadable"}
    best = min(range(len(starting)), key=lambda i: PBCard(starting[i].rank, starting[i].letter))
    c = starting[best]
    return {"card": c.code, "position": [round(float(v), 1) for v in c.center], "corners": c.to_json()["corners"]}
