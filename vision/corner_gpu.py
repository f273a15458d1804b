"""The corner reader trained on a lent GPU machine, time-boxed (``python -m vision.corner_gpu``).

A lent machine has 16 cores and a GPU but none of the Debian font packages, and it can take only 64 MiB along.
So the work goes in two steps:

1. here: ``python -m vision.corner_gpu pack DIR`` writes the train split's font files (``vision.fonts``) cut down
   to the glyphs a face draws from them (``vision.fonts.NEEDED``, fontTools' subsetter: 590 files, about 5 MB) and
   ``fonts.json``, the (family, files) list in the split's order. The cut-down files draw the same glyph outlines;
   FreeType's hinting can place a glyph a pixel apart (about 1 in 7 glyph tiles differ at 80 px), which a camera's
   blur and warp wash out. The calibration and held-out families never travel.
2. there: ``python -m vision.corner_gpu train DIR OUT`` makes fresh train-split cards with every core
   (``vision.corner._crops_chunk``, chunks of 500 cards, chunk k of data seed s seeded s * 1000 + k, as
   ``gen_corner_crops`` does) until ``--gen-seconds`` have passed, keeps the chunks made in order (so the set is
   ``gen_corner_crops(cards, s)``'s, whatever the machine's speed; ``--lower-share``: the share of them drawing
   their letter small, ``vision.corner.LOWER_SHARE`` unless given), then continues each reader named in ``--nets``
   from ``--init`` on the GPU (``vision.corner.train``, device "cuda") for as many steps as fit its share of
   ``--train-seconds`` (timed on a short run first). It writes each net's state dict and a recipe JSON with the
   cards, steps and seconds it came to; ``python -m vision.corner_gpu finish`` here then fits the temperature
   on the calibration split, exports and quantizes, as ``vision.corner`` does, into the corner reader's or the
   second reader's place (``--name``); the figures of the reader it replaces are kept in its JSON (``previous``).

Everything runs on a CPU too (``--device cpu``), only slower.

3. here, optionally: ``python -m vision.corner_gpu average OUT.pt READER READER ...`` averages readers of one line of
   training ("go on here, then average", session 59: the committed corner reader is such an average) into a state
   dict and recipe that ``finish`` takes.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def pack(dest: Path, families: int | None = None, chars: str | None = None) -> dict:
    """The train split's fonts cut down (the first ``families`` of them: tests) into ``dest``, each to the glyphs of
    ``chars`` (default: what a Pirate's Bluff face draws, ``NEEDED`` and ``LOWER``)."""
    from fontTools import subset

    from vision.fonts import LOWER, NEEDED, split_fonts

    fonts_dir = dest / "fonts"
    fonts_dir.mkdir(parents=True, exist_ok=True)
    listing = []
    for fi, (fam, files) in enumerate(split_fonts("train")[:families]):
        out = []
        for k, f in enumerate(files):
            o = fonts_dir / f"{fi:03d}_{k:02d}{Path(f).suffix.lower()}"
            for drop in ((), ("gasp",)):  # one file's 'gasp' table (grid-fitting ranges) is malformed: retry without it
                opt = subset.Options()
                opt.notdef_outline = True
                opt.name_IDs = ["*"]
                opt.drop_tables += list(drop)
                font = subset.load_font(f, opt)
                sub = subset.Subsetter(opt)
                sub.populate(text=NEEDED + LOWER if chars is None else chars)
                try:
                    sub.subset(font)
                except AssertionError:
                    if drop:
                        raise
                    continue
                subset.save_font(font, str(o), opt)
                break
            out.append(o.name)
        listing.append([fam, out])
    (dest / "fonts.json").write_text(json.dumps(listing, indent=0) + "\n")
    return {"families": len(listing), "files": sum(len(f) for _, f in listing),
            "bytes": sum(p.stat().st_size for p in fonts_dir.iterdir())}


def _packed_fonts(pack_dir: Path):
    listing = json.loads((pack_dir / "fonts.json").read_text())
    return tuple((fam, tuple(str(pack_dir / "fonts" / f) for f in files)) for fam, files in listing)


def gpu_torch(device: str):
    """torch, imported for a run on ``device``. NVML is asked whether there is a GPU (not CUDA started), so the
    workers started after this do not inherit a started CUDA. ValueError where cuda is asked for and there is none."""
    import os

    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    import torch

    if device == "cuda" and not torch.cuda.is_available():
        raise ValueError("cuda: no GPU here (--device cpu)")
    return torch


def start_run(parser, module: str, pack_dir: Path, out: Path, device: str):
    """A ``train`` command's checks of its pack, out folder and device, each refused in one line by ``parser``
    before anything is written; then torch (``gpu_torch``)."""
    if not (pack_dir / "fonts.json").is_file():
        parser.error(f"argument pack: no fonts.json (python -m {module} pack): {pack_dir}")
    if out.exists() and not out.is_dir():
        parser.error(f"argument out: not a folder: {out}")
    try:
        return gpu_torch(device)
    except ValueError as e:
        parser.error(f"argument --device: {e}")


def recipe_parser(module: str, doc: str):
    """A GPU recipe's command line (``python -m module``): (parser, subparsers, pack, train), with what every recipe's
    ``pack`` (DEST, ``--families``) and ``train`` (PACK OUT) take; the caller adds the rest."""
    from companion.inputs import OneLineParser, cli_int

    ap = OneLineParser(prog=f"python -m {module}", description=doc.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("pack")
    p.add_argument("dest")
    p.add_argument("--families", type=cli_int(1), default=None, help="only the first this many (tests)")
    t = sub.add_parser("train")
    t.add_argument("pack")
    t.add_argument("out")
    return ap, sub, p, t


def _worker_init():
    import cv2

    cv2.setNumThreads(1)


def use_packed_fonts(pack_dir: Path) -> None:
    """From now on this process's ``vision.fonts.split_fonts("train")`` is the pack's fonts (the only split that
    travels; callers look it up at call time)."""
    import vision.fonts

    fonts = _packed_fonts(pack_dir)

    def split_fonts(split: str):
        if split != "train":
            raise ValueError(f"only the train split travels, not {split}")
        return fonts

    vision.fonts.split_fonts = split_fonts


def module_settings(names: dict) -> dict:
    """This process's values of the named module globals (``{module: (name, ...)}``), as ``spawn_pool`` takes them:
    what a recipe set here before its workers start (a spawned worker imports its modules afresh)."""
    import importlib

    return {m: {n: getattr(importlib.import_module(m), n) for n in ns} for m, ns in names.items()}


def _spawned_init(pack_dir: str, settings: dict) -> None:
    import importlib

    _worker_init()
    use_packed_fonts(Path(pack_dir))
    for m, values in settings.items():
        mod = importlib.import_module(m)
        for n, v in values.items():
            if not hasattr(mod, n):
                raise AttributeError(f"{m} has no {n} to set")
            setattr(mod, n, v)


def spawn_pool(pack_dir: Path, workers: int, settings: dict | None = None):
    """A pool of ``workers`` spawned processes whose train split is the pack's fonts (each loads them in its
    initializer) and whose module globals are ``settings`` (``module_settings``). Spawned, not forked: a process that
    has run torch or onnxruntime holds thread pools whose locks a forked child can inherit locked (forked tile workers
    hung in the full test run, session 69), so every recipe's pool is spawned (session 71)."""
    import multiprocessing as mp

    return mp.get_context("spawn").Pool(workers, initializer=_spawned_init, initargs=(str(pack_dir), settings or {}))


WORKER_SETTINGS = {"vision.corner": ("LOWER_SHARE", "RESHAPE_SHARE", "FOCUS_RANKS", "FOCUS_LETTERS", "FOCUS_SHARE")}
"""What ``train`` sets before its ``Generator`` starts and the workers' cards follow."""


class Generator:
    """Fresh train-split cards (the packed fonts) made by a pool of ``workers`` in the background, in chunks of 500
    kept in order (so any prefix is ``gen_corner_crops(cards, data_seed)``'s set): ``take()`` gives the crops made
    so far while the pool goes on, ``stop()`` ends it."""

    def __init__(self, pack_dir: Path, workers: int, data_seed: int, log=print, max_cards: int = 4_000_000):
        import threading

        from vision.corner import _crops_chunk

        self.parts: list = []
        self.t0 = time.time()
        self.pool = spawn_pool(pack_dir, workers, module_settings(WORKER_SETTINGS))
        chunks = [(data_seed * 1000 + k, 500, "train", False) for k in range(max_cards // 500)]
        it = self.pool.imap(_crops_chunk, chunks)  # in order: the parts kept are always chunks 0..k
        self.error = None

        def pull():
            try:
                for part in it:
                    self.parts.append(part)
                    if len(self.parts) % 40 == 0:
                        log(f"cards {len(self.parts) * 500} ({time.time() - self.t0:.0f}s)")
            except Exception as e:  # the pool ended (stop) or a worker failed
                self.error = e

        self.thread = threading.Thread(target=pull, daemon=True)
        self.thread.start()

    def take(self):
        """The crops made so far (waits for the first chunk): (C, R, L, cards)."""
        while not self.parts and self.error is None and self.thread.is_alive():
            time.sleep(0.2)
        parts = list(self.parts)
        if not parts:
            raise RuntimeError(f"no cards made ({self.error!r})")
        return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]), len(parts) * 500)

    def stop(self):
        self.pool.terminate()
        self.pool.join()


def train_boxed(X, R, L, seconds: float, init: Path, extra: int, batch: int, lr: float, device: str, log=print,
                probe_steps: int = 300, min_steps: int = 1000):
    """``vision.corner.train`` for as many steps as fit in ``seconds`` (timed on a ``probe_steps`` run first,
    at least ``min_steps``)."""
    from vision.corner import train

    train(X, R, L, min(30, probe_steps), None, batch=batch, lr=lr, init=init, net_kw={"extra": extra}, device=device,
          log=lambda *a: None)  # the device's start-up (CUDA, cuDNN's choices) out of the timing
    t0 = time.time()
    train(X, R, L, probe_steps, None, batch=batch, lr=lr, init=init, net_kw={"extra": extra}, device=device,
          log=lambda *a: None)
    probe = time.time() - t0
    steps = max(min_steps, int((seconds - probe) / (probe / probe_steps) * 0.9))
    log(f"extra={extra}: {probe_steps} steps in {probe:.1f}s -> {steps} steps")
    t0 = time.time()
    net = train(X, R, L, steps, None, batch=batch, lr=lr, init=init, net_kw={"extra": extra}, device=device,
                log=log)
    return net, steps, time.time() - t0


class StateError(ValueError):
    """A state dict or its recipe that ``finish`` cannot use."""


def _folded(path: Path, scratch: Path):
    """A reader as ``make_net`` with every BatchNorm folded into its convolution and its heads times its temperature
    (``vision.corner.load_onnx_weights``): an exported ``.onnx`` (its report beside it gives the temperature), or a
    state dict written by ``train`` (raw heads; exported to ``scratch`` first, an .onnx path, so both kinds are
    averaged in one form)."""
    import warnings

    import torch

    from vision.corner import export, load_onnx_weights, make_net, reader_extra

    extra = reader_extra(path)
    net = make_net(extra=extra)
    if path.suffix == ".onnx":
        load_onnx_weights(net, path)
        return net, extra
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raw = make_net(extra=extra)
        raw.load_state_dict(torch.load(str(path), map_location="cpu"))
    raw.eval()
    export(raw, scratch)  # no report beside it: temperature 1, the heads as train left them
    load_onnx_weights(net, scratch)
    return net, extra


def average(out: Path, readers: list[Path], data_seed: int | None = None) -> dict:
    """The equal-weight parameter average of corner readers of one line of training (each went on from the one
    before, so they share a start): each folded with its heads times its temperature (``_folded``), averaged
    parameter by parameter; written as ``out`` (a state dict) and its recipe ``out`` .json, which ``finish``
    takes. ``data_seed`` (the recipe's, for ``finish``'s int8 ranges): given, or the first state dict's recipe's.
    Everything is checked before anything is written: ValueError (one line) for fewer than two readers, a file that
    is no corner reader, readers of different depths, a weight that is not finite, or no data seed."""
    import tempfile

    import torch

    if len(readers) < 2:
        raise ValueError("an average needs at least two readers")
    nets, parts, extras = [], [], set()
    with tempfile.TemporaryDirectory() as work:
        for i, path in enumerate(readers):
            if not path.is_file():
                raise ValueError(f"{path}: no such file")
            if path.suffix not in (".onnx", ".pt"):
                raise ValueError(f"{path}: not a reader (.onnx, or a state dict .pt written by train)")
            try:
                net, extra = _folded(path, Path(work) / f"{i}.onnx")
            except Exception as e:  # a broken or foreign file: its one line
                raise ValueError(f"{path}: not a corner reader ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})") from None
            sd = net.state_dict()
            bad = [k for k, v in sd.items() if v.dtype.is_floating_point and not bool(torch.isfinite(v).all())]
            if bad:
                raise ValueError(f"{path}: {bad[0]} holds a value that is not finite")
            nets.append(sd)
            extras.add(extra)
            rec = path.with_suffix(".json")
            if data_seed is None and path.suffix == ".pt" and rec.is_file():
                try:
                    data_seed = int(json.loads(rec.read_text())["data_seed"])
                except (ValueError, KeyError, TypeError):
                    pass
            parts.append(str(path))
    if len(extras) > 1:
        raise ValueError(f"the readers differ in depth ({sorted(extras)} extra convolutions per small scale)")
    if data_seed is None:
        raise ValueError("no data seed: give --data-seed (no state dict's recipe names one)")
    avg = {k: (sum(sd[k] for sd in nets) / len(nets) if v.dtype.is_floating_point else v) for k, v in nets[0].items()}
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(avg, str(out))
    rec = {"name": out.stem, "data_seed": data_seed, "extra": extras.pop(), "average_of": parts,
           "how": "equal-weight parameter average, BatchNorm folded, heads times each reader's temperature"}
    out.with_suffix(".json").write_text(json.dumps(rec, indent=1) + "\n")
    return rec


def finish(state: Path, name: str, calib_cards: int = 3000, workers: int = 2, out: Path | None = None) -> dict:
    """Here: temperature on the calibration split, ONNX, int8 (as ``vision.corner.main`` does) for a state dict
    made by ``train``; writes <out>/<name>.{onnx,int8.onnx,json} (out: models/)."""
    import warnings

    import torch

    from vision.corner import (calibrated_int8, evaluate_crops, export, gen_corner_crops, make_net, normalize,
                               reader_extra)

    try:  # before anything is written
        rec = json.loads(state.with_suffix(".json").read_text())
        int(rec["data_seed"])
        with warnings.catch_warnings():  # torch's warning about a bad file: the one error line says it
            warnings.simplefilter("ignore")
            net = make_net(extra=reader_extra(state))
            net.load_state_dict(torch.load(str(state)))
    except Exception as e:
        raise StateError(f"{state}: not a state dict and recipe written by train ({type(e).__name__})") from e
    net.eval()
    out = ROOT / "models" if out is None else Path(out)
    previous = None
    try:  # the reader this one replaces: its figures kept beside the new ones (without its reliability table)
        old = json.loads((out / f"{name}.json").read_text())
        previous = {k: ({x: y for x, y in v.items() if x != "reliability"} if isinstance(v, dict) else v)
                    for k, v in old.items() if k != "previous"}
    except (OSError, ValueError, AttributeError):
        pass
    onnx_path = out / f"{name}.onnx"
    export(net, onnx_path)
    Cc, Rc, Lc = gen_corner_crops(calib_cards, seed=2, split="calibration", workers=workers)
    Xc = normalize(Cc)
    # the int8 ranges: fresh train-split crops of the run's data seed, made here
    Cq, _Rq, _Lq = gen_corner_crops(512, seed=rec["data_seed"], split="train", workers=workers)
    rep = {"recipe": rec, **calibrated_int8(net, onnx_path, out / f"{name}.int8.onnx", Xc, Rc, Lc, normalize(Cq))}
    rep["calibration"] = evaluate_crops(onnx_path, Xc, Rc, Lc)
    rep["calibration_int8"] = evaluate_crops(out / f"{name}.int8.onnx", Xc, Rc, Lc)
    if previous is not None:
        rep["previous"] = previous
    (out / f"{name}.json").write_text(json.dumps(rep, indent=1) + "\n")
    (out / f"{name}.pt").unlink(missing_ok=True)
    return rep


def main(argv=None) -> int:
    from companion.inputs import cli_float, cli_int

    ap, sub, p, t = recipe_parser("vision.corner_gpu", __doc__)
    t.add_argument("--gen-seconds", type=cli_float(1, 3600), default=240.0)
    t.add_argument("--train-seconds", type=cli_float(1, 3600), default=200.0)
    t.add_argument("--workers", type=cli_int(1, 256), default=15)
    t.add_argument("--data-seed", type=cli_int(5), default=7)
    t.add_argument("--nets", default="0:0.45,2:0.55", help="extra:share of --train-seconds, comma separated")
    t.add_argument("--batch", type=cli_int(1, 65536), default=256)
    t.add_argument("--lr", type=cli_float(0, 1, lo_open=True), default=1.5e-3)
    t.add_argument("--init", default=str(ROOT / "models" / "corner_reader.onnx"))
    t.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    t.add_argument("--probe-steps", type=cli_int(1), default=300, help="the timing run's steps")
    t.add_argument("--min-steps", type=cli_int(1), default=1000)
    t.add_argument("--lower-share", type=cli_float(0, 1), default=None,
                   help="the share of cards drawing their letter small (default vision.corner.LOWER_SHARE)")
    t.add_argument("--reshape-share", type=cli_float(0, 1), default=None,
                   help="the share of cards with their glyphs redrawn (default vision.corner.RESHAPE_SHARE)")
    t.add_argument("--focus-ranks", default=None, metavar="R,R,...", help="ranks (0-8) that --focus-share of the "
                   "cards draw their rank from: ranks the reader confuses (session 61: 0,8,3,2)")
    t.add_argument("--focus-letters", default=None, metavar="L,L,...", help="letters (A-H) that --focus-share of the "
                   "cards draw their letter from, independently of the rank (session 61: A,H)")
    t.add_argument("--focus-share", type=cli_float(0, 1, lo_open=True), default=None,
                   help="with --focus-ranks / --focus-letters (default vision.corner.FOCUS_SHARE, 0.3)")
    v = sub.add_parser("average", help="average readers of one line of training into a state dict for finish")
    v.add_argument("out", help="the state dict to write (.pt; its recipe .json beside it)")
    v.add_argument("readers", nargs="+", help="exported readers (.onnx, their report .json beside them) or state "
                   "dicts written by train (.pt, their recipe beside them)")
    v.add_argument("--data-seed", type=cli_int(0), default=None, help="the recipe's data seed (default: the first "
                   "state dict's)")
    f = sub.add_parser("finish")
    f.add_argument("state", help="a state dict (.pt) written by train, its recipe .json beside it")
    f.add_argument("--name", required=True, choices=("corner_reader", "second_reader"),
                   help="the reader's place: corner_reader (every card's first views; a deck taught to the one "
                   "it replaces must be taught again) or second_reader (step 3's second opinion)")
    f.add_argument("--out", default=None, help="default models/")
    f.add_argument("--calib-cards", type=cli_int(1), default=3000, help="calibration-split cards (4 crops each)")
    a = ap.parse_args(argv)
    if a.cmd == "pack":
        if Path(a.dest).exists() and not Path(a.dest).is_dir():
            p.error(f"argument dest: not a folder: {a.dest}")
        print(json.dumps(pack(Path(a.dest), a.families)))
        return 0
    if a.cmd == "average":
        out = Path(a.out)
        if out.suffix != ".pt":
            v.error(f"argument out: the file name must end in .pt: {a.out}")
        if out.exists() or out.with_suffix(".json").exists():
            v.error(f"argument out: already there (nothing is overwritten): {a.out}")
        if not out.parent.is_dir():
            v.error(f"argument out: folder does not exist: {out.parent}")
        try:
            rec = average(out, [Path(r) for r in a.readers], a.data_seed)
        except ValueError as e:
            v.error(f"argument readers: {e}")
        print(json.dumps(rec))
        return 0
    if a.cmd == "finish":
        state = Path(a.state)
        if not state.is_file() or not state.with_suffix(".json").is_file():
            f.error(f"argument state: no state dict with its recipe: {state}")
        if a.out and Path(a.out).exists() and not Path(a.out).is_dir():
            f.error(f"argument --out: not a folder: {a.out}")
        try:
            rep = finish(state, a.name, calib_cards=a.calib_cards, out=Path(a.out) if a.out else None)
        except StateError as e:
            f.error(f"argument state: {e}")
        print(json.dumps({k: ({x: y for x, y in v.items() if x != "reliability"} if isinstance(v, dict) else v)
                          for k, v in rep.items()}))
        return 0
    import re

    nets = []
    for item in a.nets.split(","):
        m = re.fullmatch(r"([0-8]):((?:0?\.[0-9]+)|1(?:\.0*)?)", item)
        if not m or float(m.group(2)) <= 0:
            t.error(f"argument --nets: not extra:share (extra 0-8, share in (0, 1]): {item!r}")
        nets.append((int(m.group(1)), float(m.group(2))))
    if sum(sh for _, sh in nets) > 1 + 1e-9:
        t.error(f"argument --nets: the shares add up to more than 1: {a.nets!r}")
    from vision.corner import LETTERS, focus_codes

    focus = []
    for kind, text in (("ranks", a.focus_ranks), ("letters", a.focus_letters)):
        try:
            focus.append(focus_codes(*((text, None) if kind == "ranks" else (None, text)))[kind == "letters"])
        except ValueError as e:
            t.error(f"argument --focus-{kind}: {e}")
    if a.focus_share is not None and not any(focus):
        t.error("argument --focus-share: needs --focus-ranks or --focus-letters")
    pack_dir, out, init = Path(a.pack), Path(a.out), Path(a.init)
    if not init.is_file():
        t.error(f"argument --init: no such file: {init}")
    torch = start_run(t, "vision.corner_gpu", pack_dir, out, a.device)
    out.mkdir(parents=True, exist_ok=True)
    from vision.corner import normalize

    def log(*m):
        print(*m, flush=True)

    import vision.corner

    if a.lower_share is not None:
        vision.corner.LOWER_SHARE = a.lower_share  # carried to the workers (WORKER_SETTINGS)
    if a.reshape_share is not None:
        vision.corner.RESHAPE_SHARE = a.reshape_share
    vision.corner.FOCUS_RANKS, vision.corner.FOCUS_LETTERS = focus
    if a.focus_share is not None:
        vision.corner.FOCUS_SHARE = a.focus_share
    gen = Generator(pack_dir, a.workers, a.data_seed, log=log)  # its workers start before CUDA
    dev_name = torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu"
    log(f"torch {torch.__version__}, {dev_name}")
    try:
        for k, (extra, share) in enumerate(nets):
            if k == 0:
                time.sleep(max(0.0, a.gen_seconds - (time.time() - gen.t0)))
            C, R, L, cards = gen.take()  # each net: all the cards made by the time it starts
            gen_s = time.time() - gen.t0
            if k == len(nets) - 1:
                gen.stop()
            log(f"{cards} cards, {len(C)} crops in {gen_s:.0f}s")
            X = normalize(C)
            del C
            net, steps, secs = train_boxed(X, R, L, a.train_seconds * share, init, extra, a.batch, a.lr,
                                           a.device, log=log, probe_steps=a.probe_steps, min_steps=a.min_steps)
            name = f"second_x{extra}"
            torch.save(net.state_dict(), str(out / f"{name}.pt"))
            rec = {"name": name, "cards": cards, "data_seed": a.data_seed, "train_crops": int(len(X)),
                   "steps": steps, "batch": a.batch, "lr": a.lr, "init": init.name, "extra": extra,
                   "gen_s": round(gen_s, 1), "train_s": round(secs, 1), "device": dev_name, "workers": a.workers,
                   "lower_share": vision.corner.LOWER_SHARE, "reshape_share": vision.corner.RESHAPE_SHARE,
                   **({"focus_ranks": [int(r) for r in focus[0]], "focus_letters": [LETTERS[i] for i in focus[1]],
                       "focus_share": vision.corner.FOCUS_SHARE} if any(focus) else {}),
                   "fonts": "train split, cut down (vision.corner_gpu pack)"}
            (out / f"{name}.json").write_text(json.dumps(rec, indent=1) + "\n")
            log(json.dumps(rec))
    finally:
        gen.stop()
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
