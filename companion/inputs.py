"""One place that parses hostile input: JSON files, whole numbers, coin amounts, names, CLI numbers.

Everything here refuses rather than guesses, with a ``RecordError("<place>: <what>")`` (a PirateTableError, so
``pirate-table`` prints it as its one-line error and exits 2):

- JSON: strict (no ``NaN``/``Infinity``/``-Infinity``, no number that overflows to infinity, no duplicate keys,
  no lone surrogate escapes, at most ``MAX_DEPTH`` nested arrays/objects, at most ``MAX_JSON_BYTES``), UTF-8
  (a UTF-8 byte-order mark is skipped; UTF-16 and binary files are refused).
- Whole numbers: ``int`` and not ``bool``, within a stated range. Coins are within ``-COIN_MAX..COIN_MAX``.
- Names: 1-``NAME_MAX`` printable characters (no control characters, no newline, no NUL, no zero-width or
  other format characters), no leading/trailing space, in Unicode NFC form (so two names never look the same).
- Digits typed by a person (CLI arguments, CSV fields): ASCII ``0-9`` only (``int()`` would read ``٣`` as 3,
  ``" 5"`` as 5 and ``"1_0"`` as 10).
- argparse: ``cli_int(lo, hi)`` / ``cli_float(lo, hi)`` types and ``OneLineParser`` whose errors are one line.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import stat
import sys
import unicodedata
from pathlib import Path
from typing import Any, NoReturn

from companion.errors import RecordError

MAX_DEPTH = 64  # nested arrays/objects; the deepest record format nests 4
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_INT_DIGITS = 30  # a JSON integer longer than this is refused before int() sees it
NAME_MAX = 32
TEXT_MAX = 500  # memos and other free text
# Coins: any single amount and any balance lies in -COIN_MAX..COIN_MAX. The ledger stores amounts in SQLite
# INTEGER (int64, max 9.2e18); with |amount| <= 1e9 a SUM() over one account cannot overflow before 9.2e9
# postings, far more than any file holds, and every balance the ledger checks stays within 1e9.
COIN_MAX = 10**9
_ASCII_INT = re.compile(r"-?[0-9]+\Z")
_ASCII_NUM = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_BRACKETS = re.compile(r"[\[\]{}]")


def fail(where: str, what: str) -> NoReturn:
    raise RecordError(f"{where}: {what}")


# ------------------------------------------------------------------ JSON


def _json_depth(text: str) -> int:
    """Deepest nesting of arrays/objects (strings skipped), counted without recursion."""
    depth = best = 0
    for m in _BRACKETS.finditer(_STRING.sub('""', text)):
        if m.group() in "[{":
            depth += 1
            if depth > best:
                best = depth
        else:
            depth -= 1
    return best


def _check_strings(v: Any, where: str) -> None:
    """No lone surrogates anywhere (they cannot be written back as UTF-8). Iterative: depth is bounded anyway."""
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            try:
                x.encode("utf-8")
            except UnicodeEncodeError:
                fail(where, "a string holds a lone surrogate escape (\\ud800-\\udfff), which is not text")
        elif isinstance(x, dict):
            stack.extend(x.keys())
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)


def loads_json(text: str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """Parse JSON text strictly; errors are ``RecordError("<where>: ...")``."""
    if _json_depth(text) > max_depth:
        fail(where, f"JSON nested deeper than {max_depth} levels")

    def constant(name: str) -> NoReturn:
        fail(where, f"{name} is not a JSON number")

    def parse_float(s: str) -> float:
        v = float(s)
        if not math.isfinite(v):
            fail(where, f"number {s[:40]} is too large")
        return v

    def parse_int(s: str) -> int:
        if len(s.lstrip("-")) > MAX_INT_DIGITS:
            fail(where, f"integer of {len(s.lstrip('-'))} digits is too large")
        return int(s)

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k, v in items:
            if k in out:
                fail(where, f"key {k!r} appears twice in one object")
            out[k] = v
        return out

    try:
        data = json.loads(text, parse_constant=constant, parse_float=parse_float, parse_int=parse_int,
                          object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        fail(where, f"bad JSON at line {exc.lineno} column {exc.colno}: {exc.msg}")
    except RecursionError:  # pragma: no cover - the depth check comes first
        fail(where, "JSON nested too deeply")
    _check_strings(data, where)
    return data


def decode_text(raw: bytes, where: str) -> str:
    """UTF-8 text (a UTF-8 byte-order mark is skipped). UTF-16, binary and NUL bytes are refused."""
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        fail(where, "the file is UTF-16; save it as UTF-8")
    if b"\x00" in raw:
        fail(where, "not a text file (it holds NUL bytes)")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        fail(where, f"not UTF-8 text (byte {exc.start} is 0x{raw[exc.start]:02x})")


def read_bytes(path: str | Path, where: str | None = None, max_bytes: int = MAX_JSON_BYTES) -> bytes:
    """A regular file's bytes, at most ``max_bytes``; every OSError becomes one line."""
    p = Path(path)
    where = str(p) if where is None else where
    try:
        with open(p, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
                fail(where, "cannot read: a device, not a file")
            raw = f.read(max_bytes + 1)
    except FileNotFoundError:
        fail(where, "cannot read: no such file")
    except IsADirectoryError:
        fail(where, "cannot read: a folder, not a file")
    except OSError as exc:
        fail(where, f"cannot read: {exc.strerror or exc}")
    except RecordError:
        raise
    except ValueError as exc:  # e.g. an embedded NUL in the path
        fail(where, f"cannot read: {exc}")
    if len(raw) > max_bytes:
        fail(where, f"larger than {max_bytes // (1024 * 1024)} MiB")
    return raw


def read_json_file(path: str | Path, where: str | None = None, max_bytes: int = MAX_JSON_BYTES,
                   max_depth: int = MAX_DEPTH) -> Any:
    """Read and strictly parse a JSON file; errors name the file."""
    where = str(path) if where is None else where
    return loads_json(decode_text(read_bytes(path, where, max_bytes), where), where, max_depth)


def dumps_json(v: Any, **kw: Any) -> str:
    """JSON out: never NaN/Infinity (``allow_nan=False`` raises rather than writing invalid JSON)."""
    return json.dumps(v, allow_nan=False, **kw)


# ------------------------------------------------------------------ numbers


def is_whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def whole(v: Any, where: str, lo: int | None = None, hi: int | None = COIN_MAX) -> int:
    """A whole number (not a bool) in ``lo..hi`` (``hi`` defaults to COIN_MAX: every count and coin amount in a
    record fits the ledger)."""
    if not is_whole(v):
        fail(where, f"expected a whole number, got {short(v)}")
    if lo is not None and v < lo:
        fail(where, f"must be at least {lo}, got {v}")
    if hi is not None and v > hi:
        fail(where, f"must be at most {hi}, got {v}")
    return v


def number(v: Any, where: str, lo: float | None = None, hi: float | None = None) -> float | int:
    """A finite number (int or float, not bool) in ``lo..hi``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not math.isfinite(v)):
        fail(where, f"expected a number, got {short(v)}")
    if lo is not None and v < lo:
        fail(where, f"must be at least {lo}, got {v}")
    if hi is not None and v > hi:
        fail(where, f"must be at most {hi}, got {v}")
    return v


def coins(v: Any, where: str, lo: int = 0) -> int:
    """Coins: a whole number in ``lo..COIN_MAX``."""
    return whole(v, where, lo, COIN_MAX)


def ascii_int(text: Any, where: str, lo: int | None = None, hi: int | None = None) -> int:
    """A whole number written with ASCII digits only (optional leading '-'), in ``lo..hi``."""
    if not isinstance(text, str) or not _ASCII_INT.match(text) or len(text.lstrip("-")) > MAX_INT_DIGITS:
        fail(where, f"expected a whole number written with digits 0-9, got {short(text)}")
    v = int(text)
    if lo is not None and v < lo:
        fail(where, f"must be at least {lo}, got {v}")
    if hi is not None and v > hi:
        fail(where, f"must be at most {hi}, got {v}")
    return v


def short(v: Any, n: int = 40) -> str:
    """``repr`` cut to ``n`` characters, safe to print (ASCII escapes)."""
    r = ascii(v) if isinstance(v, str) else repr(v)
    if isinstance(v, (list, dict)):
        r = type(v).__name__
    return r if len(r) <= n else r[: n - 3] + "..."


def plain(v: Any, n: int = 40) -> str:
    """Text to quote in a place (e.g. a key): control characters escaped, cut to ``n`` characters, no quotes."""
    t = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in str(v))
    return t if len(t) <= n else t[: n - 3] + "..."


# ------------------------------------------------------------------ names and text


def name_problem(v: Any, max_len: int = NAME_MAX) -> str | None:
    """Why ``v`` is not a good name, or None."""
    if not isinstance(v, str):
        return f"a name is text, got {short(v)}"
    if not v or not v.strip():
        return "a name cannot be empty"
    if len(v) > max_len:
        return f"a name is at most {max_len} characters, got {len(v)}"
    if v != v.strip():
        return f"name {short(v)} begins or ends with a space"
    bad = next((c for c in v if not c.isprintable()), None)
    if bad is not None:
        return f"name {short(v)} holds the control or format character U+{ord(bad):04X}"
    if unicodedata.normalize("NFC", v) != v:
        return f"name {short(v)} is not in Unicode NFC form (it would look like another name)"
    return None


def name(v: Any, where: str, max_len: int = NAME_MAX) -> str:
    """A player name: 1-NAME_MAX printable characters, no leading/trailing space, NFC."""
    problem = name_problem(v, max_len)
    if problem:
        fail(where, problem)
    return v


def text(v: Any, where: str, max_len: int = TEXT_MAX) -> str:
    """Free text (a memo, a note): printable characters only (no newline, NUL or escape), at most max_len."""
    if not isinstance(v, str):
        fail(where, f"expected text, got {short(v)}")
    if len(v) > max_len:
        fail(where, f"at most {max_len} characters, got {len(v)}")
    bad = next((c for c in v if not c.isprintable()), None)
    if bad is not None:
        fail(where, f"holds the control or format character U+{ord(bad):04X}")
    return v


# ------------------------------------------------------------------ argparse


class OneLineParser(argparse.ArgumentParser):
    """argparse whose usage errors are the project's one line (``pirate-table: error: <place>: <what>``) with
    exit code 2, instead of a usage block."""

    def error(self, message: str) -> NoReturn:
        where = self.prog.replace("pirate-table", "", 1).strip() or "arguments"
        line = plain(f"{where}: {message}", 2000)  # e.g. "unrecognized arguments: a<newline>b" stays one line
        sys.stderr.write(f"pirate-table: error: {line} (see --help)\n")
        sys.exit(2)


def cli_int(lo: int | None = None, hi: int | None = None):
    """argparse ``type=``: a whole number of ASCII digits in ``lo..hi``."""

    def parse(s: str) -> int:
        if not _ASCII_INT.match(s) or len(s.lstrip("-")) > MAX_INT_DIGITS:
            raise argparse.ArgumentTypeError(f"expected a whole number written with digits 0-9, got {short(s)}")
        v = int(s)
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            rng = f"{lo}..{hi}" if lo is not None and hi is not None else (f">= {lo}" if lo is not None else
                                                                          f"<= {hi}")
            raise argparse.ArgumentTypeError(f"must be {rng}, got {v}")
        return v

    parse.__name__ = "whole number"
    return parse


def cli_float(lo: float | None = None, hi: float | None = None, lo_open: bool = False):
    """argparse ``type=``: a finite decimal number of ASCII digits in ``lo..hi`` (``lo_open``: > lo)."""

    def parse(s: str) -> float:
        if not _ASCII_NUM.match(s) or len(s) > 40:
            raise argparse.ArgumentTypeError(f"expected a number written with digits 0-9, got {short(s)}")
        v = float(s)
        if not math.isfinite(v) or (lo is not None and (v <= lo if lo_open else v < lo)) or (
                hi is not None and v > hi):
            rel = ">" if lo_open else ">="
            raise argparse.ArgumentTypeError(f"must be {rel} {lo}{f' and <= {hi}' if hi is not None else ''}, "
                                             f"got {s}")
        return v

    parse.__name__ = "number"
    return parse


def cli_text(max_len: int = 4096):
    """argparse ``type=``: printable text (no control characters), e.g. a serial port name."""

    def parse(s: str) -> str:
        bad = next((c for c in s if not c.isprintable()), None)
        if bad is not None or len(s) > max_len or not s:
            raise argparse.ArgumentTypeError(f"not a usable value: {short(s)}")
        return s

    parse.__name__ = "text"
    return parse


def cli_out_file():
    """argparse ``type=``: a file to write at the end of a long run (a benchmark's ``--json OUT``), refused at once
    when it cannot be written there: printable, its folder present, not itself a folder."""

    def parse(s: str) -> str:
        p = Path(cli_text()(s))
        if p.is_dir():
            raise argparse.ArgumentTypeError(f"{short(s)} is a folder")
        if not p.parent.is_dir():
            raise argparse.ArgumentTypeError(f"no folder {short(str(p.parent))} to write {short(p.name)} in")
        return s

    parse.__name__ = "output file"
    return parse
