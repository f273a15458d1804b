"""vision.taught_bench: taught suited decks read on seat scenes, untaught and taught on the same frames."""

from __future__ import annotations

import json
import os
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


def test_bad_arguments_are_one_line_and_exit_2(tmp_path):
    """Refused before any work, nothing written; a --json the run could not write at its end is refused at once, in
    this bench and the other two that take one."""
    bad_json = [["--json", str(tmp_path / "no" / "such" / "out.json")], ["--json", str(tmp_path)],
                ["--json", "out\x07.json"]]
    cases = [("vision.taught_bench", a) for a in (["--decks", "pirates72"], ["--split", "everything"], ["--styles", "0"],
                                                  ["--seed", "-1"], *bad_json)]
    cases += [(m, a) for m in ("vision.suited_bench", "vision.calibrate") for a in bad_json]
    for module, args in cases:
        r = subprocess.run([sys.executable, "-m", module, *args], cwd=tmp_path, capture_output=True, text=True,
                           timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert r.returncode == 2 and r.stdout == "", (module, args, r)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("pirate-table: error: "), (module, args, r.stderr)
        assert sorted(p.name for p in tmp_path.iterdir()) == [], (module, args)  # nothing written
