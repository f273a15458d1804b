"""Model folders side by side on the same fresh calibration scenes: ``python -m vision.suited_judge``.

The suited decks' keep rules (model card, sessions 53-67) judge a candidate (a detector, a reader, its bars) against the
committed models on calibration scenes that no choice has seen, at the usual distance and seen from twice as far, and
on edje-pinochle's **train** photos (the only real photos a choice may look at). Each session wrote that judge again
in a scratch folder; this is it, once::

    python -m vision.suited_judge models CANDIDATE_DIR [...] --seed 13200000 [--decks standard52,island54]
           [--near 320] [--far 200] [--real ../shared/data/real-cards] [--json OUT]

A folder holds a scanner's models (``card_det_suited.int8.onnx``, ``<deck>_reader.int8.onnx`` and its report; a
candidate folder may link the files it does not change to models/). Per deck k (standard52 0, island54 1):

- near: ``--near`` scenes, three in four of the four layouts in turn (start, fan, trick, mixed) from
  ``seed + 10,000 k``, one in four hands held tight from ``seed + 20,000 + 10,000 k``;
- far: ``--far`` scenes of start, fan, trick and hand in turn from ``seed + 40,000 + 10,000 k``, each as a camera twice
  as far sees it (``far_scene``).

Calibration font families only; every folder reads the very same frames, and folders whose detector file (its bytes)
and detector passes are the same share each frame's detections (a reader-only candidate costs one detection per frame:
``detector_passes_per_frame`` in the JSON). Printed per folder: cards, exact, wrong with
confidence, unreadable, missed and false reads; with ``--real``, edje-pinochle's train photos through standard52's
scanner (rank; found, right, wrong, unread, strict and resolved: a read naming another labelled box that holds it is
that box's read). The test photos and bidly/ are never opened. The counts are small (a few mistakes in a thousand
cards): the model card (session 67) says what they can and cannot tell apart.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

FAR_OFFSET, HAND_OFFSET, DECK_OFFSET = 40_000, 20_000, 10_000


def plan(deck_k: int, seed: int, near: int, far: int) -> dict:
    """``{"near": [(seed, layout, far?)...], "far": [...]}`` for the deck with index ``deck_k``."""
    base = seed + DECK_OFFSET * deck_k
    hands = near // 4
    out = {"near": [(base + i, ("start", "fan", "trick", "mixed")[i % 4], False) for i in range(near - hands)]}
    out["near"] += [(base + HAND_OFFSET + i, "hand", False) for i in range(hands)]
    out["far"] = [(base + FAR_OFFSET + i, ("start", "fan", "trick", "hand")[i % 4], True) for i in range(far)]
    return out


def judge(dirs: list[Path], decks, seed: int, near: int, far: int, real: Path | None = None, threads: int = 2,
          out=print) -> dict:
    from vision.fonts import split_fonts
    from vision.suited_reader import DECKS, SuitedScanner, match_reads, score_rows
    from vision.synth.suited import far_scene, make_deck_scene

    fonts = split_fonts("calibration")
    res: dict = {"seed": seed, "folders": [str(d) for d in dirs], "decks": {}}
    for deck in decks:
        scs = [SuitedScanner(deck, d, threads=threads) for d in dirs]
        keys = [sc.detect_key for sc in scs]  # folders with the same detector and passes: each frame detected once
        res["decks"][deck] = {"detector_passes_per_frame": len(set(keys))}
        for section, scenes in plan(DECKS.index(deck), seed, near, far).items():
            if not scenes:
                continue
            t0 = time.time()
            rows: list[list] = [[] for _ in dirs]
            for s, layout, is_far in scenes:
                sc = make_deck_scene(s, deck, layout, fonts=fonts)
                if is_far:
                    sc = far_scene(sc)
                found: dict = {}
                for j, scanner in enumerate(scs):
                    if keys[j] not in found:
                        found[keys[j]] = scanner.detect(sc.image)
                    rows[j] += match_reads(sc, scanner.scan(sc.image, found[keys[j]]))
            res["decks"][deck][section] = sec = {"scenes": len(scenes), "seeds": [scenes[0][0], scenes[-1][0]],
                                                 "by_folder": {}}
            for d, r in zip(dirs, rows):
                st = score_rows(r)
                sec["by_folder"][str(d)] = {k: st[k] for k in ("cards", "exact", "wrong_confident", "unreadable",
                                                                "missed", "false_reads")}
                out(f"{deck} {section:4s} {str(d):40s} cards {st['cards']:5d}  exact {st['exact']:5d}  wrong "
                    f"{st['wrong_confident']:3d}  unread {st['unreadable']:4d}  missed {st['missed']:4d}  false "
                    f"{st['false_reads']:3d}")
            out(f"{deck} {section}: {len(scenes)} scenes from seed {scenes[0][0]}, {time.time() - t0:.0f} s")
    if real is not None:
        from vision.suited_bench import real_edje

        res["edje_train"] = {}
        for d in dirs:
            e = real_edje(SuitedScanner("standard52", d, threads=threads), real, only_split="train")
            res["edje_train"][str(d)] = r = {k: e[k] for k in ("images", "cards", "found", "right", "wrong_confident",
                                                               "unread")}
            r["resolved"] = {k: e["resolved"][k] for k in ("right", "wrong_confident", "unread")}
            out(f"edje train {str(d):40s} photos {r['images']}  cards {r['cards']}  found {r['found']}  right "
                f"{r['right']}  wrong {r['wrong_confident']}  unread {r['unread']}  (resolved: right "
                f"{r['resolved']['right']}  wrong {r['resolved']['wrong_confident']})")
    return res


def main(argv=None) -> int:
    from companion.errors import PirateTableError
    from companion.inputs import OneLineParser, cli_int, cli_out_file, cli_text
    from vision.cli import loaded
    from vision.suited_reader import DECKS, SuitedScanner

    ap = OneLineParser(prog="python -m vision.suited_judge", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folders", nargs="+", type=cli_text(4096), help="model folders (models/ for the committed ones)")
    ap.add_argument("--seed", type=cli_int(0, 2**31 - 100_000), required=True,
                    help="the first scene seed (fresh calibration seeds: see the model card's last 'next fresh')")
    ap.add_argument("--decks", type=cli_text(100), default=",".join(DECKS))
    ap.add_argument("--near", type=cli_int(0, 10_000), default=320, help="scenes at the usual distance per deck")
    ap.add_argument("--far", type=cli_int(0, 10_000), default=200, help="scenes seen from twice as far per deck")
    ap.add_argument("--real", type=cli_text(4096), default=None,
                    help="the real-cards folder: also edje-pinochle's train photos (never its test photos)")
    ap.add_argument("--threads", type=cli_int(1, 256), default=2)
    ap.add_argument("--json", type=cli_out_file(), default=None, help="also write the figures to this file")
    a = ap.parse_args(argv)
    decks = [x for x in a.decks.split(",") if x]
    for x in decks:
        if x not in DECKS:
            ap.error(f"--decks: unknown suited deck {x!r} (known: {', '.join(DECKS)})")
    dirs = [Path(f) for f in a.folders]
    for d in dirs:
        if not d.is_dir():
            ap.error(f"no such folder: {d}")
        for x in decks + (["standard52"] if a.real else []):
            try:
                loaded(d, lambda: SuitedScanner(x, d, threads=a.threads))
            except PirateTableError as e:
                ap.error(str(e))
    real = Path(a.real) if a.real else None
    if real is not None and not sorted((real / "edje-pinochle").glob("*.json")):
        ap.error(f"--real {real}: no edje-pinochle/ labels there")
    res = judge(dirs, decks, a.seed, a.near, a.far, real, a.threads)
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
