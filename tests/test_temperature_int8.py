"""The readers' temperature: fitted on a fine grid, then again where the runtime reads (the int8 file)."""

import math

import numpy as np
import pytest

from vision import corner as cr


def _nll(zr, zl, R, L, t):
    pr, pl = cr._softmax(zr / t), cr._softmax(zl / t)
    lab = L >= 0
    return (-np.log(np.maximum(pr[np.arange(len(R)), R], 1e-12)).mean()
            - np.log(np.maximum(pl[np.arange(len(L))[lab], L[lab]], 1e-12)).mean())


def test_the_temperature_grid_finds_the_least_nll_between_the_old_grids_points():
    """Labels drawn from softmax(z), logits handed over as z times T*: the NLL is least near T*. T* is set halfway
    between two points of the grid used until session 88 (3.5 % steps), so only a finer grid lands within 1 %."""
    rng = np.random.default_rng(5)
    n = 60_000
    z_r, z_l = rng.normal(0, 2.5, (n, 10)), rng.normal(0, 2.5, (n, 4))
    R = np.array([rng.choice(10, p=p) for p in cr._softmax(z_r)])
    L = np.array([rng.choice(4, p=p) for p in cr._softmax(z_l)])
    L[::7] = -100  # unlabelled suits count for the rank head only
    T_star = 0.5 * 8 ** (30.5 / 60)
    zr, zl = z_r * T_star, z_l * T_star
    T = cr.fit_temperature(zr, zl, R, L)
    dense = np.exp(np.linspace(math.log(T_star) - 0.1, math.log(T_star) + 0.1, 801))
    best = dense[int(np.argmin([_nll(zr, zl, R, L, t) for t in dense]))]
    assert T in cr.TEMPERATURE_GRID
    assert abs(math.log(T / best)) <= math.log(cr.TEMPERATURE_GRID[1] / cr.TEMPERATURE_GRID[0])
    assert abs(T / T_star - 1) < 0.01
    old = np.exp(np.linspace(math.log(0.5), math.log(4.0), 61))
    assert abs(cr.fit_temperature(zr, zl, R, L, old) / T_star - 1) > 0.01  # what the old grid gave: a step off
    assert cr.INT8_FACTORS[45] == 1.0 and cr.INT8_FACTORS[0] == pytest.approx(0.8)


def test_calibrated_int8_folds_the_temperature_the_int8_file_wants_into_both_files(tmp_path):
    """A small random reader: the float fit, the int8 file's factor, and the files exported and quantized at their
    product; the int8 file's logits, fitted once more, want no further factor (within one step)."""
    import cv2
    import torch

    torch.manual_seed(3)
    net = cr.make_net(in_ch=3, n_rank=6, n_letter=4)
    rng = np.random.default_rng(7)
    coarse = rng.integers(0, 256, (600, 3, 3, 3), dtype=np.uint8)  # smooth colour fields: crops the net tells apart
    X = cr.normalize(np.stack([cv2.resize(c, (cr.CORNER_W, cr.CORNER_H)) for c in coarse]))
    for m in net.modules():  # batch norm set to these crops (a fresh net's logits barely move from crop to crop)
        if isinstance(m, torch.nn.BatchNorm2d):
            m.momentum = None
            m.reset_running_stats()
    net.train()
    with torch.no_grad():
        net(torch.from_numpy(X))
        net.rank.weight *= 8
        net.letter.weight *= 8
    net.eval()
    onnx = tmp_path / "r.onnx"
    cr.export(net, onnx)  # as training leaves it: temperature 1
    z1r, z1l, _ = cr.logits(onnx, X)
    # labels that make the float net about twice too sure: drawn from its logits halved
    R = np.array([rng.choice(6, p=p) for p in cr._softmax(z1r / 2)])
    L = np.array([rng.choice(4, p=p) for p in cr._softmax(z1l / 2)])
    rep = cr.calibrated_int8(net, onnx, tmp_path / "r.int8.onnx", X, R, L, X[:256])
    assert set(rep) == {"temperature", "temperature_fp32", "int8_factor", "int8_factor_after"}
    assert rep["temperature"] == pytest.approx(rep["temperature_fp32"] * rep["int8_factor"], abs=2e-4)
    assert rep["temperature_fp32"] == pytest.approx(cr.fit_temperature(z1r, z1l, R, L), abs=1e-4)
    assert 1.6 < rep["temperature"] < 2.5  # the net is about twice too sure of these labels
    step = math.log(cr.INT8_FACTORS[46])
    assert abs(math.log(rep["int8_factor_after"])) <= step + 1e-9
    # both files hold the final temperature: the float file's logits are the untempered ones over it
    zr, zl, _ = cr.logits(onnx, X)
    np.testing.assert_allclose(zr, z1r / rep["temperature"], rtol=2e-3, atol=2e-3)
    z8r, z8l, _ = cr.logits(tmp_path / "r.int8.onnx", X)
    assert cr.fit_temperature(z8r, z8l, R, L, cr.INT8_FACTORS) == pytest.approx(rep["int8_factor_after"], abs=1e-4)
    assert (z8r.argmax(1) == zr.argmax(1)).mean() > 0.8  # the int8 file reads as the float one does


def test_calibrated_int8_keeps_the_temperature_within_the_grids_range(tmp_path, monkeypatch):
    """A reader whose float fit sits at the grid's top (4, as a barely trained one does) gets no factor above 1: the
    temperature stays at most 4 (a smoke run's reader once landed at 5)."""
    import torch

    torch.manual_seed(1)
    net = cr.make_net(in_ch=3, n_rank=6, n_letter=4).eval()
    X = cr.normalize(np.random.default_rng(2).integers(0, 256, (64, cr.CORNER_H, cr.CORNER_W, 3), dtype=np.uint8))
    onnx = tmp_path / "r.onnx"
    cr.export(net, onnx)
    R, L = np.arange(64) % 6, np.arange(64) % 4
    calls = []

    def fit(zr, zl, R_, L_, grid=None):  # the float fit at the top; the int8 file would want 1.25 more if it could
        calls.append(None if grid is None else np.asarray(grid))
        return cr.TEMPERATURE_GRID[-1] if grid is None else float(np.max(grid))

    monkeypatch.setattr(cr, "fit_temperature", fit)
    rep = cr.calibrated_int8(net, onnx, tmp_path / "r.int8.onnx", X, R, L, X)
    assert rep["temperature_fp32"] == pytest.approx(4.0) and rep["int8_factor"] == 1.0
    assert rep["temperature"] == pytest.approx(4.0)
    assert calls[1].max() == 1.0 and calls[1].min() == pytest.approx(0.8)  # the factors offered: none above 1
