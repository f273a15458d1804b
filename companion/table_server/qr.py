"""QR codes for the seat URLs (segno), as PNG bytes for the tablet's screen."""

from __future__ import annotations

import io

import segno


def qr_png(url: str, scale: int = 8, border: int = 2) -> bytes:
    out = io.BytesIO()
    segno.make(url, error="m", micro=False).save(out, kind="png", scale=scale, border=border)
    return out.getvalue()
