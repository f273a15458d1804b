"""Choose the runtime's reading rules on the CALIBRATION font split only (never the held-out one).

Scenes: seeds 9,300,000+ on held-out surfaces, faces set in the calibration font families (vision/fonts.py).
For each candidate rule set (which readers read whole cards, the index boxes' weight beside the corner region,
the detector's card bar) every whole card's posterior is recorded; printed per rule set: exact / wrong /
unreadable at the card threshold, the lowest threshold with no wrong card, first bidder right / wrong / abstain,
and the reliability of the card posteriors (how often a card read at confidence c is right).

    python -m vision.calibrate [--scenes 100] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np


class _Rules:
    """A scanner with its own BOX_WEIGHT (a module constant in vision.detect, set around each scan)."""

    def __init__(self, scanner, box_weight: float):
        self.scanner, self.box_weight = scanner, box_weight

    def scan(self, img):
        import vision.detect as d

        old = d.BOX_WEIGHT
        d.BOX_WEIGHT = self.box_weight
        try:
            return self.scanner.scan(img)
        finally:
            d.BOX_WEIGHT = old


BARS = (0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.997, 0.998, 0.999)  # the card bars the rule chooses among


def run(n_scenes: int = 100, seed: int = 9_300_000, split: str = "calibration", rules=None) -> dict:
    from vision.bench import _inside, _scene, fb_names
    from vision.corner import reliability
    from companion.games import registry
    from vision.detect import CARD_MIN, Scanner

    first_bidder = registry.reads_rule_for_deck("pirates72")  # the camera reads; the game decides
    from vision.fonts import split_fonts
    from vision.synth.surfaces import HELD_OUT_SURFACES
    from companion.decks.pirates72 import PBCard

    rules = rules or {
        "index@0.4": ("index", 0.4, 0.5),
        "corner@0.4": ("corner", 0.4, 0.0),
        "corner@0.2": ("corner", 0.2, 0.0),
        "both_w0.5@0.2": ("both", 0.2, 0.5),
        "both_w1@0.2": ("both", 0.2, 1.0),
    }
    scanners = {}
    for name, (mode, card_min, w) in rules.items():
        sc = Scanner("ort", reader=mode)
        sc.card_min = card_min
        scanners[name] = _Rules(sc, w)
    fonts = split_fonts(split) if split else None
    rec = {k: {"conf": [], "right": [], "missed": 0, "cards": 0, "fb": [0, 0, 0], "false_pos": 0} for k in scanners}
    for k in range(n_scenes):
        sc = _scene(seed + k, "start", HELD_OUT_SURFACES, fonts)
        gts = [c for c in sc.cards if c.card_visible >= 0.97]
        gmin = min(gts, key=lambda g: PBCard(g.rank, g.letter))
        for name, s in scanners.items():
            cards, _ = s.scan(sc.image)
            whole = [c for c in cards if c.kind == "card"]
            r = rec[name]
            used = set()
            for g in gts:
                r["cards"] += 1
                hits = [i for i, p in enumerate(whole) if i not in used and _inside(g.quad, p.center)]
                if not hits:
                    r["missed"] += 1
                    continue
                used.add(hits[0])
                p = whole[hits[0]]
                kk = int(p.probs.argmax())
                r["conf"].append(float(p.probs[kk]))
                r["right"].append(kk == g.rank * 8 + "ABCDEFGH".index(g.letter))
            r["false_pos"] += len(whole) - len(used)
            fb = first_bidder(cards)
            if "position" not in fb:
                r["fb"][2] += 1
            elif fb_names(fb, gmin):
                r["fb"][0] += 1
            else:
                r["fb"][1] += 1
    out = {}
    for name, r in rec.items():
        conf, right = np.array(r["conf"]), np.array(r["right"], bool)
        wrong_conf = np.sort(conf[~right])
        n = max(r["cards"], 1)
        out[name] = {
            "cards": r["cards"], "missed": r["missed"], "false_pos": r["false_pos"],
            f"exact@{CARD_MIN}": round(float(((conf >= CARD_MIN) & right).sum()) / n, 4),
            f"wrong@{CARD_MIN}": round(float(((conf >= CARD_MIN) & ~right).sum()) / n, 4),
            "highest_wrong_conf": round(float(wrong_conf[-1]), 4) if len(wrong_conf) else None,
            "exact_at": {str(t): round(float(((conf >= t) & right).sum()) / n, 4) for t in BARS},
            "wrong_at": {str(t): int(((conf >= t) & ~right).sum()) for t in BARS},
            "wrong_confidences_over_0.99": [round(float(c), 5) for c in wrong_conf[wrong_conf >= 0.99]],
            "first_bidder_right_wrong_abstain": r["fb"],
            "reliability": reliability(conf, right) if len(conf) else [],
        }
    return out


def main(argv=None) -> int:
    from companion.inputs import OneLineParser, cli_int, cli_out_file

    ap = OneLineParser(prog="python -m vision.calibrate", description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenes", type=cli_int(1, 100_000), default=100)
    ap.add_argument("--seed", type=cli_int(0, 2**31), default=9_300_000)
    ap.add_argument("--split", default="calibration", help="calibration (default); '' = the project's own faces")
    ap.add_argument("--json", type=cli_out_file(), default=None)
    a = ap.parse_args(argv)
    if a.split not in ("calibration", ""):
        ap.error("argument --split: thresholds are chosen on the calibration split (or the own faces, '') only")
    res = run(a.scenes, a.seed, a.split or None)
    for k, v in res.items():
        print(k, json.dumps({x: y for x, y in v.items() if x != "reliability"}))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
