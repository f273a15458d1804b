"""Generate data, train and export the camera's two models, in one command.

    python -m vision.train            # full recipe (see models/MODEL_CARD.md)
    python -m vision.train --smoke    # a few steps on a tiny set, into a temp dir (used by the tests)

1. Detector: YOLOv8n-OBB trained from scratch by ultralytics (``YOLO('yolov8n-obb.yaml')``, no downloaded
   weights) on synthetic scenes, 2 classes: 0 card (a whole visible card), 1 index (a visible corner index).
   Scenes are 1280x720, halved to 640x360 (the runtime's input scale) and cut into 320x320 tiles.
2. Index reader: a small plain CNN (torch) on upright index crops taken from full-resolution scenes
   with the runtime's crop code: each index as the detector's box sees it (its typical error simulated) and
   as the card's outline places it (a snapper's typical corner error simulated), two heads: rank (0-8, or
   9 = "no index upright here": the crop turned 180 degrees, or a corner without an index) and letter (A-H).
Both are exported to ONNX under models/, and quantized to int8 for the runtime path (onnxruntime).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.detect import DET_H, DET_W
from vision.geometry import CROP_H, CROP_W, crop_quad, rect_from_quad, upright_quad
from vision.synth.scene import make_scene
from vision.synth.surfaces import TRAIN_SURFACES

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT / "models"
DET_SCALE = 0.5  # frames are halved before detection (1280x720 -> 640x360)
TILE = 320
FAR_RANGE = (1.3, 2.0)  # --decks-far: how much further away the camera is (the bench's far table is 2)
LAYOUTS = ("start", "start", "fan", "mixed")


def _clip_poly(q, x0, y0, w, h):
    rect = np.array([[x0, y0], [x0 + w, y0], [x0 + w, y0 + h], [x0, y0 + h]], np.float32)
    area, inter = cv2.intersectConvexConvex(q.astype(np.float32), rect)
    full = abs(cv2.contourArea(q.astype(np.float32)))
    if inter is None or full <= 0:
        return None, 0.0
    return inter.reshape(-1, 2), area / full


def gen_detector_data(out: Path, n_scenes: int, seed0: int = 0, tiles_per_scene: int = 3, fonts=None,
                      prefix: str = "s", deck: str | None = None, layouts=None,
                      far: tuple[float, float] | None = None, index: bool = True) -> int:
    """Write an ultralytics OBB dataset (images/train, labels/train, data.yaml). Returns tiles written.
    ``fonts``: faces set in these font families (vision.fonts.split_fonts("train")); None: the own faces.
    ``deck``: scenes of that suited deck (``vision.synth.suited.make_deck_scene``, ``layouts`` in turn) instead of
    Pirate's Bluff scenes. ``far`` (lo, hi): each scene as a camera further away sees it (``far_scene`` with a factor
    drawn from lo..hi by the scene's seed): smaller cards and indices. Each tile depends on its scene's seed alone,
    so the scenes can be made in any order or by several processes (``index=False``: no data.yaml and val.txt, which
    ``write_dataset_index`` writes once all are made)."""
    img_dir, lab_dir = out / "images" / "train", out / "labels" / "train"
    img_dir.mkdir(parents=True, exist_ok=True)
    lab_dir.mkdir(parents=True, exist_ok=True)
    n = 0
    for k in range(n_scenes):
        seed = seed0 + k
        if (lab_dir / f"{prefix}{seed}_{tiles_per_scene - 1}.txt").exists():
            n += tiles_per_scene
            continue
        if deck is None:
            sc = make_scene(seed, LAYOUTS[seed % len(LAYOUTS)], TRAIN_SURFACES, fonts=fonts)
        else:
            from vision.synth.suited import make_deck_scene

            sc = make_deck_scene(seed, deck, layouts[seed % len(layouts)], TRAIN_SURFACES, fonts=fonts)
        if far is not None:
            from vision.synth.scene import far_scene

            sc = far_scene(sc, float(np.random.default_rng(seed + 11).uniform(*far)))
        small = cv2.resize(sc.image, None, fx=DET_SCALE, fy=DET_SCALE, interpolation=cv2.INTER_AREA)
        objs = []
        for c in sc.cards:
            if c.card_visible >= 0.97:
                objs.append((0, c.quad * DET_SCALE))
            for q, v in zip(c.index_quads, c.index_visible):
                if v >= 0.9:
                    objs.append((1, q * DET_SCALE))
        H, W = small.shape[:2]
        rng = np.random.default_rng(seed + 7)
        xs = np.linspace(0, W - TILE, tiles_per_scene)
        for t, x0 in enumerate(xs):
            x0 = int(x0 + rng.integers(-20, 21)) if 0 < t < tiles_per_scene - 1 else int(x0)
            y0 = int(rng.integers(0, H - TILE + 1))
            tile = small[y0 : y0 + TILE, x0 : x0 + TILE]
            lines = []
            for cls, q in objs:
                poly, frac = _clip_poly(q, x0, y0, TILE, TILE)
                if poly is None or frac < 0.5:
                    continue
                rect = cv2.minAreaRect((poly - [x0, y0]).astype(np.float32))
                pts = np.clip(cv2.boxPoints(rect) / TILE, 0, 1)
                lines.append(f"{cls} " + " ".join(f"{v:.5f}" for v in pts.reshape(-1)))
            name = f"{prefix}{seed}_{t}"
            cv2.imwrite(str(img_dir / f"{name}.jpg"), tile, [cv2.IMWRITE_JPEG_QUALITY, 92])
            (lab_dir / f"{name}.txt").write_text("\n".join(lines) + ("\n" if lines else ""))
            n += 1
    if index:
        write_dataset_index(out)
    return n


def write_dataset_index(out: Path) -> None:
    """``out``'s data.yaml and a small validation list (ultralytics validates once after the last epoch even with
    val=False)."""
    img_dir = out / "images" / "train"
    names = sorted(p.name for p in img_dir.glob("*.jpg"))[:40]
    (out / "val.txt").write_text("".join(f"./images/train/{nm}\n" for nm in names))
    (out / "data.yaml").write_text(
        f"path: {out.resolve()}\ntrain: images/train\nval: val.txt\nnames:\n  0: card\n  1: index\n"
    )


def decks_tile_plan(scenes: int, own: int, suited: int = 0, far: int = 0) -> list[dict]:
    """The tiles of ``--only decks`` as parts, in order: each the keyword arguments of one ``gen_detector_data``
    call, with ``fonts`` "train" (the train split's families, looked up where the tiles are made) or None (own faces).
    ``vision.train`` makes them here one after another, ``vision.det_gpu`` with a pool of processes."""
    from vision.synth.suited import HAND
    from vision.synth.suited import LAYOUTS as SUITED_LAYOUTS

    parts = [dict(n_scenes=scenes, seed0=200_000, fonts="train", prefix="f"), dict(n_scenes=own, seed0=0, prefix="s")]
    for k, deck in enumerate(("standard52", "island54") if suited else ()):
        parts += [dict(n_scenes=suited, seed0=300_000 + 10_000 * k, fonts="train", prefix=f"d{deck}_", deck=deck,
                       layouts=SUITED_LAYOUTS),
                  dict(n_scenes=suited // 2, seed0=400_000 + 10_000 * k, fonts="train", prefix=f"h{deck}_", deck=deck,
                       layouts=(HAND,))]
        if far:  # the same kinds of scene, as a camera 1.3-2 times further away sees them
            parts.append(dict(n_scenes=far, seed0=500_000 + 10_000 * k, fonts="train", prefix=f"x{deck}_", deck=deck,
                              layouts=SUITED_LAYOUTS + (HAND,), far=FAR_RANGE))
    return [p for p in parts if p["n_scenes"]]


def gen_plan_part(out: Path, part: dict, index: bool = True) -> int:
    """One part of a tile plan (``decks_tile_plan``) written into ``out``; its fonts looked up here."""
    kw = dict(part)
    if kw.get("fonts") == "train":
        from vision.fonts import split_fonts

        kw["fonts"] = split_fonts("train")
    return gen_detector_data(out, index=index, **kw)


def plan_chunks(plan: list[dict], size: int) -> list[dict]:
    """The plan's parts cut into parts of at most ``size`` scenes (the same scenes: seeds in order)."""
    return [{**p, "n_scenes": min(size, p["n_scenes"] - a), "seed0": p["seed0"] + a}
            for p in plan for a in range(0, p["n_scenes"], size)]


def train_detector(data_dir: Path, run_dir: Path, epochs: int, hours: float | None, batch: int = 16, workers: int = 2,
                   init: Path | None = None, name: str = "det", device: str = "cpu", seed: int = 0) -> Path:
    import ultralytics.utils.torch_utils as tu
    from ultralytics import YOLO

    tu.NUM_THREADS = 2
    # From scratch (a yaml, no downloaded weights); `init` continues from an earlier run of this recipe.
    model = YOLO("yolov8n-obb.yaml")
    kw = dict(
        data=str(data_dir / "data.yaml"), imgsz=TILE, epochs=epochs, batch=batch, workers=workers,
        pretrained=str(init) if init else False, plots=False, fliplr=0.0, flipud=0.0, degrees=0.0, scale=0.2, mosaic=1.0,
        val=False, device=0 if device == "cuda" else "cpu", amp=False, project=str(run_dir.resolve()), name=name, exist_ok=True, verbose=False,
        close_mosaic=0, warmup_epochs=min(1, epochs), seed=seed, deterministic=True,
    )
    if hours:
        kw["time"] = hours
    model.train(**kw)
    return run_dir.resolve() / name / "weights" / "last.pt"  # absolute: ultralytics puts a relative project under its runs/


def export_detector(pt: Path, onnx_out: Path, imgsz=(DET_H, DET_W), keep_pt: bool = True) -> Path:
    from ultralytics import YOLO
    from ultralytics.utils.torch_utils import strip_optimizer

    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        pt = Path(shutil.copy(pt, Path(tmp) / "card_det.pt"))
        strip_optimizer(str(pt))  # drop optimizer state: the committed .pt is the weights only
        f = YOLO(str(pt)).export(format="onnx", imgsz=list(imgsz), opset=17, simplify=True, dynamic=False)
        shutil.copy(f, onnx_out)
        if keep_pt and pt.resolve() != onnx_out.with_suffix(".pt").resolve():
            shutil.copy(pt, onnx_out.with_suffix(".pt"))
    return onnx_out


def quantize_detector(onnx_fp32: Path, out: Path, n_calib: int = 32, seed0: int = 0, imgsz=(DET_H, DET_W)) -> Path:
    """Static int8 quantization (onnxruntime, QDQ, per-channel weights, MinMax calibration on ``n_calib``
    training scenes) of the detector for the runtime. The first convolution (it sees the raw image) and the
    head after its second convolutions (box decoding: pixel coordinates and class scores share one output
    tensor) stay float: quantizing either lost ~40 % of the cards in a trial. The box decoding's softmax is then
    turned to the last axis (``dfl_on_last_axis``)."""
    import re
    import tempfile

    import onnx
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType, quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process

    from vision.detect import letterbox
    from vision.ortsession import unsigned_weights

    frames = []
    for k in range(n_calib):
        sc = make_scene(seed0 + k, LAYOUTS[(seed0 + k) % len(LAYOUTS)], TRAIN_SURFACES)
        canvas, _ = letterbox(sc.image, (imgsz[1], imgsz[0]))
        frames.append({"images": canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0})

    class Frames(CalibrationDataReader):
        def __init__(self):
            self.it = iter(frames)

        def get_next(self):
            return next(self.it, None)

    with tempfile.TemporaryDirectory() as tmp:
        pre = Path(tmp) / "pre.onnx"
        quant_pre_process(str(onnx_fp32), str(pre))
        names = [n.name for n in onnx.load(str(pre)).graph.node]
        head = re.compile(r"/model\.\d+/cv\d\.\d/cv\d\.\d\.[01]/")
        last = max(int(m.group(1)) for n in names if (m := re.match(r"/model\.(\d+)/", n)))
        keep_float = [n for n in names if n.startswith("/model.0/") or (n.startswith(f"/model.{last}/") and not head.match(n))]
        quantize_static(str(pre), str(out), Frames(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8, per_channel=True, calibrate_method=CalibrationMethod.MinMax,
                        nodes_to_exclude=keep_float)
    dfl_on_last_axis(out, out)
    unsigned_weights(out)  # the same weights, summed exactly on every CPU (vision.ortsession)
    return out


def dfl_on_last_axis(onnx_in: Path, out: Path) -> Path:
    """The detector's box decoding (DFL: a softmax over 16 distance bins, then their expected value) rewritten to
    work along the last axis: the exported graph turns [1, 4, 16, A] to [1, 16, 4, A], takes the softmax over axis 1
    and sums the bins with a 1x1 convolution of weights 0..15; onnxruntime's softmax over a middle axis took 3.1 ms of a
    23.6 ms int8 detector call (2 cores). Here the transpose gives [1, 4, A, 16], the softmax is over the last axis and
    a MatMul by the column 0..15 sums the bins (3 ms faster; the outputs on 30 frames were bit-identical). A graph
    without that pattern (or already rewritten) is written unchanged."""
    import onnx
    from onnx import helper, numpy_helper

    m = onnx.load(str(onnx_in))
    g = m.graph
    made = {o: n for n in g.node for o in n.output}
    inits = {i.name: i for i in g.initializer}
    for sm in [n for n in g.node if n.op_type == "Softmax"]:
        axis = next((helper.get_attribute_value(a) for a in sm.attribute if a.name == "axis"), -1)
        tr = made.get(sm.input[0])
        users = [n for n in g.node if sm.output[0] in n.input]
        if axis != 1 or tr is None or tr.op_type != "Transpose" or len(users) != 1 or users[0].op_type != "Conv":
            continue
        conv = users[0]
        w = numpy_helper.to_array(inits[conv.input[1]]) if conv.input[1] in inits else None
        perm = next(helper.get_attribute_value(a) for a in tr.attribute if a.name == "perm")
        if (list(perm) != [0, 2, 1, 3] or w is None or w.shape[:1] != (1,) or w.size != w.shape[1] or len(conv.input) > 2
                or not np.array_equal(w.ravel(), np.arange(w.shape[1]))):
            continue
        for a in tr.attribute:
            if a.name == "perm":
                a.CopyFrom(helper.make_attribute("perm", [0, 1, 3, 2]))
        for a in sm.attribute:
            if a.name == "axis":
                a.CopyFrom(helper.make_attribute("axis", -1))
        bins = f"{conv.name}_bins"
        g.initializer.append(numpy_helper.from_array(np.arange(w.shape[1], dtype=np.float32).reshape(-1, 1), bins))
        k = list(g.node).index(conv)
        g.node.remove(conv)  # [1, 4, A, 1] out of the MatMul: the same order as the convolution's [1, 1, 4, A]
        g.node.insert(k, helper.make_node("MatMul", [sm.output[0], bins], list(conv.output), name=f"{conv.name}_as_matmul"))
        if not any(conv.input[1] in n.input for n in g.node):  # the convolution's weights, now unused
            g.initializer.remove(inits[conv.input[1]])
        del g.value_info[:]  # shapes along the way changed; onnxruntime infers them again
    onnx.checker.check_model(m)
    onnx.save(m, str(out))
    return out


def quantize_reader(onnx_fp32: Path, out: Path, n_scenes: int = 40, seed0: int = 100_000) -> Path:
    """Static int8 quantization of the index reader (QDQ, per-channel weights, MinMax calibration on the
    crops of ``n_scenes`` training scenes): 2.5x faster on the 2-core tablet with the same bench readings.
    The same recipe as the corner reader's (vision.corner.quantize)."""
    from vision.corner import quantize
    from vision.geometry import normalize_crops

    return quantize(onnx_fp32, out, normalize_crops(_crops_range((seed0, n_scenes, True))[0]))


# ---------------------------------------------------------------- index reader
def _scene_crops(seed: int, jitter: bool = True):
    """All reader training crops of one training scene: lists (crops uint8 [H,W], rank, letter)."""
    from vision.geometry import card_index_quads

    sc = make_scene(seed, LAYOUTS[seed % len(LAYOUTS)], TRAIN_SURFACES)
    gray = cv2.cvtColor(sc.image, cv2.COLOR_BGR2GRAY)
    rng = np.random.default_rng(seed + 99)
    C, R, L = [], [], []

    def add(crop, rank, letter):
        C.append(crop)
        R.append(rank)
        L.append(letter)
        C.append(crop[::-1, ::-1])  # the same crop turned 180 degrees: "upside down"
        R.append(9)
        L.append(-100)

    for c in sc.cards:
        lt = "ABCDEFGH".index(c.letter)
        for q, v in zip(c.index_quads, c.index_visible):
            if v < 0.9:
                continue
            # 1. the detector's view: the labelled index box with a detector's typical error
            cx, cy, w, h, r = rect_from_quad(q)
            if jitter:
                s = max(w, h)
                cx += rng.normal(0, 0.06) * s
                cy += rng.normal(0, 0.06) * s
                w *= rng.uniform(0.85, 1.2)
                h *= rng.uniform(0.85, 1.2)
                r += rng.normal(0, math.radians(5))
            uq = upright_quad(cx, cy, w, h, r)
            # which of the two readings is upright: compare with the label's "down" direction
            down_true = (q[3] + q[2]) / 2 - (q[0] + q[1]) / 2
            down = (uq[3] + uq[2]) / 2 - (uq[0] + uq[1]) / 2
            if float(np.dot(down, down_true)) < 0:
                uq = uq[[2, 3, 0, 1]]
            add(crop_quad(gray, uq), c.rank, lt)
        if c.card_visible < 0.97:
            continue
        # 2. the outline's view: where the runtime's card geometry (poker millimetres, whatever the card's
        # real size) puts the two indices, from the card's corners with an edge snapper's typical error
        short = min(np.linalg.norm(c.quad[1] - c.quad[0]), np.linalg.norm(c.quad[3] - c.quad[0]))
        noisy = c.quad + (rng.normal(0, 0.025 * short, (4, 2)) if jitter else 0)
        for gq in card_index_quads(noisy.astype(np.float32)):
            add(crop_quad(gray, gq), c.rank, lt)
        # 3. the outline read the wrong way round (turned 90 degrees): the other two corners, "no index"
        for gq in card_index_quads(np.roll(noisy, -1, axis=0).astype(np.float32)):
            C.append(crop_quad(gray, gq))
            R.append(9)
            L.append(-100)
    return C, R, L


def _crops_range(args):
    seed0, n, jitter = args
    C, R, L = [], [], []
    for seed in range(seed0, seed0 + n):
        c, r, l_ = _scene_crops(seed, jitter)
        C += c
        R += r
        L += l_
    return (np.stack(C) if C else np.zeros((0, CROP_H, CROP_W), np.uint8)), np.array(R, np.int64), np.array(L, np.int64)


def gen_crops(n_scenes: int, seed0: int, jitter: bool = True, workers: int = 1):
    """Index crops from full-resolution scenes: (X float32 [N,1,H,W], rank int, letter int).

    Per visible index: the detector's view (its labelled box, jittered like a detector's error) and, for a
    whole card, the outline's view (where the card's corners put the index); each also turned 180 degrees
    and labelled 9 ("upside down"); and the two index-free corners a wrongly turned outline would read (9)."""
    from vision.geometry import normalize_crops

    chunks = [(seed0 + k, min(50, n_scenes - k), jitter) for k in range(0, n_scenes, 50)]
    if workers > 1 and len(chunks) > 1:
        import multiprocessing as mp

        with mp.get_context("spawn").Pool(workers) as pool:
            parts = pool.map(_crops_range, chunks)
    else:
        parts = [_crops_range(c) for c in chunks]
    C = np.concatenate([p[0] for p in parts])
    X = np.concatenate([normalize_crops(C[i : i + 4096]) for i in range(0, len(C), 4096)])
    return X, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts])


def make_reader_net():
    import torch.nn as nn

    def block(i, o):
        return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(inplace=True))

    class Reader(nn.Module):
        def __init__(self):
            super().__init__()
            self.f = nn.Sequential(
                block(1, 24), block(24, 24), nn.MaxPool2d(2),  # 24x12
                block(24, 48), block(48, 48), nn.MaxPool2d(2),  # 12x6
                block(48, 96), nn.MaxPool2d(2),  # 6x3
                block(96, 128), nn.AdaptiveAvgPool2d((2, 1)), nn.Flatten(), nn.Dropout(0.1),
            )
            self.rank = nn.Linear(256, 10)
            self.letter = nn.Linear(256, 8)

        def forward(self, x):
            z = self.f(x)
            return self.rank(z), self.letter(z)

    return Reader()


def _augment(xb, rng):
    import torch

    # brightness/contrast/noise on normalized crops, plus small random shifts
    n = xb.shape[0]
    g = torch.from_numpy(rng.uniform(0.7, 1.2, (n, 1, 1, 1)).astype(np.float32))
    b = torch.from_numpy(rng.uniform(-0.2, 0.2, (n, 1, 1, 1)).astype(np.float32))
    xb = xb * g + b + torch.randn_like(xb) * float(rng.uniform(0, 0.12))
    dx, dy = int(rng.integers(-2, 3)), int(rng.integers(-3, 4))
    return torch.roll(xb, shifts=(dy, dx), dims=(2, 3))


def train_reader(X, R, L, steps: int, out_onnx: Path, log=print, batch: int = 128, init: Path | None = None, lr: float = 3e-3):
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = make_reader_net()
    if init:  # continue an earlier run of this recipe
        net.load_state_dict(torch.load(str(init)))
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, lr, total_steps=max(steps, 2))
    Xt, Rt, Lt = torch.from_numpy(X), torch.from_numpy(R), torch.from_numpy(L)
    net.train()
    t0 = time.time()
    for step in range(steps):
        idx = torch.from_numpy(rng.integers(0, len(X), batch))
        xb = _augment(Xt[idx], rng)
        pr, pl = net(xb)
        loss = F.cross_entropy(pr, Rt[idx]) + F.cross_entropy(pl, Lt[idx], ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 200 == 0 or step == steps - 1:
            log(f"reader step {step}/{steps} loss {loss.item():.4f} ({time.time() - t0:.0f}s)")
    net.eval()
    out_onnx.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 1, CROP_H, CROP_W)
    torch.onnx.export(net, dummy, str(out_onnx), input_names=["crop"], output_names=["rank", "letter"],
                      dynamic_axes={"crop": {0: "n"}, "rank": {0: "n"}, "letter": {0: "n"}}, opset_version=17, dynamo=False)
    torch.save(net.state_dict(), out_onnx.with_suffix(".pt"))
    return net


def main(argv=None) -> int:
    from companion.inputs import OneLineParser, cli_float, cli_int

    ap = OneLineParser(prog="python -m vision.train", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    count, positive = cli_int(0), cli_float(0, lo_open=True)
    ap.add_argument("--smoke", action="store_true", help="tiny data, a few steps, into --out (default: a temp dir)")
    ap.add_argument("--out", default=None, help="where models go (default models/, or a temp dir with --smoke)")
    ap.add_argument("--work", default=None, help="scratch dir for generated data and runs")
    ap.add_argument("--det-scenes", type=count, default=2600)
    ap.add_argument("--det-epochs", type=count, default=30)
    ap.add_argument("--det-hours", type=positive, default=1.5, help="ultralytics time budget (overrides epochs)")
    ap.add_argument("--reader-scenes", type=count, default=3000)
    ap.add_argument("--reader-steps", type=count, default=9000)
    ap.add_argument("--only", choices=["det", "quantize", "reader", "corner", "decks"], default=None,
                    help="one part: det (train, export, quantize), quantize (both committed models), reader (train, "
                    "quantize), corner (the corner reader: vision/corner.py, font families of the train split; then the middle reader), decks "
                    "(the detector for other decks: card_det.pt, or without it the weights of card_det.int8.onnx, "
                    "fine-tuned on font-family and own-face scenes)")
    ap.add_argument("--decks-scenes", type=count, default=350, help="font-family scenes for --only decks (+ --decks-own own-face scenes)")
    ap.add_argument("--decks-own", type=count, default=300, help="own-face scenes for --only decks")
    ap.add_argument("--decks-far", type=count, default=0, help="--only decks with --decks-suited: also this many "
                    "scenes of each suited deck as a camera 1.3-2 times further away sees them (smaller indices)")
    ap.add_argument("--decks-hours", type=positive, default=0.15)
    ap.add_argument("--decks-suited", type=count, default=0, help="--only decks: also this many scenes of each suited "
                    "deck (train fonts; start rows, fans, trick piles, mixed) and half as many hands held tight")
    ap.add_argument("--decks-as", choices=["decks", "suited"], default="decks",
                    help="--only decks: write models/card_det_<this>.int8.onnx (decks: the Pirate's Bluff corner path's "
                    "detector for other decks; suited: the standard and Island decks' scanner's), its run under "
                    "<work>/runs/<this> and its report as train_report_<this>.json")
    ap.add_argument("--corner-cards", type=count, default=30000)
    ap.add_argument("--corner-steps", type=count, default=6000)
    ap.add_argument("--middle-cards", type=count, default=24000,
                    help="the middle reader: the corner reader continued with this many more cards whose middles are read")
    ap.add_argument("--middle-steps", type=count, default=8000)
    ap.add_argument("--second-steps", type=count, default=16000,
                    help="the second reader: the corner reader continued this many steps on a fresh set of "
                         "--corner-cards cards")
    ap.add_argument("--det-init", default=None, help="continue from this .pt of an earlier run of this recipe")
    ap.add_argument("--det-name", default="det")
    ap.add_argument("--reader-init", default=None, help="continue from this reader .pt")
    ap.add_argument("--reader-lr", type=positive, default=3e-3)
    args = ap.parse_args(argv)
    if args.decks_far and not args.decks_suited:  # the far scenes are the suited decks': nothing silently left out
        ap.error("argument --decks-far: needs --decks-suited")
    import tempfile

    if args.smoke:
        tmp = Path(tempfile.mkdtemp(prefix="pt-train-smoke-"))
        out = Path(args.out) if args.out else tmp / "models"
        work = tmp
        args.det_scenes, args.det_epochs, args.det_hours = 2, 1, None
        args.reader_scenes, args.reader_steps = 3, 3
    else:
        out = Path(args.out) if args.out else MODELS
        work = Path(args.work) if args.work else ROOT / "out" / "train"
    if (args.only == "decks" and not args.det_init and not (out / "card_det.pt").exists()
            and not (out / "card_det.int8.onnx").exists()):  # before anything is written
        ap.error(f"--only decks: nothing to start from: no card_det.pt or card_det.int8.onnx in {out} (or --det-init)")
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    report = {}
    if args.only in (None, "det"):
        t0 = time.time()
        n = gen_detector_data(work / "det_data", args.det_scenes, seed0=0)
        report["det_tiles"] = n
        report["det_gen_s"] = round(time.time() - t0, 1)
        t0 = time.time()
        pt = train_detector(work / "det_data", work / "runs", args.det_epochs, args.det_hours, batch=4 if args.smoke else 16, workers=0 if args.smoke else 2,
                            init=Path(args.det_init) if args.det_init else None, name=args.det_name)
        report["det_train_s"] = round(time.time() - t0, 1)
        export_detector(pt, out / "card_det.onnx")
    if args.only in (None, "det", "quantize"):
        t0 = time.time()
        quantize_detector(out / "card_det.onnx", out / "card_det.int8.onnx", n_calib=2 if args.smoke else 32)
        report["det_quantize_s"] = round(time.time() - t0, 1)
    if args.only in (None, "reader"):
        t0 = time.time()
        cache = work / f"crops_v2_{args.reader_scenes}_{CROP_W}x{CROP_H}.npz"
        if cache.exists() and not args.smoke:
            z = np.load(cache)
            X, R, L = z["X"], z["R"], z["L"]
        else:
            X, R, L = gen_crops(args.reader_scenes, seed0=100_000, workers=1 if args.smoke else 2)
            if not args.smoke:
                np.savez(cache, X=X, R=R, L=L)
        report["reader_crops"] = int(len(X))
        report["reader_gen_s"] = round(time.time() - t0, 1)
        t0 = time.time()
        train_reader(X, R, L, args.reader_steps, out / "index_reader.onnx", batch=16 if args.smoke else 64,
                     init=Path(args.reader_init) if args.reader_init else None, lr=args.reader_lr)
        report["reader_train_s"] = round(time.time() - t0, 1)
    if args.only in (None, "reader", "quantize"):
        t0 = time.time()
        quantize_reader(out / "index_reader.onnx", out / "index_reader.int8.onnx", n_scenes=2 if args.smoke else 40)
        report["reader_quantize_s"] = round(time.time() - t0, 1)
    if args.only == "decks" or (args.only is None and not args.smoke):
        # the detector for other decks (used only with the corner reader): the committed detector fine-tuned on
        # scenes in the train font families and on own-face scenes (so it keeps finding the own faces)
        t0 = time.time()
        d = work / "det_decks_data"
        n = sum(gen_plan_part(d, part) for part in decks_tile_plan(args.decks_scenes, args.decks_own,
                                                                     args.decks_suited, args.decks_far))
        report["decks_far"] = args.decks_far
        report["decks_tiles"] = n
        report["decks_suited"] = args.decks_suited
        init = Path(args.det_init) if args.det_init else out / "card_det.pt"
        if not args.det_init and not init.exists():
            # no detector's .pt is committed (session 67): go on from the int8 detector's weights, batch norms
            # unfolded on the recipe's crops (vision.det_recover)
            from vision.det_recover import recover

            init = work / "card_det_recovered.pt"
            if init.exists():
                init.unlink()
            report["det_init"] = recover(out / "card_det.int8.onnx", None, init)
        pt = train_detector(d, work / "runs", 30, args.decks_hours, init=init, name=args.decks_as)
        tmp_out = work / f"{args.decks_as}_export" / f"card_det_{args.decks_as}.onnx"
        tmp_out.parent.mkdir(parents=True, exist_ok=True)
        export_detector(pt, tmp_out)
        quantize_detector(tmp_out, out / f"card_det_{args.decks_as}.int8.onnx")
        report["decks_s"] = round(time.time() - t0, 1)
    if args.only in (None, "corner"):
        from vision.corner import main as corner_main

        t0 = time.time()
        corner_main((["--smoke"] if args.smoke else ["--cards", str(args.corner_cards), "--steps", str(args.corner_steps)])
                    + ["--out", str(out), "--work", str(work)])
        report["corner_s"] = round(time.time() - t0, 1)
        # the middle reader (Scanner.scan step 3 reads a card's middle with it): the corner reader just trained,
        # continued on its cards and as many more whose middles are read as well
        t0 = time.time()
        corner_main((["--smoke", "--middle-cards", "10"] if args.smoke else
                     ["--cards", str(args.corner_cards), "--middle-cards", str(args.middle_cards), "--steps",
                      str(args.middle_steps), "--batch", "128", "--lr", "1e-3"])
                    + ["--init", str(out / "corner_reader.onnx"), "--name", "middle_reader", "--out", str(out), "--work", str(work)])
        report["middle_s"] = round(time.time() - t0, 1)
        # the second reader (step 3 reads an unsure card's corners with it once more): the corner reader continued on
        # a fresh set of training cards (another seed, the same train families)
        t0 = time.time()
        corner_main((["--smoke"] if args.smoke else
                     ["--cards", str(args.corner_cards), "--steps", str(args.second_steps), "--batch", "128", "--lr", "1e-3"])
                    + ["--data-seed", "5", "--init", str(out / "corner_reader.onnx"), "--name", "second_reader",
                       "--out", str(out), "--work", str(work)])
        report["second_s"] = round(time.time() - t0, 1)
    name = args.decks_as if args.only == "decks" else args.only
    (out / f"train_report{'_' + name if name else ''}.json").write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps({"out": str(out), **report}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
