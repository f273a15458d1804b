"""int8 models that every x86-64 CPU sums exactly (vision.ortsession): the committed ones have unsigned weights and
are marked; making weights unsigned keeps every float weight; the fused session gives what the int8 model means
(the unfused one) on this machine, whatever its CPU; a model with signed weights is run unfused where its fusion is not
exact."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

from vision import ortsession
from vision.ortsession import MARK, session, session_options, unsigned_weights

MODELS = Path(__file__).resolve().parents[1] / "models"
INT8 = sorted(MODELS.glob("*.int8.onnx"))


def dequantized_weights(m) -> dict[str, np.ndarray]:
    """Every constant that a DequantizeLinear reads, as the float it stands for."""
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    out = {}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.input[0] in inits and inits[n.input[0]].dtype in (np.int8, np.uint8):
            w, s, z = (inits[x] for x in n.input[:3])
            axis = next((onnx.helper.get_attribute_value(a) for a in n.attribute if a.name == "axis"), 1)
            shape = [1] * w.ndim
            if s.ndim:
                shape[axis] = -1
            out[n.input[0]] = (w.astype(np.float64) - z.reshape(shape)) * s.reshape(shape)
    return out


def signed_copy(src: Path, dst: Path) -> None:
    """The model at ``src`` with its unsigned weights made signed again and its mark removed (as quantize_static
    wrote it before vision.ortsession)."""
    m = onnx.load(str(src))
    inits = {i.name: i for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.input[0] in inits and inits[n.input[0]].data_type == onnx.TensorProto.UINT8:
            for name in (n.input[0], n.input[2]):
                t = inits[name]
                t.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(t).astype(np.int16) - 128).astype(np.int8), name))
    del m.metadata_props[:]
    onnx.save(m, str(dst))


def test_every_committed_int8_model_has_unsigned_weights_and_the_mark():
    assert len(INT8) >= 10
    for f in INT8:
        m = onnx.load(str(f))
        inits = {i.name: i.data_type for i in m.graph.initializer}
        dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits]
        assert dq, f.name
        assert not [n.name for n in dq if inits[n.input[0]] == onnx.TensorProto.INT8], f.name
        assert {p.key: p.value for p in m.metadata_props}.get(MARK) == "uint8", f.name
        assert ortsession._marked(f), f.name  # and session() finds the mark in the file


def test_unsigned_weights_keep_every_float_weight_and_the_models_outputs(tmp_path):
    src = MODELS / "corner_reader.int8.onnx"
    signed, back = tmp_path / "signed.int8.onnx", tmp_path / "back.int8.onnx"
    signed_copy(src, signed)
    before = dequantized_weights(onnx.load(str(signed)))
    assert any(v.size > 100 for v in before.values())
    n = unsigned_weights(signed, back)
    assert n == len(before) == 9
    after = dequantized_weights(onnx.load(str(back)))
    assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before)
    # the same bytes as the committed model (both made from the same signed weights)
    assert [i.raw_data for i in onnx.load(str(back)).graph.initializer] == \
           [i.raw_data for i in onnx.load(str(src)).graph.initializer]
    assert unsigned_weights(back) == 0  # nothing signed left: only the mark written again


def test_unsigned_weights_refuse_a_shared_zero_point_and_write_nothing(tmp_path):
    signed = tmp_path / "signed.int8.onnx"
    signed_copy(MODELS / "corner_reader.int8.onnx", signed)
    m = onnx.load(str(signed))
    int8 = {i.name for i in m.graph.initializer if i.data_type == onnx.TensorProto.INT8}
    dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in int8]
    dq[1].input[2] = dq[0].input[2]  # two weights' nodes reading one zero point
    bad = tmp_path / "bad.int8.onnx"
    onnx.save(m, str(bad))
    before = bad.read_bytes()
    with pytest.raises(ValueError, match="shared"):
        unsigned_weights(bad, tmp_path / "out.int8.onnx")
    assert bad.read_bytes() == before and not (tmp_path / "out.int8.onnx").exists()


@pytest.mark.parametrize("name", ["corner_reader.int8.onnx", "second_reader.int8.onnx", "standard52_reader.int8.onnx",
                                  "island54_reader.int8.onnx"])
def test_the_fused_session_reads_what_the_int8_model_means_on_this_cpu(name):
    """Fused (integer kernels) against unfused (DequantizeLinear -> float Conv -> QuantizeLinear): with unsigned weights
    they agree on every CPU. With signed weights on a CPU without VNNI they did not (the module's docstring: 60.8 %
    against 92.2 % code accuracy): this test fails there if a committed model is signed again."""
    import onnxruntime as ort

    from vision.corner import CORNER_H, CORNER_W

    path = MODELS / name
    fused = ort.InferenceSession(str(path), session_options(2, fuse=True), providers=["CPUExecutionProvider"])
    unfused = ort.InferenceSession(str(path), session_options(2, fuse=False), providers=["CPUExecutionProvider"])
    ch = fused.get_inputs()[0].shape[1]
    rng = np.random.default_rng(11)
    # smooth random images in the normalised range: bright and dark areas, as views of cards are
    x = rng.normal(0, 1, (64, ch, CORNER_H // 7 + 1, CORNER_W // 7 + 1)).astype(np.float32)
    x = np.repeat(np.repeat(x, 7, 2), 7, 3)[:, :, :CORNER_H, :CORNER_W] * 1.5
    a, b = fused.run(None, {"crop": x}), unfused.run(None, {"crop": x})
    for za, zb in zip(a[:2], b[:2]):  # rank, then letter or suit
        # the heads' outputs are quantized too: the two paths may differ by a step there, rarely in the choice (the
        # signed models here: 38-61 % of the same letters or suits, 1-4 logits apart)
        assert float((za.argmax(1) == zb.argmax(1)).mean()) >= 0.95, name
        assert float(np.abs(za - zb).mean()) < 0.1 * float(np.abs(zb).mean()), name


def test_a_signed_model_is_run_unfused_where_its_fusion_is_not_exact(tmp_path, monkeypatch):
    import onnxruntime as ort

    from vision.corner import CORNER_H, CORNER_W

    signed = tmp_path / "corner_reader.int8.onnx"
    signed_copy(MODELS / "corner_reader.int8.onnx", signed)
    x = np.random.default_rng(3).normal(0, 1, (8, 1, CORNER_H, CORNER_W)).astype(np.float32)
    assert ortsession._marked(MODELS / "corner_reader.int8.onnx") and not ortsession._marked(signed)
    unfused = ort.InferenceSession(str(signed), session_options(1, fuse=False), providers=["CPUExecutionProvider"])
    want = unfused.run(None, {"crop": x})[0]
    for mode, exact in (("unfused", False), ("fused", True)):
        monkeypatch.setenv(ortsession.ENV, mode)
        ortsession.signed_fusion_exact.cache_clear()
        try:
            assert ortsession.signed_fusion_exact() is exact
            got = session(signed, 1).run(None, {"crop": x})[0]
            if not exact:
                assert np.array_equal(got, want)
            # the marked (unsigned) model is fused either way, and gives the unfused model's reading
            marked = session(MODELS / "corner_reader.int8.onnx", 1).run(None, {"crop": x})[0]
            assert np.array_equal(marked.argmax(1), want.argmax(1))
        finally:
            ortsession.signed_fusion_exact.cache_clear()


def test_the_cpu_check_reads_the_flags_here():
    import platform

    flags = ortsession.cpu_flags()
    if platform.machine() == "x86_64":
        assert flags is not None and "sse2" in flags


def test_every_report_names_its_int8_models_size():
    """A reader's report (models/<name>.json) says how many bytes its int8 model has: the file's size, the 36 bytes of
    the unsigned-weights mark included (session 78 left the signed sizes in the reports; session 79 set them)."""
    import json

    checked = 0
    for rep in sorted(MODELS.glob("*.json")):
        data = json.loads(rep.read_text())
        if isinstance(data, dict) and "int8_bytes" in data:
            assert data["int8_bytes"] == rep.with_suffix(".int8.onnx").stat().st_size, rep.name
            checked += 1
    assert checked >= 4


def test_pool_threads_spin_only_while_a_run_lasts_and_read_the_same(monkeypatch):
    """The runtime sessions spin while a run lasts and stop when it returns (threads left spinning took the cores from
    the work after each network: the suited scan 92 ms against 63); a network reads exactly the same as with no
    spinning at all (the setting before session 84)."""
    import onnxruntime as ort

    from vision.corner import CORNER_H, CORNER_W

    monkeypatch.delenv(ortsession.SPIN_ENV, raising=False)  # `make test` switches spinning off for its two workers
    so = session_options(2)
    assert so.get_session_config_entry("session.force_spinning_stop") == "1"
    assert so.intra_op_num_threads == 2 and so.inter_op_num_threads == 1
    with pytest.raises(RuntimeError):  # onnxruntime's default (spinning allowed): the entry is not set
        so.get_session_config_entry("session.intra_op.allow_spinning")
    looping = session_options(2, spin=True)  # a loop that only calls run: spinning left on between runs
    with pytest.raises(RuntimeError):
        looping.get_session_config_entry("session.force_spinning_stop")

    path = MODELS / "standard52_reader.int8.onnx"
    still = session_options(2)
    still.add_session_config_entry("session.intra_op.allow_spinning", "0")
    x = np.random.default_rng(5).normal(0, 1, (40, 3, CORNER_H, CORNER_W)).astype(np.float32)
    got = session(path, 2).run(None, {"crop": x})
    want = ort.InferenceSession(str(path), still, providers=["CPUExecutionProvider"]).run(None, {"crop": x})
    for a, b in zip(got, want):
        assert np.array_equal(a, b)


def test_spinning_switched_off_or_refused_by_the_environment(monkeypatch, tmp_path):
    """PIRATE_TABLE_ORT_SPIN=off: no spinning at all (a machine shared with other busy processes); a value that is
    neither run nor off is refused, and `scan` says so in one line with exit 2."""
    import subprocess
    import sys

    import cv2

    from companion.errors import PirateTableError

    monkeypatch.setenv(ortsession.SPIN_ENV, "off")
    so = session_options(2, spin=True)
    assert so.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    for default in ("run", ""):  # set but empty: the default
        monkeypatch.setenv(ortsession.SPIN_ENV, default)
        assert session_options(2).get_session_config_entry("session.force_spinning_stop") == "1"
    for bad in ("OFF", "1", "off\n", " run", "of\u0301f"):
        monkeypatch.setenv(ortsession.SPIN_ENV, bad)
        with pytest.raises(PirateTableError, match="PIRATE_TABLE_ORT_SPIN"):
            session_options(2)
    img = tmp_path / "table.png"
    cv2.imwrite(str(img), np.full((72, 128, 3), 90, np.uint8))
    env = dict(os.environ, PIRATE_TABLE_ORT_SPIN="fast")
    r = subprocess.run([sys.executable, "-m", "companion", "scan", str(img), "--deck", "standard52", "--json"],
                       cwd=MODELS.parent, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout[-300:], r.stderr[-1000:])
    assert r.stderr == "pirate-table: error: PIRATE_TABLE_ORT_SPIN: 'fast' is neither 'run' nor 'off'\n", r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.png"]


def test_signed_model_turns_every_weight_back_and_keeps_every_float_weight():
    """``signed_model``: the committed (unsigned) weights signed again in memory, each standing for the very same float
    weight; nothing else in the model changes."""
    for f in INT8:
        m = onnx.load(str(f))
        s = onnx.load_from_string(ortsession.signed_model(f))
        before, after = dequantized_weights(m), dequantized_weights(s)
        assert before.keys() == after.keys() and all(np.array_equal(before[k], after[k]) for k in before), f.name
        inits = {i.name: i.data_type for i in s.graph.initializer}
        dq = [n for n in s.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits
              and inits[n.input[0]] != onnx.TensorProto.INT32]  # not the biases (int32, untouched)
        assert dq and all(inits[n.input[0]] == onnx.TensorProto.INT8 for n in dq), f.name
        assert [n.SerializeToString() for n in m.graph.node] == [n.SerializeToString() for n in s.graph.node], f.name
        # every constant that is not a weight's or its zero point's is the same bytes
        turned = {x for n in dq for x in (n.input[0], n.input[2])}
        assert {i.name: i.SerializeToString() for i in m.graph.initializer if i.name not in turned} == \
               {i.name: i.SerializeToString() for i in s.graph.initializer if i.name not in turned}, f.name


def test_signed_model_leaves_a_shared_zero_point_unsigned(tmp_path):
    m = onnx.load(str(MODELS / "corner_reader.int8.onnx"))
    inits = {i.name: i for i in m.graph.initializer}
    dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits
          and inits[n.input[0]].data_type == onnx.TensorProto.UINT8]
    # two weights' nodes (with as many channels) reading one zero point: turning it for one would change the other
    a, b = next((a, b) for a in dq for b in dq if a is not b and inits[a.input[2]].dims == inits[b.input[2]].dims)
    b.input[2] = a.input[2]
    shared = tmp_path / "shared.int8.onnx"
    onnx.save(m, str(shared))
    s = onnx.load_from_string(ortsession.signed_model(shared))
    types = {i.name: i.data_type for i in s.graph.initializer}
    assert types[a.input[0]] == types[b.input[0]] == types[a.input[2]] == onnx.TensorProto.UINT8
    assert [n for n in dq if n not in (a, b) and types[n.input[0]] == onnx.TensorProto.INT8]
    assert dequantized_weights(s).keys() == dequantized_weights(m).keys()
    assert all(np.array_equal(dequantized_weights(s)[k], v) for k, v in dequantized_weights(m).items())


def test_a_marked_model_runs_signed_where_signed_sums_are_exact_and_reads_bit_for_bit_the_same(monkeypatch):
    """Where this CPU sums signed weights exactly (VNNI, AMX, ARM), ``session`` runs a marked model with its weights
    signed again: onnxruntime's u8 x s8 kernels, twice as fast as the u8 x u8 ones for the detector on an Intel Xeon
    with VNNI and AMX (session 85). The outputs are those of the committed file to the last bit: the detector's on
    real frames, a reader's on views. Elsewhere the file is run as it is."""
    import onnxruntime as ort

    import cv2

    from vision.bench import eight_card_frames
    from vision.corner import CORNER_H, CORNER_W
    from vision.detect import letterbox

    det_path, reader_path = MODELS / "card_det.int8.onnx", MODELS / "standard52_reader.int8.onnx"
    names = {det_path.read_bytes(): det_path.name, reader_path.read_bytes(): reader_path.name}
    calls = []
    real = ortsession._signed_bytes
    monkeypatch.setattr(ortsession, "_signed_bytes", lambda d: calls.append(names.get(d, "?")) or real(d))
    monkeypatch.delenv(ortsession.ENV, raising=False)
    ortsession.signed_fusion_exact.cache_clear()
    try:
        exact = ortsession.signed_fusion_exact()
        det, reader = session(det_path, 2), session(reader_path, 2)
        assert calls == ([det_path.name, reader_path.name] if exact else [])
        session(MODELS / "corner_reader.onnx", 2)  # a float model: nothing to turn
        assert len(calls) == (2 if exact else 0)
        filed = {p: ort.InferenceSession(str(p), session_options(2), providers=["CPUExecutionProvider"])
                 for p in (det_path, reader_path)}
        inp = det.get_inputs()[0]
        for frame in eight_card_frames(2):
            canvas, _ = letterbox(frame, (int(inp.shape[3]), int(inp.shape[2])))
            blob = cv2.dnn.blobFromImage(canvas, 1 / 255.0, swapRB=True)
            assert np.array_equal(det.run(None, {inp.name: blob})[0], filed[det_path].run(None, {inp.name: blob})[0])
        x = np.random.default_rng(7).normal(0, 1, (24, 3, CORNER_H, CORNER_W)).astype(np.float32)
        for a, b in zip(reader.run(None, {"crop": x}), filed[reader_path].run(None, {"crop": x})):
            assert np.array_equal(a, b)
        # told that this CPU does not sum signed weights exactly: the file as it is
        monkeypatch.setenv(ortsession.ENV, "unfused")
        ortsession.signed_fusion_exact.cache_clear()
        calls.clear()
        session(reader_path, 2)
        assert calls == []
    finally:
        ortsession.signed_fusion_exact.cache_clear()


def test_signed_model_needs_no_onnx_package_and_gives_up_on_a_broken_file(monkeypatch, tmp_path):
    """The tablet runtime has no onnx package (it is a training one): the model's bytes are patched in place. A file
    that cannot be walked gives None, and onnxruntime then opens the file itself and refuses it as before."""
    import sys

    path = MODELS / "corner_reader.int8.onnx"
    want = ortsession.signed_model(path)
    monkeypatch.setitem(sys.modules, "onnx", None)  # import onnx raises ImportError
    assert ortsession.signed_model(path) == want
    data = path.read_bytes()
    assert len(want) == len(data) and want != data  # every length kept; only type bytes and weight bits changed
    changed = sum(a != b for a, b in zip(want, data))
    assert changed > 1000
    cut = tmp_path / "cut.int8.onnx"
    cut.write_bytes(data[: len(data) // 2])
    assert ortsession.signed_model(cut) is None
    assert ortsession.signed_model(tmp_path / "missing.int8.onnx") is None
    junk = tmp_path / "junk.int8.onnx"
    junk.write_bytes(b"\x0f" * 64)  # wire type 7: not protobuf
    assert ortsession.signed_model(junk) is None


def test_a_mistyped_int8_setting_is_refused_not_ignored(monkeypatch, tmp_path):
    """PIRATE_TABLE_INT8 says by hand whether this CPU sums signed weights exactly, and so whether the weights are
    signed again: a value that is neither fused nor unfused (nor empty) is refused, never left to the CPU check, and
    `scan` says so in one line with exit 2."""
    import subprocess
    import sys

    import cv2

    from companion.errors import PirateTableError

    try:
        for bad in ("FUSED", "unfuse", " fused", "fused\n", "1", "fu\u0301sed"):
            monkeypatch.setenv(ortsession.ENV, bad)
            ortsession.signed_fusion_exact.cache_clear()
            with pytest.raises(PirateTableError, match="PIRATE_TABLE_INT8"):
                session(MODELS / "corner_reader.int8.onnx", 1)
        for good, exact in (("fused", True), ("unfused", False)):
            monkeypatch.setenv(ortsession.ENV, good)
            ortsession.signed_fusion_exact.cache_clear()
            assert ortsession.signed_fusion_exact() is exact
        monkeypatch.setenv(ortsession.ENV, "")  # set but empty: the CPU's flags decide
        ortsession.signed_fusion_exact.cache_clear()
        monkeypatch.delenv(ortsession.ENV)
        ortsession.signed_fusion_exact.cache_clear()
        unset = ortsession.signed_fusion_exact()
        monkeypatch.setenv(ortsession.ENV, "")
        ortsession.signed_fusion_exact.cache_clear()
        assert ortsession.signed_fusion_exact() is unset
    finally:
        ortsession.signed_fusion_exact.cache_clear()
    img = tmp_path / "table.png"
    cv2.imwrite(str(img), np.full((72, 128, 3), 90, np.uint8))
    env = dict(os.environ, PIRATE_TABLE_INT8="signed")
    r = subprocess.run([sys.executable, "-m", "companion", "scan", str(img), "--json"],
                       cwd=MODELS.parent, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout[-300:], r.stderr[-1000:])
    assert r.stderr == "pirate-table: error: PIRATE_TABLE_INT8: 'signed' is neither 'fused' nor 'unfused'\n", r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.png"]


def test_signed_model_leaves_a_constant_seen_from_outside_and_gives_up_on_a_subgraph(tmp_path):
    """A weight that is also a graph output (or input) is seen with its declared type: it stays unsigned. A model with
    a subgraph (If, Loop) reads constants where the walk does not count them: it is run as it is (None)."""
    from onnx import helper

    m = onnx.load(str(MODELS / "corner_reader.int8.onnx"))
    inits = {i.name: i for i in m.graph.initializer}
    dq = [n for n in m.graph.node if n.op_type == "DequantizeLinear" and n.input[0] in inits
          and inits[n.input[0]].data_type == onnx.TensorProto.UINT8]
    w = dq[0].input[0]
    m.graph.output.append(helper.make_tensor_value_info(w, onnx.TensorProto.UINT8, list(inits[w].dims)))
    out = tmp_path / "output.int8.onnx"
    onnx.save(m, str(out))
    s = onnx.load_from_string(ortsession.signed_model(out))
    types = {i.name: i.data_type for i in s.graph.initializer}
    assert types[w] == onnx.TensorProto.UINT8 and types[dq[1].input[0]] == onnx.TensorProto.INT8

    m = onnx.load(str(MODELS / "corner_reader.int8.onnx"))
    branch = helper.make_graph([], "branch", [], [helper.make_tensor_value_info("crop", onnx.TensorProto.FLOAT, None)])
    m.graph.node[0].attribute.append(helper.make_attribute("then_branch", branch))
    sub = tmp_path / "subgraph.int8.onnx"
    onnx.save(m, str(sub))
    assert ortsession.signed_model(sub) is None
