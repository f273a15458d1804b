"""Abstention end to end: a card whose indices cannot be read is reported with rank null (never a guess), and
the first bidder is not named while that card might be the lowest; the rules get every candidate's odds."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
FIX = ROOT / "tests" / "fixtures" / "camera"
LABELS = json.loads((FIX / "labels.json").read_text())


def _smudged(tmp_path) -> tuple[Path, str]:
    """start_a.jpg with the lowest card's corners smeared beyond reading (a thumb, a coffee stain)."""
    name = "start_a"
    img = cv2.imread(str(FIX / f"{name}.jpg"))
    low = LABELS[name]["first_bidder"]
    g = next(c for c in LABELS[name]["cards"] if c["card"] == low)
    mask = np.zeros(img.shape[:2], np.uint8)
    for q in g["index_quads"]:  # the two printed indices, grown a little; the card's outline stays sharp
        q = np.array(q, np.float32)
        q = (q - q.mean(0)) * 1.3 + q.mean(0)
        cv2.fillConvexPoly(mask, np.round(q).astype(np.int32), 255)
    smeared = cv2.GaussianBlur(img, (0, 0), 7)
    img = np.where(mask[..., None] > 0, smeared, img)
    out = tmp_path / "smudged.jpg"
    cv2.imwrite(str(out), img)
    return out, low


def test_an_unreadable_card_is_null_and_the_first_bidder_is_not_named(tmp_path):
    path, low = _smudged(tmp_path)
    r = subprocess.run([sys.executable, "-m", "companion", "scan", str(path), "--json", "--first-bidder"],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    read = [c["card"] for c in out["cards"] if c["kind"] == "card"]
    assert low not in read  # never guessed
    others = [c["card"] for c in LABELS["start_a"]["cards"] if c["card"] != low]
    for c in out["cards"]:  # whatever is read is right
        assert c["card"] is None or c["card"] in others
    fb = out["first_bidder"]
    assert fb["card"] is None and fb["reason"] and "position" not in fb  # not named, not even by a rank
    assert all(0 <= c["p_lowest"] <= 1 for c in fb["candidates"])
    assert len(fb["candidates"]) >= 1
