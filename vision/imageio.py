"""Loading an image a stranger hands us: the size is read from the file's header and checked BEFORE anything is
decoded (a 30000 x 30000 PNG of a few kB would otherwise ask for 2.7 GB), then decoded from the bytes already
read, with the decoder's own warnings kept off the terminal. Errors are one ``PirateTableError`` line.

Formats: PNG, JPEG, BMP, WebP (the header of each is parsed here; anything else is refused by name).
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
import tempfile
from pathlib import Path

from companion.errors import PirateTableError

MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_SIDE = 16384
MIN_SIDE = 32  # smaller than this holds no readable card (and the detector's resize would go to 0 pixels)
MAX_PIXELS = 50_000_000  # a 50-megapixel photo; more is refused before decoding
MAX_ASPECT = 20  # longest side / shortest side
# What libjpeg/libpng print when they decode a damaged file into a partly grey picture: refused, not scanned.
_DAMAGE_WORDS = ("premature end", "corrupt", "truncated", "crc error", "invalid", "bad huffman",
                 "extraneous bytes", "not enough", "error")


class ImageError(PirateTableError):
    """An image file that cannot or may not be decoded."""


def _fail(where: str, what: str) -> None:
    raise ImageError(f"{where}: {what}")


def _png(b: bytes) -> tuple[int, int] | None:
    if b[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    if len(b) < 24 or b[12:16] != b"IHDR":
        raise ValueError("PNG without an IHDR header")
    return struct.unpack(">II", b[16:24])


def _jpeg(b: bytes) -> tuple[int, int] | None:
    if b[:2] != b"\xff\xd8":
        return None
    i = 2
    n = len(b)
    while i < n:
        if b[i] != 0xFF:
            raise ValueError(f"JPEG marker expected at byte {i}")
        while i < n and b[i] == 0xFF:  # fill bytes
            i += 1
        if i >= n:
            break
        marker = b[i]
        i += 1
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:  # no length
            continue
        if marker == 0xD9 or marker == 0xDA:  # end of image / start of scan before a frame header
            break
        if i + 2 > n:
            break
        seg = struct.unpack(">H", b[i:i + 2])[0]
        if seg < 2:
            raise ValueError("JPEG segment with a bad length")
        if marker in (0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF):
            if i + 7 > n:
                break
            h, w = struct.unpack(">HH", b[i + 3:i + 7])
            return w, h
        i += seg
    raise ValueError("JPEG without a frame header (SOF) before its image data")


def _bmp(b: bytes) -> tuple[int, int] | None:
    if b[:2] != b"BM":
        return None
    if len(b) < 26:
        raise ValueError("BMP header cut short")
    dib = struct.unpack("<I", b[14:18])[0]
    if dib == 12:
        w, h = struct.unpack("<HH", b[18:22])
    else:
        w, h = struct.unpack("<ii", b[18:26])
    return abs(w), abs(h)


def _webp(b: bytes) -> tuple[int, int] | None:
    if b[:4] != b"RIFF" or b[8:12] != b"WEBP":
        return None
    if len(b) < 30:
        raise ValueError("WebP header cut short")
    chunk = b[12:16]
    if chunk == b"VP8 ":
        w, h = struct.unpack("<HH", b[26:30])
        return w & 0x3FFF, h & 0x3FFF
    if chunk == b"VP8L":
        bits = int.from_bytes(b[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X":
        w = int.from_bytes(b[24:27], "little") + 1
        h = int.from_bytes(b[27:30], "little") + 1
        return w, h
    raise ValueError(f"WebP with an unknown first chunk {chunk!r}")


_READERS = (("PNG", _png), ("JPEG", _jpeg), ("BMP", _bmp), ("WebP", _webp))


def header_size(data: bytes, where: str = "image") -> tuple[str, int, int]:
    """(format, width, height) from the header alone; ImageError for an unknown format or a broken header."""
    for fmt, reader in _READERS:
        try:
            size = reader(data)
        except (ValueError, struct.error) as exc:
            _fail(where, f"a damaged {fmt} file ({exc})")
        if size is not None:
            return fmt, size[0], size[1]
    _fail(where, "not an image this program reads (PNG, JPEG, BMP or WebP)")
    raise AssertionError  # pragma: no cover


def check_size(fmt: str, w: int, h: int, where: str) -> None:
    if w < MIN_SIDE or h < MIN_SIDE:
        _fail(where, f"{w} x {h} pixels is too small to hold a card (at least {MIN_SIDE} x {MIN_SIDE})")
    if w > MAX_SIDE or h > MAX_SIDE or w * h > MAX_PIXELS:
        _fail(where, f"{w} x {h} pixels ({fmt}) is too large to decode (at most {MAX_SIDE} pixels a side and "
                     f"{MAX_PIXELS // 1_000_000} megapixels); scale it down")
    if max(w, h) > MAX_ASPECT * min(w, h):
        _fail(where, f"{w} x {h} pixels: a strip, not a photo of a table (sides differ more than {MAX_ASPECT}:1)")


@contextlib.contextmanager
def captured_c_stderr():
    """Keep what C libraries (libjpeg, libpng, OpenCV's videoio) write to fd 2 off the terminal while the block
    runs; yields a list that holds that text afterwards (so an error of ours is the first and only line)."""
    import cv2

    try:
        cv2.setLogLevel(0)  # OpenCV's own logging: silent
    except AttributeError:  # pragma: no cover - older OpenCV
        pass
    got: list[str] = []
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError):  # no real fd 2 (an embedded interpreter): nothing to capture
        yield got
        return
    with tempfile.TemporaryFile() as cap:
        os.dup2(cap.fileno(), 2)
        try:
            yield got
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            cap.seek(0)
            got.append(cap.read(4096).decode("utf-8", "replace"))


def _decode_quietly(data: bytes):
    """cv2.imdecode with the C libraries' stderr captured (not printed); returns (image or None, their text)."""
    import cv2
    import numpy as np

    buf = np.frombuffer(data, np.uint8)
    with captured_c_stderr() as noise:
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    return img, "".join(noise)


def load_image(path: str | Path, where: str | None = None):
    """A BGR image (numpy array) from a file, checked by its header before decoding; ImageError otherwise."""
    where = str(path) if where is None else where
    p = Path(path)
    try:
        with open(p, "rb") as f:
            if not os.path.isfile(p):
                _fail(where, "cannot read: not a regular file")
            data = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        _fail(where, "cannot read: no such file")
    except IsADirectoryError:
        _fail(where, "cannot read: a folder, not a file")
    except OSError as exc:
        _fail(where, f"cannot read: {exc.strerror or exc}")
    except ValueError as exc:
        if isinstance(exc, PirateTableError):
            raise
        _fail(where, f"cannot read: {exc}")
    if len(data) > MAX_FILE_BYTES:
        _fail(where, f"larger than {MAX_FILE_BYTES // 2**20} MiB")
    if not data:
        _fail(where, "an empty file, not an image")
    fmt, w, h = header_size(data, where)
    check_size(fmt, w, h, where)
    img, noise = _decode_quietly(data)
    if img is None:
        _fail(where, f"a damaged {fmt} file (it cannot be decoded)")
    if noise and any(word in noise.lower() for word in _DAMAGE_WORDS):
        first = noise.strip().splitlines()[0][:120] if noise.strip() else ""
        _fail(where, f"a damaged {fmt} file (the decoder says: {first})")
    if (img.shape[1], img.shape[0]) not in ((w, h), (h, w)):  # (h, w): a JPEG turned by its EXIF orientation
        _fail(where, f"a damaged {fmt} file (the header says {w} x {h}, the data {img.shape[1]} x {img.shape[0]})")
    return img
