"""Helpers for tests that read the committed models from a folder of their own: links to the committed files, with
the readers' reports copied for the test to edit (the suited scanner's report switches, a candidate beside the
committed models)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path


def linked_models(dest: Path, copy: Iterable[str] = (), keep: Callable[[str], bool] | None = None) -> dict[str, dict]:
    """``dest`` (made if it is missing) as a models folder: a link to each committed model file whose name ``keep``
    accepts (None: every file), except the JSON reports named in ``copy``. Those are returned parsed, by name, for
    the test to edit and write into ``dest`` itself (``write_report``); the committed files are never written."""
    from vision.detect import MODELS

    copy = set(copy)
    dest.mkdir(parents=True, exist_ok=True)
    for f in MODELS.iterdir():
        if f.is_file() and f.name not in copy and (keep is None or keep(f.name)):
            (dest / f.name).symlink_to(f)
    return {name: json.loads((MODELS / name).read_text(encoding="utf-8")) for name in sorted(copy)}


def linked_with_report(dest: Path, deck: str, keep: Callable[[str], bool] | None = None) -> tuple[dict, Path]:
    """``linked_models`` with the deck's reader report copied: the report parsed, and the path to write it to."""
    name = f"{deck}_reader.json"
    return linked_models(dest, [name], keep)[name], dest / name


def write_report(path: Path, rep: dict) -> None:
    path.write_text(json.dumps(rep), encoding="utf-8")


def folder_with_thresholds(tmp_path: Path, **th) -> Path:
    """``tmp_path`` as a models folder: links to every committed model file, with both suited readers' reports copied
    and ``th`` set in their thresholds."""
    for name, rep in linked_models(tmp_path, [f"{deck}_reader.json" for deck in ("standard52", "island54")]).items():
        rep["thresholds"].update(th)
        write_report(tmp_path / name, rep)
    return tmp_path
