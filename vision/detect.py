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
CARD_AGREE_MIN = 0.80  # two agreeing corners: mean confidence needed (calibrated on seeds 9.3M, not the bench)
CARD_SINGLE_MIN = 0.97  # one corner alone (the other hidden by glare or missed)
CARD_OVERRULE_MIN = 0.99  # corners disagree: the surer one wins only if it is this sure ...
CARD_OVERRULE_MAX = 0.80  # ... and the other is no surer than this
FAN_MIN = 0.90  # a fanned-hand index on its own
SNAP_PASSES = (0.1,)  # edge-snapping search ranges (x the card's short side)


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

    def read(self, gray: np.ndarray, quads, flip: list[bool]) -> list[IndexRead]:
        """Read index quads (TL, TR, BR, BL). Where ``flip`` is set, the 180-degree reading is tried too and
        the reading the reader finds upright wins (detected boxes know their axis but not their direction)."""
        if not quads:
            return []
        crops, owner = [], []
        for i, (uq, f) in enumerate(zip(quads, flip)):
            c = crop_quad(gray, uq)
            crops.append(normalize_crop(c))
            owner.append((i, False))
            if f:
                crops.append(normalize_crop(c[::-1, ::-1].copy()))
                owner.append((i, True))
        x = np.stack(crops).astype(np.float32)
        rank_logits, letter_logits = self.sess.run(None, {"crop": x})
        pr = _softmax(rank_logits)
        pl = _softmax(letter_logits)
        best: dict[int, tuple] = {}
        for j, (i, flipped) in enumerate(owner):
            if i not in best or pr[j, 9] < pr[best[i][0], 9]:
                best[i] = (j, flipped)
        out = []
        for i, uq in enumerate(quads):
            j, flipped = best[i]
            q = uq[[2, 3, 0, 1]] if flipped else uq
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
    """Detector + index reader. ``scan(frame)`` -> (cards, index_reads).

    For each whole card, each of its two corners is read from the detected index box when the detector
    found one there, otherwise from where the index must be on the card (the card's outline snapped to
    its edges at full resolution, then the index position in card millimetres)."""

    def __init__(self, backend: str = "ort", models: Path | None = None, threads: int = 2, use_geometry: bool = True):
        models = Path(models or MODELS)
        self.detector = Detector(models / "card_det.onnx", backend, threads)
        self.reader = IndexReader(models / "index_reader.onnx", threads)
        self.use_geometry = use_geometry

    def scan(self, bgr: np.ndarray):
        from vision.geometry import card_index_quads, image_gradients, snap_quad

        dets = self.detector(bgr)
        cards = sorted([d for d in dets if d[0] == 0 and d[1] >= 0.4], key=lambda d: -d[1])
        idx = [d for d in dets if d[0] == 1 and d[1] >= 0.3]
        gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        idx_quads = [upright_quad(*d[2:]) for d in idx]
        used: set[int] = set()
        quads, flips, owners = [], [], []  # owner: (card number, corner) or (-1, index number)
        card_quads = []
        gx = gy = None
        for ci, c in enumerate(cards):
            cq = upright_quad(*c[2:])
            if self.use_geometry:
                if gx is None:
                    gx, gy = image_gradients(gray)
                for search in SNAP_PASSES:
                    cq = snap_quad(gx, gy, cq, search)
            card_quads.append(cq)
            for corner, gq in enumerate(card_index_quads(cq)):
                gc = gq.mean(0)
                size = float(np.linalg.norm(gq[0] - gq[2]))
                near = [k for k in range(len(idx)) if k not in used and np.linalg.norm(idx_quads[k].mean(0) - gc) < 0.5 * size]
                if near:
                    k = max(near, key=lambda k: idx[k][1])
                    used.add(k)
                    quads.append(idx_quads[k])
                    flips.append(True)
                elif self.use_geometry:
                    quads.append(gq)
                    flips.append(False)
                else:
                    continue
                owners.append((ci, corner))
        poly = [cq.reshape(-1, 1, 2) for cq in card_quads]
        for k in range(len(idx)):
            if k in used:
                continue
            ctr = tuple(map(float, idx_quads[k].mean(0)))
            if any(cv2.pointPolygonTest(p, ctr, False) >= 0 for p in poly):
                continue  # an index inside a whole card but not at its corners: ignore
            quads.append(idx_quads[k])
            flips.append(True)
            owners.append((-1, k))
        reads = self.reader.read(gray, quads, flips)
        for rd, (ci, k) in zip(reads, owners):
            rd.det_conf = cards[ci][1] if ci >= 0 else idx[k][1]
        per_card = [[rd for rd, (ci, _) in zip(reads, owners) if ci == n] for n in range(len(cards))]
        fan = [rd for rd, (ci, _) in zip(reads, owners) if ci < 0]
        return assemble(card_quads, [c[1] for c in cards], per_card, fan), reads


def assemble(card_quads, card_confs, per_card, fan) -> list[CardRead]:
    out = []
    for corners, dconf, mine in zip(card_quads, card_confs, per_card):
        votes = [r for r in mine if r.conf >= INDEX_MIN]
        rank = letter = None
        conf = 0.0
        if len(votes) == 2:
            a, b = votes
            same = (a.rank, a.letter) == (b.rank, b.letter)
            hi, lo = (a, b) if a.conf >= b.conf else (b, a)
            if same and (a.conf + b.conf) / 2 >= CARD_AGREE_MIN:
                rank, letter, conf = a.rank, a.letter, (a.conf + b.conf) / 2
            elif not same and hi.conf >= CARD_OVERRULE_MIN and lo.conf <= CARD_OVERRULE_MAX:
                rank, letter, conf = hi.rank, hi.letter, hi.conf - lo.conf
            else:
                conf = (a.conf + b.conf) / 2 if same else 0.0
        elif len(votes) == 1 and votes[0].conf >= CARD_SINGLE_MIN:
            rank, letter, conf = votes[0].rank, votes[0].letter, votes[0].conf
        elif votes:
            conf = max(v.conf for v in votes)
        if mine:  # corners start at the top-left of the first index as read
            tl = mine[0].quad[0]
            k = int(np.argmin(((corners - tl) ** 2).sum(1)))
            corners = np.roll(corners, -k, axis=0)
        out.append(CardRead("card", corners, rank, letter, conf, mine))
    for rd in fan:
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
