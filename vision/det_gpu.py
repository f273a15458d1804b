"""The suited decks' detector trained on a lent GPU machine (``python -m vision.det_gpu``).

``python -m vision.train --only decks --decks-as suited`` makes its tiles one scene after another and trains on this
2-core CPU: session 68's run (6,150 tiles, 8 epochs) took 58 minutes, the tiles about 4 of them (270 s with two
processes here). A lent machine has 16 cores and a GPU but no
Debian fonts and no ultralytics, and takes only 64 MiB along, so the work goes as ``vision.suited_gpu``'s does:

1. here: ``python -m vision.det_gpu pack DIR`` writes the train split's font files cut down to the glyphs a Pirate's
   Bluff or suited face sets (``vision.suited_gpu.pack``, fonts only: no real photo travels; 7.9 MB for the 172
   families).
2. there: ``python -m vision.det_gpu train DIR OUT`` makes **the tiles ``vision.train --only decks`` makes** with the
   same counts (``--scenes``, ``--own``, ``--suited``, ``--far``: ``vision.train.decks_tile_plan``), each scene's
   tiles depending on its seed alone, with ``--workers`` processes (chunks of ``--chunk`` scenes); then recovers the
   network to go on from out of the committed int8 detector (``--from``, default the suited detector:
   ``vision.det_recover.recover``, the recipe's own start since session 67; or ``--init-pt`` a checkpoint of the
   recipe, copied) into ``OUT/init.pt``, and trains from it by the recipe's own ``train_detector`` on ``--device``
   (cuda: ultralytics' device 0) for ``--epochs`` or ``--hours``, whichever ends first, with ultralytics' training
   seed ``--seed`` (default 0, as every earlier run: another seed is another sample of the recipe). It writes
   ``OUT/det_gpu.pt`` (the run's last checkpoint, its EMA as ultralytics leaves it) and ``OUT/det_gpu.json`` (the
   recipe: tiles, epochs, seed, seconds, device). The network is recovered there, not packed here: the 6.4 MB checkpoint
   would take the travelling tree (27.8 MB), the fonts and ultralytics' wheels over the 64 MiB a call carries.
3. here: ``python -m vision.det_gpu finish OUT/det_gpu.pt CAND.int8.onnx`` exports and quantizes it by the recipe's
   own code (``vision.det_recover.int8_detector``) for the judge (``vision.suited_judge``); ``det_recover average``
   averages it with its start first where a rule says so.

Everything runs on a CPU too (``--device cpu``), only slower. ultralytics is not installed on the lent machine: its
wheel travels (docs/camera.md gives the device command).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INIT = "init.pt"


def pack(dest: Path, families: int | None = None) -> dict:
    """The train split's fonts cut down into ``dest`` (the first ``families`` of them: tests)."""
    from vision.suited_gpu import pack as pack_fonts

    return pack_fonts(dest, families=families)


def start_network(out: Path, int8_from: Path, init_pt: Path | None = None) -> str:
    """The network the run goes on from, as ``out/init.pt``: ``init_pt`` copied, or recovered from ``int8_from``;
    RecoverError (nothing written) where that is no detector of the recipe. Returns where it came from."""
    from vision.det_recover import _load_model, recover

    part = out / (INIT + ".part")
    try:
        if init_pt is not None:
            _load_model(init_pt)  # RecoverError unless a checkpoint
            shutil.copyfile(init_pt, part)
            how = f"{init_pt.name} (copied)"
        else:
            recover(int8_from, None, part)
            how = f"{int8_from.name} (vision.det_recover recover)"
        part.replace(out / INIT)
    finally:
        part.unlink(missing_ok=True)
    return how


def _part_job(job):
    from vision.train import gen_plan_part

    out, part = job
    return gen_plan_part(Path(out), part, index=False)


def make_tiles(pack_dir: Path, data: Path, plan: list[dict], workers: int, chunk: int = 10) -> int:
    """The plan's tiles written into ``data`` by ``workers`` processes whose train split is the pack's fonts
    (``vision.corner_gpu.spawn_pool``: spawned, not forked), then the dataset's index; returns the tiles written."""
    from vision.corner_gpu import spawn_pool
    from vision.train import plan_chunks, write_dataset_index

    pool = spawn_pool(pack_dir, workers)
    try:
        n = sum(pool.imap_unordered(_part_job, [(str(data), c) for c in plan_chunks(plan, chunk)]))
    finally:
        pool.terminate()
        pool.join()
    write_dataset_index(data)
    return n


def main(argv=None) -> int:
    from companion.inputs import cli_float, cli_int
    from vision.corner_gpu import recipe_parser

    ap, sub, p, t = recipe_parser("vision.det_gpu", __doc__)
    count = cli_int(0, 100_000)
    t.add_argument("--scenes", type=count, default=350, help="train-font Pirate's Bluff scenes (vision.train's "
                   "--decks-scenes)")
    t.add_argument("--own", type=count, default=300, help="own-face scenes (--decks-own)")
    t.add_argument("--suited", type=count, default=400, help="scenes of each suited deck, and half as many hands held "
                   "tight (--decks-suited)")
    t.add_argument("--far", type=count, default=100, help="far scenes of each suited deck (--decks-far)")
    t.add_argument("--epochs", type=cli_int(1, 1000), default=30)
    t.add_argument("--hours", type=cli_float(0, 24, lo_open=True), default=None,
                   help="ultralytics' time budget (ends the run before --epochs if it comes first)")
    t.add_argument("--batch", type=cli_int(1, 4096), default=16)
    t.add_argument("--workers", type=cli_int(1, 256), default=15, help="processes making tiles")
    t.add_argument("--loader-workers", type=cli_int(0, 256), default=8, help="ultralytics' data loader processes")
    t.add_argument("--chunk", type=cli_int(1, 100_000), default=10, help="scenes per tile job")
    t.add_argument("--seed", type=cli_int(0, 2**31 - 1), default=0, help="ultralytics' training seed (its shuffling "
                   "and augmentation; 0, ultralytics' default, is what every run before session 70 used): another seed "
                   "is another sample of the same recipe")
    t.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    t.add_argument("--from", dest="int8_from", default=str(ROOT / "models" / "card_det_suited.int8.onnx"),
                   help="the int8 detector whose network the run goes on from (recovered)")
    t.add_argument("--init-pt", default=None, help="go on from this checkpoint of the recipe instead")
    f = sub.add_parser("finish")
    f.add_argument("state", help="a checkpoint written by train (det_gpu.pt)")
    f.add_argument("int8", help="the int8 detector to write (.onnx)")
    a = ap.parse_args(argv)
    if a.cmd == "pack":
        dest = Path(a.dest)
        if dest.exists() and not dest.is_dir():
            p.error(f"argument dest: not a folder: {a.dest}")
        if (dest / "fonts.json").exists():
            p.error(f"argument dest: already packed (nothing is overwritten): {dest / 'fonts.json'}")
        print(json.dumps(pack(dest, a.families)))
        return 0
    if a.cmd == "finish":
        state, int8 = Path(a.state), Path(a.int8)
        if not state.is_file():
            f.error(f"argument state: no such file: {a.state}")
        if int8.suffix != ".onnx":
            f.error(f"argument int8: the file name must end in .onnx: {a.int8}")
        if int8.exists():
            f.error(f"argument int8: already there (nothing is overwritten): {a.int8}")
        if not int8.parent.is_dir():
            f.error(f"argument int8: folder does not exist: {int8.parent}")
        from vision.det_recover import RecoverError, _load_model, int8_detector

        try:
            _load_model(state, ema=True)
        except RecoverError as e:
            f.error(f"argument state: {e}")
        print(json.dumps({"int8": str(int8_detector(state, int8))}))
        return 0
    if a.far and not a.suited:  # the far scenes are the suited decks': nothing silently left out (as vision.train)
        t.error("argument --far: needs --suited")
    pack_dir, out = Path(a.pack), Path(a.out)
    if (out / "det_gpu.pt").exists():
        t.error(f"argument out: already holds a run (nothing is overwritten): {out / 'det_gpu.pt'}")
    if a.init_pt is not None and not Path(a.init_pt).is_file():
        t.error(f"argument --init-pt: no such file: {a.init_pt}")
    if a.init_pt is None and not Path(a.int8_from).is_file():
        t.error(f"argument --from: no such file: {a.int8_from}")
    from vision.corner_gpu import start_run

    torch = start_run(t, "vision.det_gpu", pack_dir, out, a.device)
    from vision.det_recover import RecoverError
    from vision.train import decks_tile_plan, train_detector

    plan = decks_tile_plan(a.scenes, a.own, a.suited, a.far)
    if not plan:
        t.error("argument --scenes: no scenes at all (--scenes, --own, --suited and --far are all 0)")
    import tempfile

    from vision.corner_gpu import use_packed_fonts

    use_packed_fonts(pack_dir)  # recover's batch-norm frames and the tiles: the pack's train fonts
    with tempfile.TemporaryDirectory() as tmp:  # the network first, outside OUT: a file that is no detector of the
        try:  # recipe is refused before anything is written
            start = start_network(Path(tmp), Path(a.int8_from), Path(a.init_pt) if a.init_pt else None)
        except RecoverError as e:
            t.error(f"argument {'--init-pt' if a.init_pt else '--from'}: {e}")
        out.mkdir(parents=True, exist_ok=True)
        shutil.move(str(Path(tmp) / INIT), str(out / INIT))
    data = out / "tiles"
    t0 = time.time()
    tiles = make_tiles(pack_dir, data, plan, a.workers, a.chunk)
    gen_s = time.time() - t0
    print(f"{tiles} tiles in {gen_s:.0f}s", flush=True)
    t0 = time.time()
    last = train_detector(data, out / "runs", a.epochs, a.hours, batch=a.batch, workers=a.loader_workers,
                          init=out / INIT, name="det_gpu", device=a.device, seed=a.seed)
    train_s = time.time() - t0
    results = last.parent.parent / "results.csv"  # a row per epoch done
    epochs_done = max(0, len(results.read_text().splitlines()) - 1) if results.is_file() else None
    shutil.copyfile(last, out / "det_gpu.pt")
    rec = {"tiles": tiles, "plan": [{k: v for k, v in part.items() if k != "layouts"} for part in plan],
           "epochs_done": epochs_done, "epochs": a.epochs, "seed": a.seed, "hours": a.hours, "batch": a.batch,
           "gen_s": round(gen_s, 1), "train_s": round(train_s, 1), "workers": a.workers,
           "device": torch.cuda.get_device_name(0) if a.device == "cuda" else "cpu",
           "init": start, "fonts": "train split, cut down (vision.det_gpu pack)"}
    (out / "det_gpu.json").write_text(json.dumps(rec, indent=1) + "\n")
    print(json.dumps(rec), flush=True)
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main())
