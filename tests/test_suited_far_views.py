"""Training scenes seen from twice as far (``--far-share``, session 75): the train split's scenes only, cut from the
shrunk frame, and with no far share the views are made from the same random numbers as before the option."""

from __future__ import annotations

import numpy as np
import pytest

import vision.suited_reader as sr


def _chunk(*far, split="train", seed=75_001):
    return sr._scene_chunk((seed, 1, split, "standard52", ("start",), *far))


def _needs_fonts():
    from vision.fonts import split_fonts

    if not split_fonts("train"):
        pytest.fail("no TrueType fonts installed (scripts/system-deps.sh train)")


def test_no_far_share_makes_the_very_views_of_the_recipe_before_it():
    _needs_fonts()
    a, b = _chunk(), _chunk(0.0)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and len(a[0]) > 8


def test_a_full_share_cuts_the_views_from_the_frame_seen_from_twice_as_far(monkeypatch):
    _needs_fonts()
    import vision.synth.suited as su

    shrunk = []
    orig = su.far_scene
    monkeypatch.setattr(su, "far_scene", lambda sc, *a, **k: shrunk.append(sc.seed) or orig(sc, *a, **k))
    near, far = _chunk(), _chunk(1.0)
    assert len(shrunk) == 1
    # the same cards, their views cut from another (smaller, softer) picture of them
    assert set(near[1][near[1] < 13].tolist()) == set(far[1][far[1] < 13].tolist())
    assert not all(np.array_equal(x, y) for x, y in zip(near[0], far[0]))
    # detail is lost at half size: the labelled views are smoother
    assert _sharpness(far[0], far[1]) < _sharpness(near[0], near[1])


def _sharpness(C, R) -> float:
    return float(np.mean([np.abs(np.diff(c.astype(float), axis=1)).mean() for c in C[R < 13]]))


def test_the_module_setting_is_the_share_when_none_is_given(monkeypatch):
    """``vision.suited_gpu``'s workers make their scene chunks without a far share: FAR_SHARE (carried to them by
    WORKER_SETTINGS from ``train --far-share``) decides."""
    _needs_fonts()
    import vision.suited_gpu as sg
    import vision.synth.suited as su

    assert "FAR_SHARE" in sg.WORKER_SETTINGS["vision.suited_reader"]
    shrunk = []
    orig = su.far_scene
    monkeypatch.setattr(su, "far_scene", lambda sc, *a, **k: shrunk.append(sc.seed) or orig(sc, *a, **k))
    monkeypatch.setattr(sr, "FAR_SHARE", 1.0)
    _chunk()
    assert len(shrunk) == 1


def test_the_far_share_is_the_train_splits_only(monkeypatch):
    _needs_fonts()
    import vision.synth.suited as su

    monkeypatch.setattr(su, "far_scene", lambda *a, **k: pytest.fail("a calibration scene was shrunk"))
    _chunk(1.0, split="calibration")


@pytest.mark.parametrize("bad", ["-0.1", "1.5", "nan", "inf", "\u0660.5", "half"])
def test_the_recipe_refuses_a_bad_far_share_in_one_line_and_writes_nothing(tmp_path, capsys, bad):
    out = tmp_path / "out"
    try:
        rc = sr.main(["--deck", "standard52", "--far-share", bad, "--out", str(out), "--work", str(tmp_path / "w")])
    except SystemExit as e:  # the argument parser's own refusal (one line, exit 2)
        rc = e.code
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and err[0].startswith("pirate-table: error: ") and "--far-share" in err[0]
    assert not out.exists() and not (tmp_path / "w").exists()


def test_the_recipe_records_its_far_share(tmp_path):
    import json

    rc = sr.main(["--deck", "standard52", "--smoke", "--far-share", "0.5", "--out", str(tmp_path / "out"),
                  "--work", str(tmp_path / "w")])
    rec = json.loads((tmp_path / "out" / "standard52_reader.json").read_text())["recipe"]
    assert rc == 0 and rec["far_share"] == 0.5
