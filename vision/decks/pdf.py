"""A minimal PDF writer for printable decks: JPEG card images placed on pages, with cut marks.

No PDF library is needed: the file is a handful of objects (catalog, pages, one page per sheet with a
content stream, one DCTDecode image XObject per card) and an xref table.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import cv2

MM = 72 / 25.4  # points per millimetre
PAPERS_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}


def write_deck_pdf(cards, out: Path, card_mm: tuple[float, float], paper: str = "a4", px_per_mm: float = 11.81) -> int:
    """cards: iterable of (label, bgr image). Lays out 3x3 per page with cut marks. Returns page count."""
    pw, ph = PAPERS_MM[paper]
    cw, ch = card_mm
    cols, rows = 3, 3
    gap = 0.0  # cards abut so one cut separates two cards
    x0 = (pw - cols * cw - (cols - 1) * gap) / 2
    y0 = (ph - rows * ch - (rows - 1) * gap) / 2
    cards = list(cards)
    objs: list[bytes] = []

    def add(b: bytes) -> int:
        objs.append(b)
        return len(objs)

    catalog = add(b"")  # placeholders filled below
    pages = add(b"")
    page_ids = []
    per = cols * rows
    for p in range(0, len(cards), per):
        chunk = cards[p : p + per]
        content = [b"0.3 w 0 0 0 RG"]
        xobjs = []
        for k, (label, img) in enumerate(chunk):
            ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, 92])
            h, w = img.shape[:2]
            im = add(
                b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceRGB "
                b"/BitsPerComponent 8 /Filter /DCTDecode /Length %d >>\nstream\n" % (w, h, len(jpg))
                + jpg.tobytes() + b"\nendstream"
            )
            name = b"/C%d" % k
            xobjs.append(name + b" %d 0 R" % im)
            c, r = k % cols, k // cols
            x = (x0 + c * (cw + gap)) * MM
            y = (ph - y0 - (r + 1) * ch - r * gap) * MM
            content.append(b"q %.3f 0 0 %.3f %.3f %.3f cm %s Do Q" % (cw * MM, ch * MM, x, y, name))
        # cut marks: short lines in the margins at every card edge
        L = 6 * MM
        for c in range(cols + 1):
            x = (x0 + c * cw) * MM
            top, bot = (ph - y0) * MM, (ph - y0 - rows * ch) * MM
            content.append(b"%.2f %.2f m %.2f %.2f l S %.2f %.2f m %.2f %.2f l S" % (x, top + 1, x, top + L, x, bot - 1, x, bot - L))
        for r in range(rows + 1):
            y = (ph - y0 - r * ch) * MM
            left, right = x0 * MM, (x0 + cols * cw) * MM
            content.append(b"%.2f %.2f m %.2f %.2f l S %.2f %.2f m %.2f %.2f l S" % (left - 1, y, left - L, y, right + 1, y, right + L, y))
        stream = zlib.compress(b"\n".join(content))
        cs = add(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
        pg = add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %.2f %.2f] /Contents %d 0 R "
            b"/Resources << /XObject << %s >> >> >>" % (pages, pw * MM, ph * MM, cs, b" ".join(xobjs))
        )
        page_ids.append(pg)
    objs[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % pages
    objs[pages - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % i for i in page_ids), len(page_ids))
    buf = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for i, b in enumerate(objs, 1):
        offsets.append(len(buf))
        buf += b"%d 0 obj\n" % i + b + b"\nendobj\n"
    xref = len(buf)
    buf += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objs) + 1)
    for o in offsets:
        buf += b"%010d 00000 n \n" % o
    buf += b"trailer\n<< /Size %d /Root %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objs) + 1, catalog, xref)
    tmp = Path(str(out) + ".part")
    tmp.write_bytes(bytes(buf))
    tmp.replace(out)
    return len(page_ids)
