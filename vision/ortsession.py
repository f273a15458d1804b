"""onnxruntime sessions for the models, made one way everywhere (the scanner, the benches, the judges), and int8
weights that every x86-64 CPU sums exactly.

The int8 models are static QDQ with unsigned 8-bit activations. onnxruntime fuses each DequantizeLinear -> Conv ->
QuantizeLinear into an integer convolution. With **signed** 8-bit weights (u8 x s8, what ``quantize_static`` makes with
``QuantType.QInt8``), a CPU with VNNI (``avx512_vnni``, ``avx_vnni``: most recent Intel Xeons, AMD Zen 4) sums the
products exactly, but one with only AVX2 or AVX-512 and no VNNI (AMD Zen 2 and 3, older Intel) uses ``vpmaddubsw``,
which saturates each pair of products at 16 bits: onnxruntime's documentation names this the U8S8 saturation issue.
For these readers the loss is not small. Measured on an AMD EPYC (Zen 3, AVX2, no VNNI), session 78, island54's reader
on the 4,765 calibration views of its report: code accuracy 60.8 % with signed weights, against 92.2 % in the report
(a VNNI machine) and 92.3 % for the same weights in float; the test suite lost 13 tests to it.

**Unsigned weights** (``unsigned_weights``: every int8 weight w becomes w + 128 with its zero point + 128, which
dequantizes to the very same float weights) take onnxruntime's u8 x u8 kernels, which widen to 16 bits before they
multiply and so never saturate, on any CPU. The integer sums are then the exact ones a VNNI machine computes for the
signed model, so the readings (and every figure measured with the signed models on VNNI machines) are unchanged. The
same reader on that Zen 3 machine, batches of 12 views, 2 threads: 6.4 ms signed (wrong), 8.6 ms unsigned, 12.8 ms
with the fusion switched off. Every committed ``*.int8.onnx`` has unsigned weights, and the quantizers
(``corner.quantize``, ``train.quantize_detector``) write them so.

``unsigned_weights`` marks the model in its metadata. A model without the mark (one written before, or someone else's)
is run with the fusion switched off (``session.disable_quant_qdq``: each layer DequantizeLinear -> float Conv ->
QuantizeLinear, what the int8 model means, at about twice the time) on an x86-64 CPU without VNNI;
``PIRATE_TABLE_INT8=fused`` or ``=unfused`` says by hand whether this CPU sums signed weights exactly (unset or empty:
the CPU's flags decide; any other value is refused, PirateTableError).

Where this CPU does sum signed weights exactly (VNNI, AMX, ARM), a marked model is **run with its weights signed again**
(``signed_model``: patched in memory, the file untouched): the u8 x u8 kernels widen every product and on such a CPU
take twice the time of the u8 x s8 ones, which sum the same integers. Measured in session 85 on an Intel Xeon with
AVX-512 VNNI and AMX, 2 threads: the detector 30 -> 15 ms a call, the Pirate's Bluff scan 48 -> 30 ms a frame and the
suited scans 58-59 -> 36-37 ms, every reading the same to the last bit. Session 78 had measured the unsigned weights
as costing nothing on a CPU without VNNI, where both kinds take widening kernels; on the Intel machines of the
sessions after it the suited scan took 52-60 ms, against 31-36 ms measured on quiet machines before session 78,
and this is most likely why.

Pool threads spin only while a run lasts (``session_options``). ``PIRATE_TABLE_ORT_SPIN=off`` stops them spinning at all:
for a machine shared with other busy processes, where a spinning thread takes a core another process wants (the test
suite's two workers: the camera tests took 55 s spinning, 49 s not, the same readings).
"""

from __future__ import annotations

import os
import platform
from functools import lru_cache
from pathlib import Path

ENV = "PIRATE_TABLE_INT8"
SPIN_ENV = "PIRATE_TABLE_ORT_SPIN"  # "run" (the default) or "off"
MARK = "pirate_table.int8_weights"  # metadata of a model whose int8 weights are unsigned: "uint8"
_VNNI = ("avx512_vnni", "avx_vnni", "amx_int8")


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags from /proc/cpuinfo (Linux); None where they cannot be read."""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.partition(":")[2].split())
    except OSError:
        return None
    return None


@lru_cache(maxsize=1)
def signed_fusion_exact() -> bool:
    """Whether onnxruntime's fused u8 x s8 convolutions sum exactly on this CPU (see the module's docstring). An
    x86-64 CPU whose flags cannot be read is taken as not exact (the unfused path is right everywhere, only slower)."""
    from companion.errors import PirateTableError

    mode = os.environ.get(ENV, "")
    if mode not in ("", "fused", "unfused"):  # a mistyped value would silently leave the CPU check in charge
        raise PirateTableError(f"{ENV}: {mode[:40]!r} is neither 'fused' nor 'unfused'")
    if mode == "fused":
        return True
    if mode == "unfused":
        return False
    if platform.machine().lower() not in ("x86_64", "amd64", "i386", "i686", "x86"):
        return True  # ARM (the tablets) and others: no vpmaddubsw
    flags = cpu_flags()
    return flags is not None and any(f in flags for f in _VNNI)


def session_options(threads: int | None = None, spin: bool = False, fuse: bool = True):
    """SessionOptions for a CPU session: ``threads`` intra-op threads (None: onnxruntime's default) and one inter-op
    thread, and the QDQ fusion off unless ``fuse``.

    The pool threads spin while a ``run`` is in progress (a thread waiting between two parallel parts of the network
    picks the next one up at once instead of being woken) and stop the moment it returns
    (``session.force_spinning_stop``): pool threads left spinning after a run take the cores from the work that
    follows (the edge snapping, the next network). Measured 2026-12-05 (session 84) on this 2-core machine, 12
    frames of 8 cards x 3, the same readings to the last digit: standard52's scan 63.4 -> 54.9 ms, island54's
    59.4 -> 53.4, the Pirate's Bluff scanner 52.5 -> 46.1; no spinning at all was the setting before; spinning left
    on after each run made the suited scan 92 ms. ``spin``: leave the threads spinning between runs too
    (onnxruntime's default; for loops that do nothing but call ``run``). ``PIRATE_TABLE_ORT_SPIN=off`` (``SPIN_ENV``):
    no spinning whatever ``spin`` says; any value but ``run`` or ``off`` is refused (PirateTableError)."""
    import onnxruntime as ort

    from companion.errors import PirateTableError

    mode = os.environ.get(SPIN_ENV) or "run"  # set but empty: the default
    if mode not in ("run", "off"):
        raise PirateTableError(f"{SPIN_ENV}: {mode[:40]!r} is neither 'run' nor 'off'")
    so = ort.SessionOptions()
    if threads is not None:
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
    if mode == "off":
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    elif not spin:
        so.add_session_config_entry("session.force_spinning_stop", "1")
    if not fuse:
        so.add_session_config_entry("session.disable_quant_qdq", "1")
    return so


# the mark as protobuf encodes the metadata entry (key, field 1; value, field 2): looked for in a model's bytes
# (the onnx package is no runtime dependency)
_MARK_ENTRY = b"\x0a" + bytes([len(MARK)]) + MARK.encode() + b"\x12" + bytes([len(b"uint8")]) + b"uint8"


def _read(path: Path | str) -> bytes | None:
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


def _has_mark(data: bytes | None) -> bool:
    """Whether a model's bytes carry the mark ``unsigned_weights`` writes."""
    return data is not None and _MARK_ENTRY in data


def _marked(path: Path | str) -> bool:
    """Whether the model file carries the mark."""
    return _has_mark(_read(path))


def session(path: Path | str, threads: int | None = None, spin: bool = False):
    """A CPU InferenceSession of the model at ``path``, made once: fused where that is exact (on a CPU that sums signed
    weights exactly, ``signed_fusion_exact``, or for a model marked as having unsigned weights, ``MARK``), else with
    the fusion off (a float model has nothing to fuse: the same session either way). A marked model on a CPU that sums
    signed weights exactly is run with its weights signed again (``signed_model``): the same integer sums, by the
    faster kernels."""
    import onnxruntime as ort

    data = _read(path)  # read once: the mark and, where it applies, the bytes to patch
    marked = _has_mark(data)
    exact = signed_fusion_exact()
    model = _signed_bytes(data) if marked and exact else None
    so = session_options(threads, spin, exact or marked)
    return ort.InferenceSession(model if model is not None else str(path), so, providers=["CPUExecutionProvider"])


def signed_model(path: Path | str) -> bytes | None:
    """The marked model at ``path`` with each unsigned weight and its zero point signed again (w - 128, z - 128: the
    very same float weights, the same integer sums), as bytes for ``InferenceSession``; None where the file cannot be
    read or walked (onnxruntime then opens the file itself and says what is wrong with it).

    Why: on a CPU with VNNI the unsigned weights take onnxruntime's u8 x u8 kernels, which widen every product to 16
    bits, and the signed ones its u8 x s8 kernels (VNNI's ``vpdpbusd``, AMX's tiles), which sum exactly there.
    Measured 2026-12-05 (session 85) on an Intel Xeon with AVX-512 VNNI and AMX, 2 threads, 12 frames of 8 cards: the
    suited detector 30.6 -> 15.0 ms a call, the Pirate's Bluff detector 29.9 -> 14.7, every output identical to the
    last bit.

    How: the change keeps every length in the file (an 8-bit value's type 2 -> 3 is one byte either way, and w - 128
    in two's complement is w with its top bit flipped), so the model's protobuf bytes are patched in place: the graph's
    nodes and constants are found by their field numbers in onnx.proto (ModelProto.graph 7; GraphProto.node 1,
    .initializer 5; NodeProto.input 1, .op_type 4; TensorProto.data_type 2, .name 8, .raw_data 9). Importing the onnx
    package would cost 0.6 s at every start (its ml_dtypes). Only a DequantizeLinear's weight and zero point that no
    other node reads, both uint8 in raw bytes, are turned (``unsigned_weights`` wrote them so);
    tests/test_ortsession.py checks the result against the onnx package's reading of it."""
    data = _read(path)
    return None if data is None else _signed_bytes(data)


def _signed_bytes(data: bytes) -> bytes | None:
    try:
        return bytes(_signed_in_place(bytearray(data)))
    except (ValueError, IndexError):
        return None


def _varint(buf, i: int) -> tuple[int, int]:
    v = shift = 0
    while True:
        b = buf[i]
        i += 1
        v |= (b & 0x7F) << shift
        if b < 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _fields(buf, start: int, end: int):
    """(field number, wire type, value start, value end) of each field of the protobuf message in buf[start:end]; a
    varint's value is at its start."""
    i = start
    while i < end:
        key, i = _varint(buf, i)
        field, wt = key >> 3, key & 7
        if wt == 0:
            _, j = _varint(buf, i)
        elif wt == 1:
            j = i + 8
        elif wt == 2:
            n, i = _varint(buf, i)
            j = i + n
        elif wt == 5:
            j = i + 4
        else:
            raise ValueError(f"wire type {wt}")
        if j > end:
            raise ValueError("field past its message")
        yield field, wt, i, j
        i = j


def _signed_in_place(buf: bytearray) -> bytearray:
    import numpy as np

    u8, s8 = 2, 3  # TensorProto.DataType UINT8, INT8
    graph = next(((a, b) for f, wt, a, b in _fields(buf, 0, len(buf)) if f == 7 and wt == 2), None)
    if graph is None:
        raise ValueError("no graph")
    # name -> (data_type's byte, raw_data start, end); None: not uint8 in raw bytes
    consts: dict[str, tuple[int, int, int] | None] = {}
    uses: dict[str, int] = {}
    dq: list[tuple[str, ...]] = []
    for f, wt, a, b in _fields(buf, *graph):
        if wt != 2:
            continue
        if f in (11, 12):  # a graph input or output (ValueInfoProto, its name field 1): a constant named there is seen
            for g, wt2, c, d in _fields(buf, a, b):  # from outside with its declared type, so it is left as it is
                if g == 1 and wt2 == 2:
                    name = bytes(buf[c:d]).decode("utf-8")
                    uses[name] = uses.get(name, 0) + 2
        elif f == 5:  # an initializer
            name, dtype, raw = None, None, None
            for g, wt2, c, d in _fields(buf, a, b):
                if g == 8 and wt2 == 2:
                    name = bytes(buf[c:d]).decode("utf-8")
                elif g == 2 and wt2 == 0:
                    dtype = c
                elif g == 9 and wt2 == 2:
                    raw = (c, d)
            if name is not None:
                ok = dtype is not None and buf[dtype] == u8 and raw is not None
                consts[name] = (dtype, *raw) if ok else None
        elif f == 1:  # a node
            inputs, op = [], None
            for g, wt2, c, d in _fields(buf, a, b):
                if g == 1 and wt2 == 2:
                    inputs.append(bytes(buf[c:d]).decode("utf-8"))
                elif g == 4 and wt2 == 2:
                    op = bytes(buf[c:d])
                elif g == 5 and wt2 == 2 and any(h in (6, 11) for h, _w, _c, _d in _fields(buf, c, d)):
                    raise ValueError("a node with a subgraph")  # AttributeProto.g / .graphs: uses not counted here
            for x in inputs:
                uses[x] = uses.get(x, 0) + 1
            if op == b"DequantizeLinear" and len(inputs) >= 3:
                dq.append((inputs[0], inputs[2]))
    for w, z in dq:
        if consts.get(w) and consts.get(z) and uses[w] == 1 and uses[z] == 1:
            for name in (w, z):
                t, c, d = consts[name]
                buf[t] = s8
                view = np.frombuffer(buf, np.uint8, d - c, c)
                view ^= 0x80
    return buf


def unsigned_weights(src: Path, dst: Path | None = None) -> int:
    """Rewrite the QDQ model at ``src`` (to ``dst``, default in place) with unsigned int8 weights: each int8 constant
    that a DequantizeLinear reads becomes uint8 (w + 128) with its zero point + 128: the same float weights, and the
    u8 x u8 kernels that sum exactly on every CPU. Returns how many constants changed (0 for a model with none).
    The model is marked (``MARK`` in its metadata) so that ``session`` fuses it on every CPU. Needs the onnx package
    (training and tests); ValueError (nothing written) for int8 weights without a constant zero point or a constant
    shared by two nodes."""
    import numpy as np
    import onnx
    from onnx import numpy_helper

    m = onnx.load(str(src))
    inits = {i.name: i for i in m.graph.initializer}
    done: set[str] = set()
    n = 0
    for node in m.graph.node:
        if node.op_type != "DequantizeLinear" or node.input[0] not in inits:
            continue
        w = inits[node.input[0]]
        if w.data_type != onnx.TensorProto.INT8:
            continue
        if len(node.input) < 3 or node.input[2] not in inits:
            raise ValueError(f"{src}: {node.name}: int8 weights without a constant zero point")
        zp = inits[node.input[2]]
        if w.name in done or zp.name in done:
            raise ValueError(f"{src}: {node.name}: a weight or zero point shared with another node")
        done.update((w.name, zp.name))
        w.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(w).astype(np.int16) + 128).astype(np.uint8), w.name))
        zp.CopyFrom(numpy_helper.from_array((numpy_helper.to_array(zp).astype(np.int16) + 128).astype(np.uint8),
                                            zp.name))
        n += 1
    props = {p.key: p.value for p in m.metadata_props}
    props[MARK] = "uint8"
    onnx.helper.set_model_props(m, props)
    onnx.save(m, str(dst or src))
    return n
