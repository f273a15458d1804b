"""Float weights again for a detector whose float weights were not kept: ``python -m vision.det_recover``.

Only the static int8 ONNX of a detector is committed when its ``.pt`` was not (``card_det_suited.int8.onnx``, session
34: its run's ``last.pt`` stayed in a scratch folder). Training can only go on from a ``.pt`` of the same network, so
the next run had to start again from ``card_det.pt`` and repeat the 1.5 h chain behind that detector.

The int8 file holds every convolution of the network with its batch norm folded in (ultralytics fuses before it
exports): per-channel int8 weights with their scales and an int32 bias (the first convolution and the head's last
ones float). This module reads them back (``(q - zero point) * scale``) into the network of a committed checkpoint of
the same recipe (yolov8n-obb, built from ultralytics' own ``yolov8n-obb.yaml`` as ``vision.train`` builds it, with the
int8 file's class names; or a checkpoint given as ``--base``) and *unfolds* each batch norm so that the network trains
from there:

- a convolution ``W x + b`` becomes ``BN(W x)`` with the batch norm's running mean and variance set to the mean and
  variance of ``W x`` over a batch of the recipe's own frames, its scale to the standard deviation and its shift to
  the mean plus ``b``. In eval mode that is ``W x + b`` exactly (up to float rounding); in train mode, where the
  batch norm normalises with the batch's own statistics, it stays near that function on frames like those (as near
  as a network that was trained stays to its own), so training starts from the detector rather than from a network
  whose every layer was shifted.

The result is written as an ultralytics checkpoint (this network, no optimizer or EMA), so ``python -m vision.train
--only decks --det-init <it>`` goes on from the detector. ``check`` compares the recovered float network's outputs
with the int8 detector's on frames (the float and int8 networks differ by the activation quantization only).

Since session 67 no detector's ``.pt`` is committed (models/ must stay under 20 MB): the comparison backends
(``ort-fp32``, ``cv2``, ``ultralytics``) run the network recovered from the int8 file (``recovered_checkpoint``; batch
norms folded, so the same function as the int8 file's weights in float), and a training run that goes on from a
committed detector starts from ``recover``.

``average A.pt B.pt OUT.pt --weight W [--int8 OUT.int8.onnx]`` writes ``(1 - W) x A + W x B`` entry by entry (a run
continued from a recovered detector averaged with its start, as sessions 66-68 did; the model card), and with
``--int8`` exports and quantizes it by the recipe's own code.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

from vision.detect import DET_H, DET_W

MODELS = Path(__file__).resolve().parent.parent / "models"


class RecoverError(ValueError):
    """The int8 file and the base checkpoint do not describe the same network, or one is no such file."""


def _load_model(pt: Path, ema: bool = False):
    """The network of an ultralytics checkpoint (float; ``ema``: its EMA when it has one, as ultralytics exports it),
    or RecoverError."""
    import torch

    try:
        ck = torch.load(str(pt), map_location="cpu", weights_only=False)
        return ck, (ck["ema"] if ema and ck.get("ema") is not None else ck["model"]).float()
    except Exception as e:  # no checkpoint (a text file, a state dict, a truncated file): one line
        raise RecoverError(f"{pt.name}: not an ultralytics checkpoint ({type(e).__name__})") from None


def base_network(int8_onnx: Path):
    """The recipe's network for ``int8_onnx``: ``yolov8n-obb.yaml`` (shipped inside ultralytics; no weights are
    downloaded) as ``vision.train`` builds it, with the class names the exporter wrote into the file, in a checkpoint
    dict of ultralytics' layout. RecoverError for a file that is no ONNX model or no exported YOLOv8n-OBB detector."""
    import ast
    import datetime

    import onnx
    import ultralytics
    from ultralytics.nn.tasks import OBBModel

    try:
        meta = {p.key: p.value for p in onnx.load(str(int8_onnx), load_external_data=False).metadata_props}
    except Exception as e:
        raise RecoverError(f"{int8_onnx.name}: not an ONNX model ({type(e).__name__})") from None
    if meta.get("task") != "obb" or "YOLOv8n-obb" not in meta.get("description", ""):
        raise RecoverError(f"{int8_onnx.name}: no exported YOLOv8n-OBB detector (its metadata name no such network)")
    try:
        names = ast.literal_eval(meta.get("names", ""))
        assert isinstance(names, dict) and names and all(isinstance(k, int) and isinstance(v, str) for k, v in names.items())
        assert sorted(names) == list(range(len(names)))
    except Exception:
        raise RecoverError(f"{int8_onnx.name}: its class names are not a list the exporter writes") from None
    from ultralytics.nn.tasks import yaml_model_load

    cfg = yaml_model_load("yolov8n-obb.yaml")  # the yaml's own nc is 80: set here, so nothing is logged
    cfg["nc"] = len(names)
    model = OBBModel(cfg, verbose=False)
    model.names = names
    train_args = {"task": "obb", "mode": "train", "model": "yolov8n-obb.yaml", "imgsz": 320, "fliplr": 0.0}
    ck = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(), "version": ultralytics.__version__,
          "model": model, "train_args": train_args}
    return ck, model


def int8_conv_weights(onnx_path: Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """``{"model.1.conv": (weight, bias)}`` in float32 for every convolution of a QDQ int8 ONNX detector (weights
    dequantized per channel, the int32 bias by its scale; float ones as stored)."""
    from vision.corner import onnx_float_values

    try:
        m, vals = onnx_float_values(onnx_path)
    except Exception as e:  # a file that is no ONNX model: one line, not a traceback
        raise RecoverError(f"{onnx_path.name}: not an ONNX model ({type(e).__name__})") from None
    out = {}
    for n in m.graph.node:
        if n.op_type != "Conv":
            continue
        name = n.input[1]
        for suffix in ("_DequantizeLinear_Output", ".weight"):
            name = name.replace(suffix, "")
        w = vals.get(n.input[1])
        b = vals.get(n.input[2]) if len(n.input) > 2 else None
        if w is None:
            raise RecoverError(f"convolution {n.name}: weights not found in the file")
        out[name] = (np.asarray(w, np.float32), None if b is None else np.asarray(b, np.float32))
    return out


def _frames(n: int, seed0: int, size: int) -> np.ndarray:
    """``n`` training-recipe crops (train font families' suited and Pirate's Bluff scenes), ``size`` square (at most
    the halved frame's height, 360: the recipe's tiles are 320), RGB 0..1, as the trainer feeds them."""
    import cv2

    from vision.fonts import split_fonts
    from vision.synth.scene import make_scene
    from vision.synth.suited import LAYOUTS as SUITED_LAYOUTS
    from vision.synth.suited import make_deck_scene
    from vision.synth.surfaces import TRAIN_SURFACES
    from vision.train import LAYOUTS

    fonts = split_fonts("train")
    rng = np.random.default_rng(seed0)
    out = []
    for k in range(n):
        s = seed0 + k
        if k % 3 == 0:
            sc = make_scene(s, LAYOUTS[s % len(LAYOUTS)], TRAIN_SURFACES, fonts=fonts)
        else:
            deck = ("standard52", "island54")[k % 2]
            sc = make_deck_scene(s, deck, SUITED_LAYOUTS[s % len(SUITED_LAYOUTS)], TRAIN_SURFACES, fonts=fonts)
        small = cv2.resize(sc.image, None, fx=0.5, fy=0.5, interpolation=cv2.INTER_AREA)
        H, W = small.shape[:2]
        y0, x0 = int(rng.integers(0, H - size + 1)), int(rng.integers(0, W - size + 1))
        tile = small[y0:y0 + size, x0:x0 + size]
        out.append(tile[:, :, ::-1].transpose(2, 0, 1).astype(np.float32) / 255.0)
    return np.stack(out)


def recover(int8_onnx: Path, base_pt: Path | None, out_pt: Path, frames: int = 96, seed0: int = 2_400_000,
            size: int = 320) -> dict:
    """Write ``out_pt``: the recipe's network (``base_network``; or ``base_pt``'s) with ``int8_onnx``'s weights,
    batch norms unfolded on ``frames`` recipe crops (``frames=0``: left folded, each an identity plus the bias, the
    same function in eval mode, for the comparison backends that only run it). Returns a small report."""
    import torch
    import torch.nn as nn

    weights = int8_conv_weights(int8_onnx)
    ck, model = _load_model(base_pt) if base_pt is not None else base_network(int8_onnx)
    model = copy.deepcopy(model).eval()
    convs = {n: m for n, m in model.named_modules() if isinstance(m, nn.Conv2d)}
    parents = {n: m for n, m in model.named_modules() if hasattr(m, "conv") and hasattr(m, "bn")}
    used, bn_of = set(), {}
    for name, conv in convs.items():
        if name.endswith("dfl.conv"):
            continue  # the box decoding's fixed 0..15 bins (the int8 file computes them as a MatMul)
        parent = name[: -len(".conv")] if name.endswith(".conv") else None
        key = name  # the exporter's weight names are the convolutions' (each batch norm folded into its own)
        if key not in weights:
            raise RecoverError(f"{int8_onnx.name}: no weights for {name}")
        w, b = weights[key]
        if tuple(w.shape) != tuple(conv.weight.shape):
            raise RecoverError(f"{int8_onnx.name}: {name} is {tuple(w.shape)}, the base network's {tuple(conv.weight.shape)}")
        used.add(key)
        with torch.no_grad():
            conv.weight.copy_(torch.from_numpy(w.copy()))
            b = np.zeros(w.shape[0], np.float32) if b is None else b
            if parent in parents:
                bn = parents[parent].bn
                bn_of[key] = (conv, bn, torch.from_numpy(b.copy()))
                # identity for now: eval-mode BN(x) = x + b
                bn.running_mean.zero_()
                bn.running_var.fill_(1.0 - bn.eps)
                bn.weight.fill_(1.0)
                bn.bias.copy_(torch.from_numpy(b.copy()))
            else:
                conv.bias.copy_(torch.from_numpy(b.copy()))
    unused = sorted(set(weights) - used)
    if unused:
        raise RecoverError(f"{int8_onnx.name}: weights the base network has no place for: {', '.join(unused[:4])}")
    # the batch norms unfolded on the statistics of W x over recipe crops (one pass: each layer's function is already
    # the detector's, so the statistics upstream do not move when a layer is unfolded)
    stats, hooks = {}, []
    for key, (conv, _bn, _b) in bn_of.items():
        def hook(_m, _inp, out, key=key):
            o = out.detach().double()
            s = stats.setdefault(key, [0.0, 0.0, 0])
            s[0] = s[0] + o.sum(dim=(0, 2, 3))
            s[1] = s[1] + (o * o).sum(dim=(0, 2, 3))
            s[2] += o.shape[0] * o.shape[2] * o.shape[3]
        hooks.append(conv.register_forward_hook(hook))
    X = torch.from_numpy(_frames(frames, seed0, size)) if frames else torch.zeros(0)
    with torch.no_grad():
        for i in range(0, len(X), 8):
            model(X[i:i + 8])
    for h in hooks:
        h.remove()
    with torch.no_grad():
        for key, (conv, bn, b) in bn_of.items() if frames else ():
            s1, s2, n = stats[key]
            mean = s1 / n
            var = (s2 / n - mean * mean).clamp_min(1e-6)
            std = (var + bn.eps).sqrt()
            bn.running_mean.copy_(mean.float())
            bn.running_var.copy_(var.float())
            bn.weight.copy_(std.float())
            bn.bias.copy_((mean + b.double()).float())
    ck = dict(ck)
    ck.update(model=copy.deepcopy(model).half(), ema=None, updates=None, optimizer=None, epoch=-1, best_fitness=None)
    ck["train_args"] = dict(ck.get("train_args") or {})
    how = f"batch norms unfolded on {frames} crops" if frames else "batch norms folded"
    ck["recovered_from"] = f"{int8_onnx.name} (vision.det_recover: int8 weights, {how})"
    out_pt.parent.mkdir(parents=True, exist_ok=True)
    part = out_pt.with_name(out_pt.name + ".part")
    torch.save(ck, str(part))
    part.replace(out_pt)  # whole or not at all
    return {"convolutions": len(used), "batch_norms_unfolded": len(bn_of) if frames else 0, "frames": frames,
            "out": str(out_pt)}


def recovered_checkpoint(int8_onnx: Path, cache: Path) -> Path:
    """The float network of ``int8_onnx`` as an ultralytics checkpoint for the comparison backends, recovered once
    (batch norms folded; 0.25 s measured once torch is loaded) into ``cache`` under a name that carries the int8
    file's hash, so a retrained detector never meets a stale recovery. Written whole or not at all (two processes
    may recover at once)."""
    import hashlib
    import os

    digest = hashlib.sha256(Path(int8_onnx).read_bytes()).hexdigest()[:16]
    cached = cache / f"{Path(int8_onnx).name.split('.')[0]}-{digest}.recovered.pt"
    if not cached.exists():
        cache.mkdir(parents=True, exist_ok=True)
        tmp = cache / f"{cached.name}.{os.getpid()}.pt"  # this process's own: recover writes it whole (.part first)
        try:
            recover(Path(int8_onnx), None, tmp, frames=0)
            os.replace(tmp, cached)
        finally:
            if tmp.exists():
                tmp.unlink()
    return cached


def average(a_pt: Path, b_pt: Path, out_pt: Path, weight: float, int8_out: Path | None = None) -> dict:
    """Write ``out_pt``: the weight average ``(1 - weight) x a + weight x b`` of two checkpoints of one network (every
    floating-point entry of the state dict, batch-norm statistics too; the others are ``b``'s), as an ultralytics
    checkpoint that ``--det-init`` goes on from; with ``int8_out`` also exported and quantized by the recipe's own code
    (``vision.train.export_detector``, ``quantize_detector``). Each checkpoint's EMA is taken when it has one, as
    ultralytics exports it. Sessions 66-68 averaged a continued detector with its start this way (the model card)."""
    import torch

    _, ma = _load_model(a_pt, ema=True)
    ckb, mb = _load_model(b_pt, ema=True)
    sa, sb = ma.state_dict(), mb.state_dict()
    if sa.keys() != sb.keys() or any(sa[k].shape != sb[k].shape for k in sa):
        raise RecoverError(f"{a_pt.name} and {b_pt.name} are not the same network")
    avg = {k: (1 - weight) * sa[k] + weight * sb[k] if sa[k].dtype.is_floating_point else sb[k] for k in sa}
    model = copy.deepcopy(mb).float()
    model.load_state_dict(avg)
    ck = dict(ckb)
    ck.update(model=model.half(), ema=None, optimizer=None, updates=None)
    ck["averaged_from"] = f"(1 - {weight}) x {a_pt.name} + {weight} x {b_pt.name} (vision.det_recover average)"
    out_pt.parent.mkdir(parents=True, exist_ok=True)
    part = out_pt.with_name(out_pt.name + ".part")
    torch.save(ck, str(part))
    part.replace(out_pt)  # whole or not at all
    report = {"entries": len(avg), "weight": weight, "out": str(out_pt)}
    if int8_out is not None:
        report["int8"] = str(int8_detector(out_pt, int8_out))
    return report


def int8_detector(pt: Path, int8_out: Path) -> Path:
    """``pt`` exported and quantized by the recipe's own code (``vision.train.export_detector``,
    ``quantize_detector``) into ``int8_out``, written whole or not at all."""
    import tempfile

    from vision.train import export_detector, quantize_detector

    with tempfile.TemporaryDirectory() as tmp:
        onnx = export_detector(pt, Path(tmp) / "card_det_export.onnx", keep_pt=False)
        part = int8_out.with_name(int8_out.name + ".part.onnx")
        try:
            quantize_detector(onnx, part)
            part.replace(int8_out)
        finally:
            part.unlink(missing_ok=True)
    return int8_out


def compare(pt: Path, int8_onnx: Path, scenes: int = 6, seed0: int = 12_900_000) -> dict:
    """The recovered network (float, torch, eval) against the int8 detector on ``scenes`` letterboxed suited scenes:
    the card and index score channels' largest absolute difference and their correlation, and how many anchors
    over 0.5 each has and both have."""
    from vision.ortsession import session as ort_session
    import torch

    from vision.detect import letterbox
    from vision.fonts import split_fonts
    from vision.synth.suited import LAYOUTS as SUITED_LAYOUTS
    from vision.synth.suited import make_deck_scene

    model = _load_model(pt)[1].eval()
    try:
        sess = ort_session(int8_onnx, spin=True)
    except Exception as e:
        raise RecoverError(f"{int8_onnx.name}: not an ONNX model ({type(e).__name__})") from None
    fonts = split_fonts("calibration")
    diffs, a_all, b_all = [], [], []
    for k in range(scenes):
        deck = ("standard52", "island54")[k % 2]
        sc = make_deck_scene(seed0 + k, deck, SUITED_LAYOUTS[k % len(SUITED_LAYOUTS)], fonts=fonts)
        canvas, _ = letterbox(sc.image, (DET_W, DET_H))
        x = canvas[:, :, ::-1].transpose(2, 0, 1)[None].astype(np.float32) / 255.0
        q = sess.run(None, {sess.get_inputs()[0].name: x})[0]
        with torch.no_grad():
            f = model(torch.from_numpy(x))
        f = (f[0] if isinstance(f, (list, tuple)) else f).numpy()
        qs, fs = q[0, 4:6], f[0, 4:6]
        diffs.append(float(np.abs(qs - fs).max()))
        a_all.append(qs.ravel())
        b_all.append(fs.ravel())
    a, b = np.concatenate(a_all), np.concatenate(b_all)
    return {"scenes": scenes, "max_score_diff": round(max(diffs), 4), "score_corr": round(float(np.corrcoef(a, b)[0, 1]), 5),
            "over_half_int8": int((a > 0.5).sum()), "over_half_float": int((b > 0.5).sum()),
            "over_half_both": int(((a > 0.5) & (b > 0.5)).sum())}


def main(argv=None) -> int:
    from companion.inputs import OneLineParser, cli_float, cli_int

    ap = OneLineParser(prog="python -m vision.det_recover", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("recover", help="write a trainable .pt from an int8 detector")
    r.add_argument("int8", help="the int8 ONNX detector (e.g. models/card_det_suited.int8.onnx)")
    r.add_argument("out", help="the .pt to write")
    r.add_argument("--base", default=None, help="a checkpoint of the same network (default: the recipe's yolov8n-obb.yaml "
                   "network with the int8 file's class names)")
    r.add_argument("--frames", type=cli_int(8, 4096), default=96)
    c = sub.add_parser("check", help="compare a recovered .pt with the int8 detector")
    c.add_argument("pt")
    c.add_argument("int8")
    c.add_argument("--scenes", type=cli_int(1, 1000), default=6)
    v = sub.add_parser("average", help="(1 - W) x A + W x B of two checkpoints of one network")
    v.add_argument("a", help="checkpoint A (e.g. a recovered committed detector)")
    v.add_argument("b", help="checkpoint B (e.g. a run continued from A)")
    v.add_argument("out", help="the .pt to write")
    v.add_argument("--weight", type=cli_float(0.0, 1.0), required=True, help="B's share W, 0 to 1")
    v.add_argument("--int8", default=None, help="also export and quantize it to this int8 ONNX file")
    a = ap.parse_args(argv)
    if a.cmd == "recover":
        ins, outs = (a.int8, a.base), (a.out,)
    elif a.cmd == "check":
        ins, outs = (a.pt, a.int8), ()
    else:
        ins, outs = (a.a, a.b), (a.out, a.int8)
    for p in ins:
        if p is not None and not Path(p).is_file():
            ap.error(f"no such file: {p}")
    for p in outs:
        if p is not None and Path(p).exists():
            ap.error(f"exists already (nothing written): {p}")
    try:
        if a.cmd == "recover":
            print(recover(Path(a.int8), Path(a.base) if a.base else None, Path(a.out), a.frames))
        elif a.cmd == "average":
            print(average(Path(a.a), Path(a.b), Path(a.out), a.weight, Path(a.int8) if a.int8 else None))
        else:
            print(compare(Path(a.pt), Path(a.int8), a.scenes))
    except RecoverError as e:
        ap.error(str(e))
    return 0


if __name__ == "__main__":
    sys.exit(main())
