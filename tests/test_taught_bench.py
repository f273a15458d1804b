"""vision.taught_bench: taught suited decks read on seat scenes, untaught and taught on the same frames."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_taught_bench_counts_every_card_once_per_reading(tmp_path):
    from vision.taught_bench import main

    out = tmp_path / "taught.json"
    assert main(["--decks", "island54", "--split", "calibration", "--styles", "1", "--scenes", "2", "--seed", "710",
                 "--json", str(out)]) == 0
    r = json.loads(out.read_text())["island54"]
    assert r["split"] == "calibration" and not r["refused"]
    assert r["per_style"][0]["seed"] == 710
    for key in ("untaught", "taught"):
        f = r[key]
        assert f["cards"] > 0 and f["exact"] + f["wrong"] + f["unread"] == f["cards"]
    assert r["taught"]["cards"] == r["untaught"]["cards"]  # the same frames
    assert r["taught"]["wrong"] == 0
    # this style's cards (Museum Bible, jumbo index, bold symbols; 2026-11-29: 8 of 8 untaught and taught) are read
    assert r["taught"]["exact"] >= r["taught"]["cards"] - 1


def test_bad_arguments_are_one_line_and_exit_2():
    for args in (["--decks", "pirates72"], ["--split", "everything"], ["--styles", "0"], ["--seed", "-1"]):
        r = subprocess.run([sys.executable, "-m", "vision.taught_bench", *args], cwd=ROOT, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 2 and r.stdout == "", (args, r)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pirate-table: error: "), (args, r.stderr)
