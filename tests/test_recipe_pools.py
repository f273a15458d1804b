"""The GPU recipes' worker pools (``vision.corner_gpu.spawn_pool``): spawned workers, which inherit nothing from the
process that starts them, make byte for byte what that process would make from the same packed fonts with the
settings it chose (session 71: the reader recipes' pools were forked, the hazard that hung det_gpu's tile workers)."""

import numpy as np
import pytest

import vision.corner
import vision.fonts
import vision.suited_gpu
import vision.suited_reader
from vision.corner import _crops_chunk, focus_codes
from vision.corner_gpu import WORKER_SETTINGS, _packed_fonts, module_settings, pack, spawn_pool
from vision.suited_gpu import _views_chunk


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
        else:
            assert x == y


def _spawned(pack_dir, settings, fn, jobs):
    """``fn`` over ``jobs`` by two spawned workers of ``spawn_pool(pack_dir, 2, settings)``."""
    pool = spawn_pool(pack_dir, 2, settings)
    try:
        return pool.map(fn, jobs)
    finally:
        pool.terminate()
        pool.join()


def _packed_here(monkeypatch, pack_dir):
    fonts = _packed_fonts(pack_dir)
    monkeypatch.setattr(vision.fonts, "split_fonts", lambda split: fonts)  # undone after the test


def test_module_settings_are_this_processs_values_and_a_name_a_module_lacks_is_refused(monkeypatch):
    monkeypatch.setattr(vision.corner, "LOWER_SHARE", 0.42)
    got = module_settings(WORKER_SETTINGS)
    assert list(got) == ["vision.corner"] and got["vision.corner"]["LOWER_SHARE"] == 0.42
    assert set(got["vision.corner"]) == set(WORKER_SETTINGS["vision.corner"])
    with pytest.raises(AttributeError):
        module_settings({"vision.corner": ("NO_SUCH_SHARE",)})


@pytest.mark.slow
def test_spawned_workers_make_this_processs_cards_with_the_settings_it_chose(tmp_path, monkeypatch):
    pack(tmp_path, 2)
    monkeypatch.setattr(vision.corner, "LOWER_SHARE", 0.9)
    ranks, letters = focus_codes("0,8", "H")
    monkeypatch.setattr(vision.corner, "FOCUS_RANKS", ranks)
    monkeypatch.setattr(vision.corner, "FOCUS_LETTERS", letters)
    monkeypatch.setattr(vision.corner, "FOCUS_SHARE", 0.8)
    jobs = [(seed, 12, "train", False) for seed in (71_000, 71_001)]
    pooled = _spawned(tmp_path, module_settings(WORKER_SETTINGS), _crops_chunk, jobs)
    _packed_here(monkeypatch, tmp_path)
    for job, part in zip(jobs, pooled):
        _same(part, _crops_chunk(job))
    monkeypatch.setattr(vision.corner, "FOCUS_RANKS", ())  # the settings matter for these cards: without them, others
    monkeypatch.setattr(vision.corner, "FOCUS_LETTERS", ())
    monkeypatch.setattr(vision.corner, "LOWER_SHARE", 0.1)
    assert any(part[0].tobytes() != _crops_chunk(job)[0].tobytes() for job, part in zip(jobs, pooled))


@pytest.mark.slow
def test_spawned_workers_make_this_processs_suited_views_with_the_settings_it_chose(tmp_path, monkeypatch):
    vision.suited_gpu.pack(tmp_path, families=2)
    monkeypatch.setattr(vision.suited_reader, "LOWER_RANK_SHARE", 0.9)
    monkeypatch.setattr(vision.suited_reader, "FAR_SHARE", 1.0)  # every scene seen from twice as far (session 75)
    monkeypatch.setattr(vision.suited_reader, "INK_SHARES", vision.suited_reader.ink_shares(0.7))  # and no print ink
    small = {"vision.suited_gpu": {"CARDS_PER_CHUNK": 10, "SCENES_PER_CHUNK": 1}}  # chunks of a test's size
    for name, v in small["vision.suited_gpu"].items():
        monkeypatch.setattr(vision.suited_gpu, name, v)
    jobs = [("cards", 71_000, "standard52"), ("scenes", 71_300, "standard52"), ("cards", 71_001, "island54")]
    pooled = _spawned(tmp_path, {**module_settings(vision.suited_gpu.WORKER_SETTINGS), **small}, _views_chunk, jobs)
    _packed_here(monkeypatch, tmp_path)
    assert [p[0] for p in pooled] == [j[0] for j in jobs] and len(pooled[0][2]) >= 10
    for job, part in zip(jobs, pooled):
        _same(part, _views_chunk(job))
    monkeypatch.setattr(vision.suited_reader, "LOWER_RANK_SHARE", 0.1)  # the setting matters: without it, others
    assert any(part[1].tobytes() != _views_chunk(job)[1].tobytes() for job, part in zip(jobs, pooled))
    monkeypatch.setattr(vision.suited_reader, "FAR_SHARE", 0.0)  # ... and so does the far share, for the scenes
    assert pooled[1][1].tobytes() != _views_chunk(jobs[1])[1].tobytes()
    monkeypatch.setattr(vision.suited_reader, "LOWER_RANK_SHARE", 0.9)
    monkeypatch.setattr(vision.suited_reader, "INK_SHARES", vision.suited_reader.ink_shares(0.15))  # ... and the inks
    assert pooled[0][1].tobytes() != _views_chunk(jobs[0])[1].tobytes()
