"""Helpers for tests of the suited scanner's report switches."""

from __future__ import annotations

import json
from pathlib import Path


def folder_with_thresholds(tmp_path: Path, **th) -> Path:
    """``tmp_path`` as a models folder: links to every committed model file, with both suited readers' reports copied
    and ``th`` set in their thresholds."""
    from vision.detect import MODELS

    for f in MODELS.iterdir():
        (tmp_path / f.name).symlink_to(f)
    for deck in ("standard52", "island54"):
        rep = tmp_path / f"{deck}_reader.json"
        r = json.loads(rep.read_text())
        r["thresholds"].update(th)
        rep.unlink()
        rep.write_text(json.dumps(r))
    return tmp_path
