"""The digit look (session 86): a second network's word on the ranks the suited reader is unsure of.

The suited decks' readers (``vision.suited_reader``) and the Pirate's Bluff corner reader (``corner_reader.int8.onnx``,
``vision.corner``) are two networks trained on different cards: the corner reader has read the digits 0-8 (its own
deck's ranks) in the train split's type designs, and never a suited deck's face. Where the suited reader's rank head is unsure
of a view (its largest rank probability under ``below``), the corner reader reads the same view in grey. What it says
is an observation ``o``: its surest rank class (0-8, or 9: no index upright here) and how sure it is of it (a bin of
``BINS``). A table fitted on calibration-split views, ``T[r, o] = P(o | the view's true class r)`` (the deck's ranks
and "no index"), turns the observation into evidence, and the suited rank head is multiplied by ``T[:, o] ** power``
and renormalised. The corner reader never names a card: a standard 10 or an Island Q is just what it makes of them,
learned in the table (a 10 is mostly read 0 or 1, a Q mostly 0).

Fitted and switched on per deck in its reader's report (``thresholds.digit_look``; the table under ``digit_look``)::

    python -m vision.digit_look fit --deck standard52 --table-seed 777300 --choose-seed 777400 --cards 2400 --out DIR

``DIR`` a folder holding (links to) the deck's reader and its report; the report there is rewritten (never through a
link) with the table and the power chosen, and the look switched on. The power is the one (of ``POWERS``) that reads
the most view ranks right at the deck's ``index_rank`` bar on the second set of views, among those that read no more
ranks wrongly there than the suited reader alone; with none, nothing is written (exit 2).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from vision import corner as cr

DIGIT_READER = "corner_reader.int8.onnx"
BINS = (0.0, 0.5, 0.9, 0.99, 0.999)  # the corner reader's confidence bins (lower edges)
N_CLASSES = 10  # the corner reader's rank classes: 0-8 and "no index upright here"
BELOW = 0.999  # views whose largest rank probability (no index excluded) is under this are read again
POWERS = (0.25, 0.5, 0.75, 1.0)
SMOOTH = 0.5  # add-one-half counts in the table


def observation(q: np.ndarray) -> np.ndarray:
    """The corner reader's rank probabilities [N, 10] -> observation indices [N] (class * len(BINS) + bin)."""
    k = q.argmax(1)
    b = np.searchsorted(np.array(BINS), q.max(1), side="right") - 1
    return k * len(BINS) + np.clip(b, 0, len(BINS) - 1)


def fit_table(classes: np.ndarray, obs: np.ndarray, n_classes: int) -> np.ndarray:
    """P(observation | class) [n_classes, 10 * len(BINS)] from labelled views, add-SMOOTH counts."""
    t = np.full((n_classes, N_CLASSES * len(BINS)), SMOOTH)
    np.add.at(t, (classes, obs), 1.0)
    return t / t.sum(1, keepdims=True)


def fuse(pr: np.ndarray, q: np.ndarray, table: np.ndarray, power: float, below: float = BELOW,
         confirm: bool = False) -> np.ndarray:
    """The suited rank head [N, ranks + 1] with the corner reader's evidence ``q`` [N, 10] multiplied in where the view
    is unsure (largest rank probability under ``below``); the other rows unchanged. ``confirm``: only where the
    product leaves the view's likeliest rank where it was (the corner reader may make the suited reader surer of its
    own leaning, never turn it to another rank)."""
    out = pr.copy()
    sel = pr[:, :-1].max(1) < below
    if sel.any():
        f = pr[sel] * table[:, observation(q[sel])].T ** power
        f /= f.sum(1, keepdims=True)
        if confirm:
            keep = f[:, :-1].argmax(1) == pr[sel, :-1].argmax(1)
            f[~keep] = pr[sel][~keep]
        out[sel] = f
    return out


@dataclass
class DigitLook:
    """A deck's fitted digit look and the corner reader's session."""

    table: np.ndarray
    power: float
    below: float
    sess: object
    confirm: bool = False
    far: bool = True  # also in frames that look far (the detector's looked_far: the scanner's far bars)

    def apply(self, crops: np.ndarray, pr: np.ndarray) -> np.ndarray:
        """``crops``: the views' colour crops (uint8 [N, H, W, 3], BGR); ``pr``: the suited rank head [N, ranks + 1]."""
        sel = pr[:, :-1].max(1) < self.below
        if not sel.any():
            return pr
        grey = np.stack([cv2.cvtColor(c, cv2.COLOR_BGR2GRAY) for c in crops[sel]])
        q = np.zeros((len(pr), N_CLASSES))
        q[sel] = cr._softmax(self.sess.run(None, {"crop": cr.normalize(grey)})[0])
        return fuse(pr, q, self.table, self.power, self.below, self.confirm)


def load(report: Path, n_ranks: int, models: Path, threads: int = 2) -> DigitLook:
    """The digit look of a reader's report (its ``digit_look`` entry), with the corner reader from ``models`` (or the
    committed one). ValueError naming the file for a table of the wrong shape, a probability that is no number or out
    of range, or a power or bar out of range: a nonsense table would decide reads."""
    from vision.ortsession import session

    try:
        d = json.loads(report.read_text(encoding="utf-8")).get("digit_look")
    except (OSError, UnicodeDecodeError, ValueError, AttributeError) as e:
        raise ValueError(f"{report.name}: not a reader's report ({type(e).__name__})") from None
    if not isinstance(d, dict):
        raise ValueError(f"{report.name}: 'digit_look' is switched on but the report has no table for it")
    power, below, table = d.get("power"), d.get("below"), d.get("table")
    for name, v, lo, hi in (("power", power, 0.0, 4.0), ("below", below, 0.0, 1.01)):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo < v <= hi:
            raise ValueError(f"{report.name}: digit_look {name} must be a number over {lo:g} and at most {hi:g}, "
                             f"not {str(v)[:40]!r}")
    confirm, far = d.get("confirm", False), d.get("far", True)
    for name, v in (("confirm", confirm), ("far", far)):
        if not isinstance(v, bool):
            raise ValueError(f"{report.name}: digit_look {name} must be true or false, not {str(v)[:40]!r}")
    if d.get("bins") != list(BINS):
        raise ValueError(f"{report.name}: digit_look bins must be {list(BINS)}")
    shape = (n_ranks + 1, N_CLASSES * len(BINS))
    try:
        t = np.array(table, dtype=np.float64)
    except (TypeError, ValueError):
        t = None
    if t is None or t.shape != shape or not np.isfinite(t).all() or (t <= 0).any() or (t > 1).any() \
            or not np.allclose(t.sum(1), 1.0, atol=1e-6):
        raise ValueError(f"{report.name}: digit_look table must be {shape[0]} x {shape[1]} probabilities over 0 "
                         f"(each row summing to 1)")
    return DigitLook(t, float(power), float(below), session(digit_reader(models), threads), confirm, far)


def digit_reader(models: Path) -> Path:
    """The corner reader in the folder ``models``, or the committed one where the folder has none."""
    from vision.suited_reader import MODELS

    path = Path(models) / DIGIT_READER
    return path if path.exists() else MODELS / DIGIT_READER


# ------------------------------------------------------------------ fitting (calibration split only)
def _views(deck: str, cards: int, seed: int, reader: Path, threads: int, workers: int):
    """Calibration views of ``cards`` cards: (classes, suited rank head, suit head, corner reader's rank probabilities)."""
    from vision.suited_reader import gen_suited_crops

    X, R = gen_suited_crops(deck, cards, seed, split="calibration", workers=workers)[:2]
    zr, zl, _ = cr.logits(reader, cr.normalize(X), threads)
    grey = np.stack([cv2.cvtColor(x, cv2.COLOR_BGR2GRAY) for x in X])
    q = cr._softmax(cr.logits(digit_reader(Path(reader).parent), cr.normalize(grey), threads)[0])
    return np.asarray(R), cr._softmax(zr), cr._softmax(zl), q


def rank_counts(R, pr, pl, bar: float) -> tuple[int, int, int]:
    """(views with an index, ranks right at ``bar``, ranks wrong at ``bar``): the rank's probability summed over the
    suits of the code posterior, as the scanner's rank bars read it."""
    n_ranks = pr.shape[1] - 1
    m = R < n_ranks
    p = cr.code_probs(pr[m], pl[m]).reshape(int(m.sum()), n_ranks, pl.shape[1]).sum(2)
    sure = p.max(1) >= bar
    right = p.argmax(1) == R[m]
    return int(m.sum()), int((sure & right).sum()), int((sure & ~right).sum())


def fit(deck: str, out: Path, table_seed: int, choose_seed: int, cards: int, threads: int = 2, workers: int = 1,
        log=print, power: float | None = None) -> dict | None:
    """Fit the table on ``table_seed``'s views and choose the power on ``choose_seed``'s (or take ``power``, still
    printing every power's figures); write it into ``out``'s report and switch the look on. None: no power chosen."""
    from vision.suited_reader import deck_codes, report_thresholds

    codes = deck_codes(deck)
    reader = out / f"{codes.deck_id}_reader.int8.onnx"
    rep_path = out / f"{codes.deck_id}_reader.json"
    if rep_path.is_symlink():  # before any work: finish never writes through a link to the committed report
        raise ValueError(f"{rep_path}: a link (to the committed report?); copy it into the folder first")
    bar = float(report_thresholds(rep_path)["index_rank"])
    R, pr, pl, q = _views(deck, cards, table_seed, reader, threads, workers)
    n_ranks = pr.shape[1] - 1
    table = fit_table(R, observation(q), n_ranks + 1)
    R2, pr2, pl2, q2 = _views(deck, cards, choose_seed, reader, threads, workers)
    n, right0, wrong0 = rank_counts(R2, pr2, pl2, bar)
    rows = {"alone": {"right": right0, "wrong": wrong0}}
    best = None
    for t in POWERS:
        _, right, wrong = rank_counts(R2, fuse(pr2, q2, table, t), pl2, bar)
        rows[str(t)] = {"right": right, "wrong": wrong}
        log(f"{deck}: power {t}: {right} / {wrong} ranks right / wrong at {bar} of {n} views (alone {right0} / {wrong0})")
        if wrong <= wrong0 and (best is None or right > rows[str(best)]["right"]):
            best = t
    chosen = "no more ranks wrong than the reader alone"
    if power is not None:
        best, chosen = power, "given"
        if str(power) not in rows:
            _, right, wrong = rank_counts(R2, fuse(pr2, q2, table, power), pl2, bar)
            rows[str(power)] = {"right": right, "wrong": wrong}
    result = {"table_views": int(len(R)), "choose_views_with_index": n, "bar": bar, "by_power": rows, "power": best,
              "power_chosen_by": chosen, "table_seed": table_seed, "choose_seed": choose_seed, "cards": cards}
    if best is None:
        return None
    rep = json.loads(rep_path.read_text(encoding="utf-8"))
    rep["thresholds"]["digit_look"] = True
    rep["digit_look"] = {"power": best, "below": BELOW, "bins": list(BINS), "reader": DIGIT_READER,
                         "table": [[round(float(x), 8) for x in row] for row in table / table.sum(1, keepdims=True)],
                         "fit": result}
    rep_path.write_text(json.dumps(rep, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m vision.digit_look", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fit", help="fit a deck's digit look on calibration views and switch it on in DIR's report")
    f.add_argument("--deck", required=True, choices=("standard52", "island54"))
    f.add_argument("--out", type=Path, required=True)
    f.add_argument("--table-seed", type=int, required=True)
    f.add_argument("--choose-seed", type=int, required=True)
    f.add_argument("--cards", type=int, default=2400)
    f.add_argument("--threads", type=int, default=2)
    f.add_argument("--workers", type=int, default=1)
    f.add_argument("--power", type=float, help="take this power instead of choosing one (0 to 4)")
    a = ap.parse_args(argv)
    try:
        if a.cards < 1 or a.threads < 1 or a.workers < 1:
            raise ValueError("--cards, --threads and --workers must be at least 1")
        if a.power is not None and not (math.isfinite(a.power) and 0 < a.power <= 4):
            raise ValueError(f"--power must be a number over 0 and at most 4, not {a.power}")
        if not (a.out / f"{a.deck}_reader.json").exists():
            raise ValueError(f"{a.out}: no {a.deck}_reader.json there")
        res = fit(a.deck, a.out, a.table_seed, a.choose_seed, a.cards, a.threads, a.workers, power=a.power)
    except ValueError as e:
        print(f"pirate-table: error: digit_look: {e}", file=sys.stderr)
        return 2
    if res is None:
        print("pirate-table: error: digit_look: no power reads as few ranks wrongly as the reader alone; nothing "
              "written", file=sys.stderr)
        return 2
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
