"""Benchmark of taught suited decks (issue #21: "deck enrollment works for these decks too"): printed figures.

Per deck (standard52, island54): ``--decks`` face styles drawn at random from one font split's families (the
default ``held_out``: nothing is trained or tuned on them; ``calibration`` is where choices are made). Each style
is photographed a suit per photo (``vision.synth.rows.suit_photo``, the layout of ``vision.enroll.photo_layout``),
taught through ``vision.enroll.enroll`` into a temporary data folder, and ``--scenes`` seat scenes of that deck
(``vision.synth.suited.seat_scene``: 3-6 cards laid in front of the seats, a held-out table surface for the
held-out split) are read twice on the same frames: by the deck's own reader untaught, and with the taught profile
(``SuitedScanner(profile=...)``, the scan path of ``scan --deck NAME``). Per whole card: exact (named right),
wrong (named another card), unread (not found, or found and named by nothing). A style whose photos enrollment
refuses (a card of a photo not found) is counted as refused, with the refusal.

    python -m vision.taught_bench [--decks standard52,island54] [--split held_out] [--styles 8] [--scenes 8]
                                  [--seed 720] [--json OUT]
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from companion.errors import PirateTableError
from vision.suited_reader import DECKS

SPLITS = ("train", "calibration", "held_out")


def _count(reads, g, d, row: list) -> None:
    """Adds one card ``g`` of a scene to ``row`` [exact, wrong, unread, cards] from the scan's whole-card reads."""
    quad = g.quad.reshape(-1, 1, 2).astype(np.float32)
    hits = [r for r in reads if r.kind == "card" and cv2.pointPolygonTest(quad, tuple(map(float, r.center)), False) >= 0]
    row[3] += 1
    if not hits or hits[0].code is None:
        row[2] += 1
    elif d.notation(hits[0].card()) == g.card:
        row[0] += 1
    else:
        row[1] += 1


def bench_deck(deck: str, split: str, styles: int, scenes: int, seed: int, log=print) -> dict:
    from companion.decks import get_deck
    from vision.decks.faces import faces_for
    from vision.enroll import enroll, load, photo_layout, remove
    from vision.fonts import split_fonts
    from vision.suited_reader import SuitedScanner
    from vision.synth.rows import suit_photo
    from vision.synth.suited import seat_scene
    from vision.synth.surfaces import HELD_OUT_SURFACES, TRAIN_SURFACES

    d = get_deck(deck)
    fonts = list(split_fonts(split))
    if not fonts:
        raise ValueError(f"no font family of the {split} split is installed here")
    surfaces = HELD_OUT_SURFACES if split == "held_out" else TRAIN_SURFACES
    untaught = SuitedScanner(deck)
    tot = {"untaught": [0, 0, 0, 0], "taught": [0, 0, 0, 0]}
    per_style, refused, enroll_s = [], [], []
    saved = os.environ.get("PIRATE_TABLE_DATA")
    with tempfile.TemporaryDirectory(prefix="taught-bench-") as tmp:
        os.environ["PIRATE_TABLE_DATA"] = str(Path(tmp) / "data")
        try:
            for j in range(styles):
                s = seed + j
                style = faces_for(d).random_style(np.random.default_rng(s), fonts)
                rows = Path(tmp) / f"rows{s}"
                rows.mkdir()
                for i, (f, cards) in enumerate(photo_layout(deck)):
                    cv2.imwrite(str(rows / f), suit_photo(deck, style, cards[0].suit, s * 10 + i),
                                [cv2.IMWRITE_JPEG_QUALITY, 92])
                name = f"bench{s}"
                try:
                    meta = enroll(name, deck, rows)
                except PirateTableError as e:
                    refused.append({"seed": s, "font": Path(style.font_path).name, "refusal": str(e)})
                    log(f"{deck} style {s} ({Path(style.font_path).name}): enrollment refused: {e}")
                    continue
                enroll_s.append(meta["cpu_s"])
                taught = SuitedScanner(deck, profile=load(name))
                rng = np.random.default_rng(s)
                row = {"untaught": [0, 0, 0, 0], "taught": [0, 0, 0, 0]}
                for k in range(scenes):
                    n = int(rng.integers(3, 7))
                    cards = [d.notation(d.cards[i]) for i in rng.choice(len(d.cards), n, replace=False)]
                    try:
                        sc = seat_scene(s * 1000 + k, deck, [[c] for c in cards], surfaces=surfaces, style=style)
                    except ValueError:  # the cards do not fit the frame: no scene
                        continue
                    for key, scanner in (("untaught", untaught), ("taught", taught)):
                        reads = scanner.scan(sc.image)
                        for g in sc.cards:
                            _count(reads, g, d, row[key])
                remove(name)
                for key in tot:
                    tot[key] = [a + b for a, b in zip(tot[key], row[key])]
                per_style.append({"seed": s, "font": Path(style.font_path).name, "index": style.index,
                                  "drawing": style.drawing, **row})
                log(f"{deck} style {s} ({Path(style.font_path).name}, {style.index}/{style.drawing}): exact / wrong / "
                    f"unread of {row['taught'][3]}: untaught {row['untaught'][:3]}, taught {row['taught'][:3]}")
        finally:
            if saved is None:
                os.environ.pop("PIRATE_TABLE_DATA", None)
            else:
                os.environ["PIRATE_TABLE_DATA"] = saved

    def figures(r):
        n = max(r[3], 1)
        return {"cards": r[3], "exact": r[0], "wrong": r[1], "unread": r[2], "exact_pct": round(100 * r[0] / n, 2),
                "wrong_pct": round(100 * r[1] / n, 2)}

    return {"split": split, "styles": styles, "scenes_per_style": scenes, "seed": seed,
            "untaught": figures(tot["untaught"]), "taught": figures(tot["taught"]), "refused": refused,
            "enroll_cpu_s": [min(enroll_s), max(enroll_s)] if enroll_s else None, "per_style": per_style}


def main(argv=None) -> int:
    import argparse

    from companion.inputs import OneLineParser, cli_int, cli_out_file

    ap = OneLineParser(prog="python -m vision.taught_bench", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", default=",".join(DECKS))
    ap.add_argument("--split", default="held_out", choices=SPLITS, help="the font split the styles are drawn from")
    ap.add_argument("--styles", type=cli_int(1, 1000), default=8, help="face styles (taught decks) per deck")
    ap.add_argument("--scenes", type=cli_int(1, 1000), default=8, help="seat scenes per taught deck")
    ap.add_argument("--seed", type=cli_int(0, 2**31 - 1), default=720, help="the first style's seed")
    ap.add_argument("--json", type=cli_out_file(), default=None, help="also write the figures to this file")
    a = ap.parse_args(argv)
    decks = [x.strip() for x in a.decks.split(",") if x.strip()]
    for x in decks:
        if x not in DECKS:
            ap.error(f"--decks: unknown deck {x!r} (one of {', '.join(DECKS)})")
    from vision.fonts import split_fonts

    if not split_fonts(a.split):
        ap.error(f"--split: no font family of the {a.split} split is installed here")
    t0 = time.time()
    out = {}
    for deck in decks:
        r = bench_deck(deck, a.split, a.styles, a.scenes, a.seed)
        out[deck] = r
        u, t = r["untaught"], r["taught"]
        print(f"{deck}, {a.split} styles ({a.styles}, {len(r['refused'])} refused at enrollment), {t['cards']} cards: "
              f"untaught {u['exact_pct']} % exact / {u['wrong']} wrong; taught {t['exact_pct']} % exact / "
              f"{t['wrong']} wrong; enrollment {r['enroll_cpu_s']} s CPU")
    out["bench_s"] = round(time.time() - t0, 1)
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
