"""Helpers of the hostile-input tests (tests/test_hostile_*.py); not a test module itself.

The contract every command keeps, whatever it is given: exit 0 with valid output, or exit 2 with exactly one
line ``pirate-table: error: ...`` on stderr, nothing on stdout, and every file byte-for-byte as before.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
COUNTS: dict[str, int] = {}  # command -> hostile inputs tried (printed by the tests)


def run_cli(*argv) -> tuple[int, str, str]:
    """companion.cli.main in this process; (exit code, stdout, stderr)."""
    from companion.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:  # argparse
            code = exc.code if isinstance(exc.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (SQLite's -wal/-shm side files included): relative path -> bytes."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            p = Path(dirpath) / name
            out[str(p.relative_to(folder))] = p.read_bytes() if p.is_file() else b"<not a file>"
    return out


def assert_refused_cleanly(code: int, out: str, err: str, before: dict | None = None, after: dict | None = None,
                           what: object = "") -> None:
    assert code == 2, (what, code, out[-500:], err[-2000:])
    assert out == "", (what, out[-500:])
    assert err.startswith("pirate-table: error: ") and err.endswith("\n") and err.count("\n") == 1, (what, err)
    if before is not None:
        assert after == before, (what, err, sorted(set(after) ^ set(before)),
                                 [k for k in before if k in after and before[k] != after[k]])


def recipe_cli(module: str):
    """The end-to-end tests' way to run a GPU recipe's command (``python -m module ...`` from the repository root):
    a function of the arguments (and ``t``, the timeout) giving the finished process, its output captured."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    return lambda *a, t=600: subprocess.run([sys.executable, "-m", module, *a], cwd=root, capture_output=True,
                                            text=True, timeout=t)


def assert_recipe_refuses(module: str, cases, out: Path, t: int = 120) -> None:
    """Each ``(args, start)``: ``python -m module ARGS`` is refused cleanly (``assert_refused_cleanly``) in a line that
    starts ``pirate-table: error: START``, and ``out`` was not made."""
    run = recipe_cli(module)
    for args, start in cases:
        r = run(*args, t=t)
        assert_refused_cleanly(r.returncode, r.stdout, r.stderr, what=args)
        assert r.stderr.startswith("pirate-table: error: " + start) and not out.exists(), (args, r.stderr)


def gpu_recipe_folders(tmp_path: Path, recipe: str = '{"data_seed": 7}'):
    """What the GPU recipes' refusal tests start from: (pack, out, a_file, junk): a pack folder with an empty
    fonts.json, an out folder not made yet, a plain file, and a state dict that is no pickle with ``recipe`` beside
    it."""
    pack, out = tmp_path / "pack", tmp_path / "out"
    pack.mkdir()
    (pack / "fonts.json").write_text("[]")
    a_file = tmp_path / "f.txt"
    a_file.write_text("x")
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"\x80\x04not a pickle")
    junk.with_suffix(".json").write_text(recipe)
    return pack, out, a_file, junk


def strict_json(text: str):
    """Parse output strictly (no NaN/Infinity)."""
    def bad(name):
        raise AssertionError(f"output holds {name}, which is not JSON")
    return json.loads(text, parse_constant=bad)


def count(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


# ------------------------------------------------------------------ strategies

HOSTILE_TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\n", "\x00", "A\nB", "Ann\x00", "\u200b", "\u202e", "pot", "a:b", "a,b", '"',
                     "A" * 33, "٣", "३", "\U0001f600", "e\u0301", "\ud800".encode("utf-8", "surrogatepass")
                     .decode("utf-8", "replace"), "NaN", "Infinity", "-0", "1e400", "9" * 40]),
)
NUMBER_TEXT = st.one_of(
    st.integers(-10, 10).map(str),
    st.integers(-2**70, 2**70).map(str),
    st.sampled_from(["9223372036854775807", "9223372036854775808", "-9223372036854775809", "1000000000",
                     "1000000001", "٣", "３", "1_000", " 5", "5 ", "+5", "0x10", "1e3", "1.5", "nan", "inf", "-inf",
                     "", "-", "--1", "0", "65535", "65536", "-1"]),
    st.text(alphabet="0123456789٣३-+_ .eE", max_size=12),
)
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                         st.floats(allow_nan=False, allow_infinity=False), HOSTILE_TEXT)
JSON_VALUES = st.recursive(JSON_SCALARS, lambda kids: st.one_of(
    st.lists(kids, max_size=4), st.dictionaries(HOSTILE_TEXT, kids, max_size=4)), max_leaves=12)
RAW_TOKENS = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400", "9" * 5000, '"\\ud800"', "[" * 5000, "{",
              "\x00", "\ufeff", "true", "null", '{"a":1,"a":2}']


def paths_of(v, prefix=()):
    """Every path (tuple of keys/indices) into a JSON value."""
    yield prefix
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths_of(x, prefix + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths_of(x, prefix + (i,))


def get_path(v, path):
    for k in path:
        v = v[k]
    return v


BOUNDARY_INTS = [0, -1, 1, 2, 8, 9, 10, 72, 2**31, 2**63 - 1, 2**63, -2**63, 10**9, 10**9 + 1, -10**9 - 1]


def near(old, doc):
    """A value like ``old``: a number moved a little or to a boundary, another string of the document, a list
    with an element more, fewer or doubled."""
    strings = sorted({x for p in paths_of(doc) for x in [get_path(doc, p)] if isinstance(x, str)}) or ["x"]
    if isinstance(old, bool):
        return st.sampled_from([not old, 0, 1, None, "true"])
    if isinstance(old, int):
        return st.sampled_from([old + d for d in range(-3, 4) if d] + BOUNDARY_INTS
                               + [float(old), str(old), old + 0.5])
    if isinstance(old, float):
        return st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(BOUNDARY_INTS))
    if isinstance(old, str):
        return st.one_of(st.sampled_from(strings), st.just(old + old), st.just(old.lower()), st.just(old[:-1]),
                         st.just(" " + old), HOSTILE_TEXT)
    if isinstance(old, list):
        if not old:
            return st.one_of(st.sampled_from(strings).map(lambda x: [x]), st.just([None]))
        return st.one_of(st.just(old + old[:1]), st.just(old[1:]), st.just(old[::-1]), st.just(old * 3),
                         st.just([old]))
    if isinstance(old, dict):
        keys = sorted(old)
        if not keys:
            return st.just({"x": 1})
        return st.one_of(st.just({k: old[k] for k in keys[1:]}), st.sampled_from(strings).map(
            lambda x: {**old, x: old[keys[0]]}), st.just({**old, "extra": 1}))
    return JSON_VALUES


def set_path(v, path, new):
    if not path:
        return new
    v = json.loads(json.dumps(v))
    cur = v
    for k in path[:-1]:
        cur = cur[k]
    cur[path[-1]] = new
    return v


def del_path(v, path):
    if not path:
        return v
    v = json.loads(json.dumps(v))
    cur = v
    for k in path[:-1]:
        cur = cur[k]
    del cur[path[-1]]
    return v


@st.composite
def mutated_json_text(draw, base):
    """A JSON document near ``base``: some values replaced or removed, then perhaps broken as text."""
    v = base
    for _ in range(draw(st.integers(0, 3))):
        paths = list(paths_of(v))
        kind = draw(st.sampled_from([int, int, str, (list, dict), object]))
        typed = [p for p in paths if isinstance(get_path(v, p), kind) and not (
            kind is int and isinstance(get_path(v, p), bool))] or paths
        path = draw(st.sampled_from(typed))
        old = get_path(v, path)
        op = draw(st.sampled_from(["set", "near", "near", "near", "del"]))
        if op == "set":
            v = set_path(v, path, draw(JSON_VALUES))
        elif op == "del" and path:
            v = del_path(v, path)
        elif op == "near":
            v = set_path(v, path, draw(near(old, v)))
    text = json.dumps(v, ensure_ascii=draw(st.booleans()))
    mode = draw(st.sampled_from(["as is", "as is", "as is", "token", "cut", "bytes"]))
    if mode == "token":
        i = draw(st.integers(0, len(text)))
        text = text[:i] + draw(st.sampled_from(RAW_TOKENS)) + text[i:]
    elif mode == "cut":
        text = text[: draw(st.integers(0, len(text)))]
    raw = text.encode("utf-8")
    if mode == "bytes":
        i = draw(st.integers(0, len(raw)))
        raw = raw[:i] + draw(st.binary(min_size=1, max_size=8)) + raw[i:]
    if draw(st.integers(0, 9)) == 0:
        raw = text.encode(draw(st.sampled_from(["utf-16", "utf-16-le", "latin-1"])), "replace")
    return raw
