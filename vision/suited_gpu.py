"""The standard52 and Island readers trained on a lent GPU machine, time-boxed (``python -m vision.suited_gpu``).

``vision.suited_reader`` makes its training views first and trains after, on this 2-core CPU: a set of about
360,000 views costs 12 minutes to make and 75 minutes to train on. A lent machine has 16 cores and a GPU but no
Debian fonts, and takes only 64 MiB along, so the work goes as ``vision.corner_gpu``'s does:

1. here: ``python -m vision.suited_gpu pack DIR`` writes the train split's font files cut down to the glyphs a
   suited face sets (``CHARS``: ``vision.corner_gpu.pack``) and, with ``--real ../shared/data/real-cards``,
   ``real_standard52.npz``: the standard52 views of edje-pinochle's **train** photos that ``suited_reader --real``
   adds (``vision.suited_bench.edje_train_views``, found by the committed scanner), as uint8 crops. Its test photos
   and bidly never travel, nor do the calibration and held-out font families.
2. there: ``python -m vision.suited_gpu train DIR OUT --deck D`` makes fresh train-split views with ``--workers``
   processes (``vision.suited_reader``'s own chunk makers: lone cards, whole scenes and hands held tight in the
   recipe's proportions 5 : 4 : 2 chunks; chunk k of each kind seeded ``data_seed * 10**6 + offset + k``), each
   normalized in the worker, and goes on from the committed reader (``--init``, its heads multiplied back by its
   temperature) on the GPU **while the views keep coming**: every ``--refresh-s`` seconds the views made since are
   added to the set the batches are drawn from (``--extra N``: a deeper reader, N more convolutions at each small
   scale, started from the committed one with its new blocks as the identity: ``corner.load_state_deeper``). The
   learning rate follows OneCycle's shape (``vision.corner.train``'s
   schedule: 30 % warm-up from lr/25, cosine down to lr/25e4) over ``--train-seconds`` of wall time rather than over
   a step count fixed in advance, so a run ends on time however busy the machine is (two decks can share one GPU).
   It writes ``<deck>_gpu.pt`` (the state dict, no temperature) and ``<deck>_gpu.json`` (the recipe: views, steps,
   seconds).
3. here: ``python -m vision.suited_gpu finish OUT/<deck>_gpu.pt --out DIR`` fits the temperature on the calibration
   split's views, exports and quantizes, and chooses the scan's bars on calibration scenes, as
   ``vision.suited_reader`` does, into ``DIR/<deck>_reader.*`` (the replaced reader's figures kept as ``previous``).

Everything runs on a CPU too (``--device cpu``), only slower. ``python -m vision.suited_gpu soup DIR A.pt B.pt ...
--deck D --data-seed N`` averages readers of one line of training (one went on from the other) into
``DIR/<deck>_gpu.pt`` for ``finish`` (session 48: standard52's committed reader with its CPU continuation).
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
CHARS = "0123456789AJQKajqk\u0251"  # what a suited face sets from a font file ("10" too, the letter ranks small:
# vision.suited_reader.LOWER_RANK_SHARE, and A as a one-storey a: ALPHA_SHARE); vision.corner_gpu's glyphs are added
KINDS = (("cards", 0, 5), ("scenes", 300_000, 4), ("hands", 600_000, 2))  # kind, seed offset, chunks per round
CARDS_PER_CHUNK, SCENES_PER_CHUNK = 400, 50
WORKER_SETTINGS = {"vision.suited_reader": ("LOWER_RANK_SHARE", "RESHAPE_RANK_SHARE", "FOCUS_SHARE",
                                            "FAR_SHARE", "INK_SHARES", "ALPHA_SHARE")}
"""What ``train`` sets before its ``Generator`` starts and the workers' views follow."""


def pack(dest: Path, real: Path | None = None, real_copies: int = 4, families: int | None = None,
         threads: int = 2) -> dict:
    """The train split's fonts cut down into ``dest`` (and the real train views, with ``real``)."""
    from vision.corner_gpu import pack as pack_fonts
    from vision.fonts import LOWER, NEEDED

    rep = pack_fonts(dest, families, chars=NEEDED + LOWER + CHARS)
    if real is not None:
        from vision.suited_bench import edje_train_views
        from vision.suited_reader import SuitedScanner

        C, R, L, counts = edje_train_views(SuitedScanner("standard52", threads=threads), real, real_copies)
        np.savez_compressed(dest / "real_standard52.npz", C=C, R=R, L=L,
                            counts=json.dumps({**counts, "copies": real_copies}))
        rep["real_views"] = int(len(C))
        rep["real_bytes"] = (dest / "real_standard52.npz").stat().st_size
    return rep


def _views_chunk(job):
    """One chunk of training views, normalized here (float16: half the bytes through the pool's pipe)."""
    from vision import corner as cr
    from vision.suited_reader import _scene_chunk, _suited_chunk
    from vision.synth.suited import HAND, LAYOUTS

    kind, seed, deck = job
    if kind == "cards":
        C, R, L = _suited_chunk((seed, CARDS_PER_CHUNK, "train", deck))
    else:
        C, R, L = _scene_chunk((seed, SCENES_PER_CHUNK, "train", deck, LAYOUTS if kind == "scenes" else (HAND,)))
    return kind, cr.normalize(C).astype(np.float16), R, L


def chunk_jobs(deck: str, data_seed: int, rounds: int = 2000):
    """The chunks in the order they are made: rounds of 5 card, 4 scene and 2 hand chunks (the CPU recipe's
    32,000 : 3,200 : 1,600 cards, scenes and hands come in 80 : 64 : 32 chunks)."""
    k = {kind: 0 for kind, _, _ in KINDS}
    for _ in range(rounds):
        for kind, offset, n in KINDS:
            for _ in range(n):
                yield kind, data_seed * 10**6 + offset + k[kind], deck
                k[kind] += 1


class Generator:
    """Fresh train-split views (the packed fonts) made by a pool of ``workers`` in the background, kept in the
    order of ``chunk_jobs``: ``take()`` gives the chunks made since the last take."""

    def __init__(self, pack_dir: Path, deck: str, workers: int, data_seed: int, log=print):
        import threading

        from vision.corner_gpu import module_settings, spawn_pool

        self.parts: list = []
        self.taken = 0
        self.counts = {kind: 0 for kind, _, _ in KINDS}
        self.t0 = time.time()
        self.pool = spawn_pool(pack_dir, workers, module_settings(WORKER_SETTINGS))
        it = self.pool.imap(_views_chunk, chunk_jobs(deck, data_seed))
        self.error = None

        def pull():
            try:
                for kind, X, R, L in it:
                    self.parts.append((X, R, L))
                    self.counts[kind] += 1
                    if len(self.parts) % 50 == 0:
                        log(f"{deck}: {len(self.parts)} chunks {self.counts} ({time.time() - self.t0:.0f}s)")
            except Exception as e:  # the pool ended (stop) or a worker failed
                self.error = e

        self.thread = threading.Thread(target=pull, daemon=True)
        self.thread.start()

    def take(self, wait: bool = False):
        """The chunks made since the last take (with ``wait``, waits for at least one): a list of (X, R, L)."""
        while wait and len(self.parts) <= self.taken and self.error is None and self.thread.is_alive():
            time.sleep(0.2)
        if wait and len(self.parts) <= self.taken:
            raise RuntimeError(f"no views made ({self.error!r})")
        n = len(self.parts)
        new = self.parts[self.taken:n]
        for i in range(self.taken, n):
            self.parts[i] = None  # held on the device from now on, not twice
        self.taken = n
        return new

    def stop(self):
        self.pool.terminate()
        self.pool.join()


def one_cycle_lr(frac: float, lr: float, pct_start: float = 0.3, div: float = 25.0, final_div: float = 1e4) -> float:
    """OneCycleLR's learning rate (cosine both ways) at ``frac`` (0-1) of the run."""
    frac = min(max(frac, 0.0), 1.0)
    lo, end = lr / div, lr / div / final_div
    if frac < pct_start:
        return lo + (lr - lo) * (1 - math.cos(math.pi * frac / pct_start)) / 2
    t = (frac - pct_start) / (1 - pct_start)
    return end + (lr - end) * (1 + math.cos(math.pi * t)) / 2


class _Pool:
    """The views on the device, growing: a preallocated float16 block filled chunk by chunk."""

    def __init__(self, capacity: int, device: str):
        import torch
        from vision import corner as cr

        self.X = torch.empty((capacity, 3, cr.CORNER_H, cr.CORNER_W), dtype=torch.float16, device=device)
        self.R = torch.empty(capacity, dtype=torch.int64, device=device)
        self.L = torch.empty(capacity, dtype=torch.int64, device=device)
        self.n, self.full = 0, False

    def add(self, X, R, L) -> None:
        import torch

        m = min(len(X), len(self.X) - self.n)
        if m < len(X):
            self.full = True
        if m <= 0:
            return
        dev = self.X.device
        self.X[self.n:self.n + m] = torch.from_numpy(np.ascontiguousarray(X[:m])).to(dev)
        self.R[self.n:self.n + m] = torch.from_numpy(np.asarray(R[:m], np.int64)).to(dev)
        self.L[self.n:self.n + m] = torch.from_numpy(np.asarray(L[:m], np.int64)).to(dev)
        self.n += m


def train_growing(gen: Generator, deck: str, seconds: float, init: Path, extra: int, batch: int, lr: float,
                  device: str, real=None, capacity: int = 1_500_000, refresh_s: float = 20.0, real_share: float = 0.016,
                  log=print):
    """Go on from ``init`` (a state dict) for ``seconds`` of wall time on the views ``gen`` has made and goes on
    making (and ``real``: fixed extra views (X float16, R, L), ``real_share`` of every batch: the share they had in
    ``suited_reader --real``'s set, 5,960 of 361,924). Returns (net on the CPU, steps, views, seconds)."""
    import torch
    import torch.nn.functional as F

    from vision import corner as cr
    from vision.suited_reader import net_kw

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    net = cr.make_net(**net_kw(deck, extra))
    cr.load_state_deeper(net, torch.load(str(init)))  # the init's own depth, or deeper (its new blocks start as identity)
    net.to(device).train()
    opt = torch.optim.AdamW(net.parameters(), lr, weight_decay=1e-4)
    pool = _Pool(capacity, device)
    n_real = 0
    if real is not None:
        pool.add(*real)
        n_real = pool.n
    k_real = int(round(batch * real_share)) if n_real else 0
    for X, R, L in gen.take(wait=True):
        pool.add(X, R, L)
    t0 = last = time.time()
    step = 0
    while True:
        frac = (time.time() - t0) / seconds
        if frac >= 1:
            break
        if time.time() - last > refresh_s and not pool.full:
            for X, R, L in gen.take():
                pool.add(X, R, L)
            last = time.time()
        for g in opt.param_groups:
            g["lr"] = one_cycle_lr(frac, lr)
        idx = rng.integers(n_real, pool.n, batch)
        if k_real:
            idx[:k_real] = rng.integers(0, n_real, k_real)
        idx = torch.from_numpy(idx).to(device)
        pr, pl, _ = net(cr._augment(pool.X[idx].float(), rng))
        loss = F.cross_entropy(pr, pool.R[idx]) + F.cross_entropy(pl, pool.L[idx], ignore_index=-100)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 1000 == 0:
            log(f"{deck}: step {step} views {pool.n} lr {one_cycle_lr(frac, lr):.2e} loss {loss.item():.4f} "
                f"({time.time() - t0:.0f}s)")
        step += 1
    net.to("cpu").eval()
    return net, step, pool.n, time.time() - t0


def _load_init(pt: Path) -> tuple[dict, int]:
    """The state dict in ``pt`` and ``make_net``'s ``extra`` of it; ValueError (one line) for a file that is none."""
    import warnings

    import torch

    from vision.corner import state_extra

    try:
        with warnings.catch_warnings():  # torch's warning about a bad file: the one error line says it
            warnings.simplefilter("ignore")
            sd = torch.load(str(pt), map_location="cpu")
    except Exception as e:  # what unpickling a file that is no state dict raises
        raise ValueError(f"{pt}: not a reader's state dict ({type(e).__name__})") from e
    try:
        return sd, state_extra(sd)
    except ValueError as e:
        raise ValueError(f"{pt}: {e}") from None


def soup(readers: list[tuple[Path, Path | None]], deck: str, data_seed: int, dest: Path) -> dict:
    """A weight average ("model soup") of readers of one line of training: each reader's state dict (``export``
    divided its heads by its temperature: multiplied back, the temperature from ``report`` or the .json beside the
    .pt, as ``--init`` takes it), averaged parameter by parameter, BatchNorm statistics included. Readers that went
    on from one another share their start, so the average lies between them rather than between two unrelated
    networks. Writes ``dest/<deck>_gpu.pt`` and its recipe ``dest/<deck>_gpu.json`` for ``finish``. Everything is
    checked before anything is written: ValueError (one line) for a file that is no reader of ``deck``, a weight that
    is not finite, a reader with no report to give its temperature (``vision.suited_reader`` leaves its .pt in its
    work folder and its report in its out folder: name the report), readers of different depths, or fewer than two."""
    import torch

    from vision import corner as cr
    from vision.suited_reader import HEAD_KEYS, init_temperature, net_kw

    if len(readers) < 2:
        raise ValueError("a soup needs at least two readers")
    sds, parts, extras = [], [], set()
    for pt, report in readers:
        sd, extra = _load_init(pt)
        try:
            cr.make_net(**net_kw(deck, extra)).load_state_dict(sd)
        except (RuntimeError, ValueError) as e:
            raise ValueError(f"{pt}: not a {deck} reader's state dict ({str(e).splitlines()[0]})") from None
        bad = [k for k, v in sd.items() if v.dtype.is_floating_point and not bool(torch.isfinite(v).all())]
        if bad:
            raise ValueError(f"{pt}: {bad[0]} holds a value that is not finite")
        if report is None and not pt.with_suffix(".json").is_file():  # never a temperature of 1 by default here
            raise ValueError(f"{pt}: no report beside it to give its temperature (name it: PT=REPORT.json)")
        T = init_temperature(pt, report)
        sds.append({k: (v * T if k in HEAD_KEYS else v) for k, v in sd.items()})
        parts.append({"state": str(pt), "temperature": T})
        extras.add(extra)
    if len(extras) > 1:
        raise ValueError(f"the readers differ in depth ({sorted(extras)} extra convolutions per small scale)")
    avg = {k: (sum(sd[k] for sd in sds) / len(sds) if v.dtype.is_floating_point else v) for k, v in sds[0].items()}
    dest.mkdir(parents=True, exist_ok=True)
    torch.save(avg, str(dest / f"{deck}_gpu.pt"))
    rec = {"deck": deck, "data_seed": data_seed, "extra": extras.pop(), "soup": parts,
           "how": "equal-weight average of the readers' state dicts, heads times each one's temperature"}
    (dest / f"{deck}_gpu.json").write_text(json.dumps(rec, indent=1) + "\n")
    return rec


class StateError(ValueError):
    """A state dict or its recipe that ``finish`` cannot use."""


class ReportError(ValueError):
    """``finish --keep-bars``: no report with bars in the out folder."""


def finish(state: Path, out: Path, threads: int = 2, workers: int = 2, calib_cards: int = 1200,
           calib_scenes: int = 240, calib_hands: int = 60, keep_bars: bool = False) -> dict:
    """Here: temperature on the calibration split's views, ONNX, int8 and the scan's bars on calibration scenes (as
    ``vision.suited_reader.main`` does) for a state dict made by ``train`` or ``soup``: writes <out>/<deck>_reader.*.

    ``keep_bars``: a candidate for a keep rule that changes the reader alone. The bars, looks and far bars of the
    report already in ``out`` are kept as they are (nothing is chosen on calibration scenes); its temperature,
    calibration-view figures and int8 fields are made again, and the recipe goes under ``kept_bars_recipe``. A
    candidate folder is every file of models/ linked into it (the scanners and judges read such a folder)::

        mkdir CAND && ln -s "$PWD"/models/* CAND/

    A link in ``out`` to one of the reader's files is removed before the file is written, never written through
    (so a candidate folder's links to models/ leave the committed reader as it is)."""
    import warnings

    import torch

    from vision import corner as cr
    from vision.suited_reader import DECKS, calibrate_and_quantize, gen_suited_crops, net_kw, set_thresholds

    try:  # before anything is written
        rec = json.loads(state.with_suffix(".json").read_text())
        deck, seed = rec["deck"], int(rec["data_seed"])
        if deck not in DECKS:
            raise KeyError(deck)
        with warnings.catch_warnings():  # torch's warning about a bad file: the one error line says it
            warnings.simplefilter("ignore")
            net = cr.make_net(**net_kw(deck, int(rec["extra"])))
            net.load_state_dict(torch.load(str(state)))
    except Exception as e:
        raise StateError(f"{state}: not a state dict and recipe written by train ({type(e).__name__})") from e
    net.eval()
    torch.set_num_threads(threads)
    old_report = out / f"{deck}_reader.json"
    try:
        old = json.loads(old_report.read_text())
    except (OSError, ValueError) as e:
        old = e
    kept = previous = None
    if keep_bars:
        if not isinstance(old, dict) or not isinstance(old.get("thresholds"), dict):
            why = type(old).__name__ if isinstance(old, Exception) else "no thresholds"
            raise ReportError(f"{old_report}: no reader report whose bars could be kept ({why})")
        kept = old
    elif isinstance(old, dict):  # the reader this one replaces: its figures kept beside the new ones (without its
        # reliability tables)
        previous = {k: ({x: y for x, y in v.items() if x != "reliability"} if isinstance(v, dict) else v)
                    for k, v in old.items() if k not in ("previous", "reliability_cards", "reliability_indices")}
    out.mkdir(parents=True, exist_ok=True)
    for suffix in (".int8.onnx", ".pt", ".json", ".onnx"):  # replaced, never written through a link
        f = out / f"{deck}_reader{suffix}"
        if f.is_symlink():
            f.unlink()
    onnx_path = out / f"{deck}_reader.onnx"
    cr.export(net, onnx_path)
    rep = {**kept, "kept_bars_recipe": rec} if kept is not None else {"deck": deck, "recipe": rec}
    # the int8 ranges: fresh train-split views of the run's data seed, made here
    Cq, _Rq, _Lq = gen_suited_crops(deck, 240, seed=seed, split="train", workers=workers, n_scenes=24)
    calibrate_and_quantize(net, deck, onnx_path, out, Cq, rep, threads, workers, calib_cards)
    if previous is not None:
        rep["previous"] = previous
    onnx_path.unlink()  # only the int8 reader and the state dict are kept (as in models/)
    old_report.write_text(json.dumps(rep, indent=1, ensure_ascii=False) + "\n")
    if kept is not None:
        return rep
    return set_thresholds(deck, out, rep, threads, calib_scenes, calib_hands)


def main(argv=None) -> int:
    from companion.inputs import cli_float, cli_int
    from vision.corner_gpu import recipe_parser

    ap, sub, p, t = recipe_parser("vision.suited_gpu", __doc__)
    p.add_argument("--real", default=None, metavar="DIR", help="../shared/data/real-cards: edje-pinochle's train "
                   "photos' views for standard52 (never its test photos or bidly)")
    p.add_argument("--real-copies", type=cli_int(1, 1000), default=4, help="jittered views per real corner (4: "
                   "30 MB with 8; the machine takes 64 MiB with the working tree)")
    t.add_argument("--deck", required=True, help="standard52 or island54 (aliases: standard, island)")
    t.add_argument("--gen-seconds", type=cli_float(0, 3600), default=60.0, help="views made before training starts")
    t.add_argument("--train-seconds", type=cli_float(1, 3600), default=300.0)
    t.add_argument("--refresh-s", type=cli_float(1, 3600), default=20.0)
    t.add_argument("--workers", type=cli_int(1, 256), default=7)
    t.add_argument("--data-seed", type=cli_int(1, 1000), default=31)
    t.add_argument("--batch", type=cli_int(1, 65536), default=256)
    t.add_argument("--lr", type=cli_float(0, 1, lo_open=True), default=1e-3)
    t.add_argument("--capacity", type=cli_int(1000, 10**8), default=1_500_000,
                   help="most views held on the device (21 GB)")
    t.add_argument("--init", default=None, help="default models/<deck>_reader.pt (its temperature from the .json "
                   "beside it)")
    t.add_argument("--real-share", type=cli_float(0, 1), default=0.016, help="share of every batch drawn from the "
                   "packed real views (standard52)")
    t.add_argument("--lower-share", type=cli_float(0, 1), default=None, help="of the training cards whose rank is a "
                   "letter, the share setting it small (default vision.suited_reader.LOWER_RANK_SHARE)")
    t.add_argument("--alpha-share", type=cli_float(0, 1), default=None, help="of the training cards whose A is set "
                   "small, the share set as a one-storey a, U+0251, where the face draws it (default "
                   "vision.suited_reader.ALPHA_SHARE)")
    t.add_argument("--reshape-share", type=cli_float(0, 1), default=None, help="the share of the training cards whose "
                   "rank is redrawn (default vision.suited_reader.RESHAPE_RANK_SHARE)")
    t.add_argument("--far-share", type=cli_float(0, 1), default=None, help="the share of the training scenes and "
                   "hands seen from twice as far (default vision.suited_reader.FAR_SHARE)")
    t.add_argument("--other-suit-share", type=cli_float(0, 0.7), default=None, help="the share of the training "
                   "cards in another suit's ink (default vision.suited_reader.INK_SHARES')")
    t.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    t.add_argument("--extra", type=cli_int(0, 8), default=None, help="train a deeper reader: this many more "
                   "convolutions at each small scale (corner.make_net), at least the init's; the ones the init lacks "
                   "start as the identity (default: the init's own depth)")
    s = sub.add_parser("soup")
    s.add_argument("dest", help="folder for <deck>_gpu.pt and its recipe .json, for finish")
    s.add_argument("readers", nargs="+", metavar="READER", help="a reader's .pt (its temperature from the .json "
                   "beside it), or PT=REPORT.json; at least two, of one line of training")
    s.add_argument("--deck", required=True, help="standard52 or island54 (aliases: standard, island)")
    s.add_argument("--data-seed", type=cli_int(1, 1000), required=True, help="seed of the train-split views that "
                   "finish sets the int8 ranges on")
    f = sub.add_parser("finish")
    f.add_argument("state", help="a <deck>_gpu.pt written by train, its recipe .json beside it")
    f.add_argument("--out", default=None, help="default models/")
    f.add_argument("--threads", type=cli_int(1, 256), default=2)
    f.add_argument("--workers", type=cli_int(1, 64), default=2)
    f.add_argument("--calib-cards", type=cli_int(12), default=1200, help="calibration-split cards for the temperature")
    f.add_argument("--calib-scenes", type=cli_int(1), default=240)
    f.add_argument("--calib-hands", type=cli_int(0), default=60)
    f.add_argument("--keep-bars", action="store_true", help="keep the bars and looks of the report already in --out "
                   "(a candidate folder for a keep rule on the reader alone): only the temperature and int8 are made")
    a = ap.parse_args(argv)
    if a.cmd == "pack":
        if Path(a.dest).exists() and not Path(a.dest).is_dir():
            p.error(f"argument dest: not a folder: {a.dest}")
        if a.real and not (Path(a.real) / "edje-pinochle").is_dir():
            p.error(f"argument --real: no edje-pinochle/ in {a.real}")
        print(json.dumps(pack(Path(a.dest), Path(a.real) if a.real else None, a.real_copies, a.families)))
        return 0
    if a.cmd == "soup":
        from vision.suited_reader import suited_deck

        try:
            deck = suited_deck(a.deck)
        except ValueError as e:
            s.error(f"argument --deck: {e}")
        dest = Path(a.dest)
        if dest.exists() and not dest.is_dir():
            s.error(f"argument dest: not a folder: {dest}")
        readers = []
        for r in a.readers:
            pt, _, rep = r.partition("=")
            if not pt.endswith(".pt") or not Path(pt).is_file():
                s.error(f"argument READER: no such state dict (.pt): {pt}")
            if rep and not Path(rep).is_file():
                s.error(f"argument READER: no such report: {rep}")
            readers.append((Path(pt), Path(rep) if rep else None))
        try:  # soup checks everything (at least two readers included) before it writes
            rec = soup(readers, deck, a.data_seed, dest)
        except ValueError as e:
            s.error(f"argument READER: {e}")
        print(json.dumps(rec))
        return 0
    if a.cmd == "finish":
        state = Path(a.state)
        if not state.is_file() or not state.with_suffix(".json").is_file():
            f.error(f"argument state: no state dict with its recipe: {state}")
        out = Path(a.out) if a.out else ROOT / "models"
        if out.exists() and not out.is_dir():
            f.error(f"argument --out: not a folder: {out}")
        try:
            rep = finish(state, out, a.threads, a.workers, a.calib_cards, a.calib_scenes, a.calib_hands,
                         a.keep_bars)
        except StateError as e:
            f.error(f"argument state: {e}")
        except ReportError as e:
            f.error(f"argument --out: {e}")
        print(json.dumps({k: rep[k] for k in ("temperature", "calibration_views_int8", "thresholds",
                                              "calibration_scenes") if k in rep}))
        return 0
    from vision.suited_reader import go_on_from, init_temperature, net_kw, suited_deck

    try:
        deck = suited_deck(a.deck)
    except ValueError as e:
        t.error(f"argument --deck: {e}")
    pack_dir, out = Path(a.pack), Path(a.out)
    init = Path(a.init) if a.init else ROOT / "models" / f"{deck}_reader.pt"
    if init.suffix != ".pt" or not init.is_file():
        t.error(f"argument --init: no such state dict (.pt): {init}")
    try:
        T = init_temperature(init, None)
        init_sd, init_extra = _load_init(init)
    except ValueError as e:
        t.error(f"argument --init: {e}")
    extra = init_extra if a.extra is None else a.extra
    if extra < init_extra:
        t.error(f"argument --extra: {extra}: fewer convolutions than the init's ({init_extra} extra per small scale)")
    from vision import corner as cr

    try:  # before any worker or the GPU starts
        cr.load_state_deeper(cr.make_net(**net_kw(deck, extra)), init_sd)
    except ValueError as e:  # a reader of another deck: the heads' sizes differ
        t.error(f"argument --init: {init}: not a {deck} reader's state dict ({e})")
    from vision.corner_gpu import start_run

    torch = start_run(t, "vision.suited_gpu", pack_dir, out, a.device)

    out.mkdir(parents=True, exist_ok=True)

    def log(*m):
        print(*m, flush=True)

    real = None
    if deck == "standard52" and (pack_dir / "real_standard52.npz").is_file():
        z = np.load(pack_dir / "real_standard52.npz")
        real = (cr.normalize(z["C"]).astype(np.float16), z["R"], z["L"])
        log(f"{deck}: {len(real[0])} real train views ({z['counts']})")
    import vision.suited_reader

    if a.lower_share is not None:
        vision.suited_reader.LOWER_RANK_SHARE = a.lower_share  # carried to the workers (WORKER_SETTINGS)
    if a.alpha_share is not None:
        vision.suited_reader.ALPHA_SHARE = a.alpha_share
    if a.reshape_share is not None:
        vision.suited_reader.RESHAPE_RANK_SHARE = a.reshape_share
    if a.far_share is not None:
        vision.suited_reader.FAR_SHARE = a.far_share
    if a.other_suit_share is not None:
        vision.suited_reader.INK_SHARES = vision.suited_reader.ink_shares(a.other_suit_share)
    gen = Generator(pack_dir, deck, a.workers, a.data_seed, log=log)  # its workers start before CUDA
    dev_name = torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu"
    log(f"torch {torch.__version__}, {dev_name}")
    try:
        start = go_on_from(init, T, out / f"{deck}_go_on.pt")
        time.sleep(max(0.0, a.gen_seconds - (time.time() - gen.t0)))
        net, steps, views, secs = train_growing(gen, deck, a.train_seconds, start, extra, a.batch, a.lr, a.device,
                                                real, a.capacity, a.refresh_s, a.real_share, log)
        counts = dict(gen.counts)
    finally:
        gen.stop()
    torch.save(net.state_dict(), str(out / f"{deck}_gpu.pt"))
    rec = {"deck": deck, "data_seed": a.data_seed, "init": init.name, "init_temperature": T, "init_extra": init_extra,
           "extra": extra,
           "chunks_made": counts, "views_trained_on": views, "real_train_views": 0 if real is None else len(real[0]),
           "real_share": a.real_share if real is not None else 0,
           "steps": steps, "batch": a.batch, "lr": a.lr, "schedule": "OneCycle over the wall time",
           "gen_s_before_training": a.gen_seconds, "train_s": round(secs, 1), "device": dev_name,
           "workers": a.workers, "fonts": "train split, cut down (vision.suited_gpu pack)",
           "lower_share": vision.suited_reader.LOWER_RANK_SHARE, "alpha_share": vision.suited_reader.ALPHA_SHARE,
           "reshape_share": vision.suited_reader.RESHAPE_RANK_SHARE, "far_share": vision.suited_reader.FAR_SHARE,
           "ink_shares": dict(zip(vision.suited_reader.INK_MODES, vision.suited_reader.INK_SHARES))}
    (out / f"{deck}_gpu.json").write_text(json.dumps(rec, indent=1) + "\n")
    log(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
