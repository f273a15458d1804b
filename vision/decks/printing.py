"""Printable decks: every deck's faces on A4 or Letter pages with cut marks, written with fpdf2.

``print_deck(deck, output, paper, card_size)`` checks its arguments (one ``PirateTableError`` naming the place),
renders the deck's faces at 300 dpi through the deck's renderer (``Deck.faces``), lays them out edge to edge
(one cut separates two cards), centred on the page, and writes the PDF to a temporary file beside ``output``
that is renamed only when it is complete: a failed run leaves nothing behind.

Card sizes (mm, width x height): poker 63 x 88, bridge 57 x 89, uno 56 x 87, mini 44 x 63.
Cut marks: 0.2 mm lines in the margin, on every card edge's line, from 1 mm to 6 mm outside the grid.
"""

from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from companion.errors import PirateTableError

PAPERS_MM = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
DPI = 300
MIN_MARGIN_MM = 6.0  # room for the cut marks (and most printers' unprintable edge)
MARK_GAP_MM = 1.0
MARK_LEN_MM = 5.0
MARK_W_MM = 0.2
JPEG_QUALITY = 92


def card_sizes() -> dict[str, tuple[float, float]]:
    from vision.decks.render import CARD_SIZES_MM

    return dict(CARD_SIZES_MM)


@dataclass(frozen=True)
class Layout:
    paper: str
    card_size: str
    card_mm: tuple[float, float]
    cols: int
    rows: int
    x0: float  # the grid's top-left corner on the page, mm
    y0: float

    @property
    def per_page(self) -> int:
        return self.cols * self.rows

    @property
    def page_mm(self) -> tuple[float, float]:
        return PAPERS_MM[self.paper]

    def cell(self, k: int) -> tuple[float, float]:
        """Top-left (mm) of the k-th card on a page (row by row)."""
        return self.x0 + (k % self.cols) * self.card_mm[0], self.y0 + (k // self.cols) * self.card_mm[1]


def layout(paper: str, card_size: str) -> Layout:
    pw, ph = PAPERS_MM[paper]
    cw, ch = card_sizes()[card_size]
    cols = int((pw - 2 * MIN_MARGIN_MM) // cw)
    rows = int((ph - 2 * MIN_MARGIN_MM) // ch)
    return Layout(paper, card_size, (cw, ch), cols, rows, (pw - cols * cw) / 2, (ph - rows * ch) / 2)


def check_args(deck_name, output, paper: str, card_size: str):
    """The deck value and the output path, or PirateTableError("<place>: <what>")."""
    from companion.decks import decks, get_deck
    from companion.errors import CardError

    try:
        deck = get_deck(deck_name)
    except CardError as e:
        raise PirateTableError(f"--deck: {e}") from None
    if not deck.faces:
        known = ", ".join(sorted(d.id for d in decks() if d.faces))
        raise PirateTableError(f"--deck: no printable faces for the {deck.title} (printable: {known})")
    if paper not in PAPERS_MM:
        raise PirateTableError(f"--paper: unknown paper {paper!r} (known: {', '.join(PAPERS_MM)})")
    if card_size not in card_sizes():
        known = ", ".join(f"{k} {w:g}x{h:g} mm" for k, (w, h) in card_sizes().items())
        raise PirateTableError(f"--card-size: unknown card size {card_size!r} (known: {known})")
    if not output:
        raise PirateTableError("-o/--output: the PDF file to write is required")
    out = Path(output)
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in str(output)):
        raise PirateTableError(f"-o/--output: control characters in the file name {output!r}")
    if out.suffix.lower() != ".pdf":
        raise PirateTableError(f"-o/--output: {output}: the file name must end in .pdf")
    if out.is_dir():
        raise PirateTableError(f"-o/--output: {output}: is a folder")
    if not out.parent.is_dir():
        raise PirateTableError(f"-o/--output: folder does not exist: {out.parent}")
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise PirateTableError(f"-o/--output: {output}: not writable")
    return deck, out


def faces(deck, card_size: str = "poker", px_per_mm: float = DPI / 25.4):
    """(card notation, BGR image) for every card of ``deck`` in its print face."""
    from vision.decks.faces import faces_for

    f = faces_for(deck)
    style = f.print_style(card_size)
    for c in deck.cards:
        yield deck.notation(c), f.render(c, style, px_per_mm)[0]


def write_pdf(cards, out: Path, lay: Layout, title: str = "") -> int:
    """Lay ``cards`` ((label, BGR image) pairs) out on pages with cut marks; write ``out`` atomically. Returns the
    page count."""
    fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".part", dir=out.parent)  # fails early when unwritable
    try:
        with os.fdopen(fd, "wb") as fh:
            doc = _document(cards, lay, title)
            doc.output(fh)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; the deck is an ordinary file
        os.replace(tmp, out)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return doc.page  # the last page's number: the page count


def _document(cards, lay: Layout, title: str):
    import cv2
    from fpdf import FPDF

    pw, ph = lay.page_mm
    cw, ch = lay.card_mm
    pdf = FPDF(unit="mm", format=(pw, ph))
    pdf.set_auto_page_break(False)
    pdf.set_margin(0)
    pdf.set_creator("pirate-table print-deck")
    if title:
        pdf.set_title(title)
    pdf.set_draw_color(0, 0, 0)
    pdf.set_line_width(MARK_W_MM)
    cards = list(cards)
    for p in range(0, len(cards), lay.per_page):
        pdf.add_page()
        for k, (_label, img) in enumerate(cards[p: p + lay.per_page]):
            ok, jpg = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
            if not ok:
                raise PirateTableError("print-deck: could not encode a card face")
            x, y = lay.cell(k)
            pdf.image(io.BytesIO(jpg.tobytes()), x=x, y=y, w=cw, h=ch)
        gx1, gy1 = lay.x0 + lay.cols * cw, lay.y0 + lay.rows * ch
        reach = min(MARK_LEN_MM, lay.x0 - MARK_GAP_MM - 1.0, lay.y0 - MARK_GAP_MM - 1.0)
        for c in range(lay.cols + 1):
            x = lay.x0 + c * cw
            pdf.line(x, lay.y0 - MARK_GAP_MM, x, lay.y0 - MARK_GAP_MM - reach)
            pdf.line(x, gy1 + MARK_GAP_MM, x, gy1 + MARK_GAP_MM + reach)
        for r in range(lay.rows + 1):
            y = lay.y0 + r * ch
            pdf.line(lay.x0 - MARK_GAP_MM, y, lay.x0 - MARK_GAP_MM - reach, y)
            pdf.line(gx1 + MARK_GAP_MM, y, gx1 + MARK_GAP_MM + reach, y)
    return pdf


def print_deck(deck_name: str, output, paper: str = "a4", card_size: str = "poker") -> dict:
    """Check the arguments, render and write the deck. Returns what was written (for the command's line)."""
    deck, out = check_args(deck_name, output, paper, card_size)
    lay = layout(paper, card_size)
    try:
        pages = write_pdf(faces(deck, card_size), out, lay, title=f"{deck.title}: printable deck")
    except OSError as e:
        raise PirateTableError(f"-o/--output: {output}: {e.strerror or e}") from None
    return {"output": str(out), "deck": deck.id, "cards": deck.size, "pages": pages, "paper": paper,
            "card_size": card_size, "card_mm": lay.card_mm, "per_page": lay.per_page,
            "grid": (lay.cols, lay.rows)}
