"""`python -m vision.corner_gpu average`: the parameter average of corner readers of one line of training (session 59:
the committed corner reader is the average of session 38's reader and its session-57 CPU continuation)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _net(seed: int, extra: int = 0):
    import torch

    from nets import trained_looking_batchnorms
    from vision.corner import make_net

    torch.manual_seed(seed)
    net = make_net(extra=extra)
    trained_looking_batchnorms(net)  # so folding them into the convolutions is tested too
    return net.eval()


def _reader_files(tmp: Path, seed: int, temperature: float):
    """One reader as both kinds `average` takes: its exported .onnx (heads divided by ``temperature``, the report
    beside it) and the state dict `train` writes (raw heads, its recipe beside it)."""
    import torch

    from vision.corner import export

    net = _net(seed)
    onnx_path = tmp / f"r{seed}.onnx"
    export(net, onnx_path, temperature)
    onnx_path.with_suffix(".json").write_text(json.dumps({"temperature": temperature}))
    pt = tmp / f"r{seed}_state.pt"
    torch.save(net.state_dict(), pt)
    pt.with_suffix(".json").write_text(json.dumps({"data_seed": 41}))
    return net, onnx_path, pt


def _logits(net, x):
    import torch

    with torch.no_grad():
        zr, zl, _f = net(torch.from_numpy(x))
    return zr.numpy(), zl.numpy()


def test_an_average_is_the_parameter_mean_with_the_heads_multiplied_back(tmp_path):
    import torch

    from vision.corner import make_net
    from vision.corner_gpu import _folded, average

    net, onnx_path, pt = _reader_files(tmp_path, 1, 1.7)
    # a reader averaged with itself, once as its export and once as its state dict, is that reader
    rec = average(tmp_path / "same.pt", [onnx_path, pt])
    assert rec["data_seed"] == 41 and rec["extra"] == 0
    same = make_net()
    same.load_state_dict(torch.load(tmp_path / "same.pt"))
    x = np.random.default_rng(0).normal(size=(6, 1, 56, 42)).astype(np.float32)
    for got, want in zip(_logits(same.eval(), x), _logits(net, x)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
    # two readers: the mean of their folded parameters, the temperatures taken out first
    _other, onnx2, _pt2 = _reader_files(tmp_path, 2, 0.8)
    average(tmp_path / "two.pt", [onnx_path, onnx2], data_seed=5)
    two = torch.load(tmp_path / "two.pt")
    a, _ = _folded(onnx_path, tmp_path / "a.onnx")
    b, _ = _folded(onnx2, tmp_path / "b.onnx")
    sa, sb = a.state_dict(), b.state_dict()
    assert set(two) == set(sa)
    for k, v in two.items():
        if v.dtype.is_floating_point:
            torch.testing.assert_close(v, (sa[k] + sb[k]) / 2)
    assert json.loads((tmp_path / "two.json").read_text())["data_seed"] == 5


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "vision.corner_gpu", "average", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def test_average_refuses_in_one_line_and_writes_nothing(tmp_path):
    import torch

    _net1, onnx1, pt1 = _reader_files(tmp_path, 1, 1.2)
    deeper = tmp_path / "deeper.pt"
    torch.save(_net(3, extra=1).state_dict(), deeper)
    nan = tmp_path / "nan.pt"
    sd = _net(4).state_dict()
    next(v for v in sd.values() if v.dtype.is_floating_point).view(-1)[0] = float("nan")
    torch.save(sd, nan)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"not a model")
    out = tmp_path / "out" / "avg.pt"
    out.parent.mkdir()
    cases = [
        ((out, onnx1), "at least two readers"),
        ((out, onnx1, deeper), "differ in depth"),
        ((out, onnx1, nan), "not finite"),
        ((out, onnx1, junk), "not a corner reader"),
        ((out, onnx1, tmp_path / "missing.onnx"), "no such file"),
        ((out, onnx1, onnx1), "no data seed"),
        ((tmp_path / "out" / "avg.txt", onnx1, pt1), "must end in .pt"),
        ((tmp_path / "nowhere" / "avg.pt", onnx1, pt1), "folder does not exist"),
    ]
    for args, why in cases:
        res = _cli(*args)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and res.stdout == "", (args, res.stderr)
        assert len(lines) == 1 and lines[0].startswith("pirate-table: error: ") and why in lines[0], (args, res.stderr)
        assert list((tmp_path / "out").iterdir()) == [], args
    res = _cli(out, onnx1, pt1)
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["average_of"] == [str(onnx1), str(pt1)]
    assert _cli(out, onnx1, pt1).returncode == 2  # nothing is overwritten
