"""Try the phone page on real phones: ``python -m companion.table_server [--seats Ann,Bob,Cy] [--qr DIR]``.

Runs a demo vote on the LAN address (the table's Wi-Fi), prints each seat's URL (and writes its QR code as
PNG into DIR), and prints each reveal. Ctrl-C stops it."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from companion.table_server.demo import DemoSource
from companion.table_server.server import TableServer


async def _main(seats: list[str], qr_dir: str | None, host: str | None) -> None:
    src = DemoSource(seats, kind="vote", choices=("bluffing", "not bluffing"), rounds=100)
    srv = TableServer(src, host=host)
    seen: set[int] = set()

    def on_view(view: dict) -> None:
        r = view["reveal"]
        if r is not None and r["id"] not in seen:
            seen.add(r["id"])
            print(f"round {r['id']}: " + ", ".join(f"{s} {a}" for s, a in r["answers"]), flush=True)

    srv.add_listener(on_view)
    await srv.start()
    for s in seats:
        print(f"{s}: {srv.url_for(s)}", flush=True)
        if qr_dir:
            Path(qr_dir).mkdir(parents=True, exist_ok=True)
            (Path(qr_dir) / f"{s}.png").write_bytes(srv.qr_png(s))
    try:
        await asyncio.Event().wait()
    finally:
        await srv.stop()


def main(argv: list[str] | None = None) -> int:
    from companion.inputs import OneLineParser

    ap = OneLineParser(prog="python -m companion.table_server")
    ap.add_argument("--seats", default="Ann,Bob,Cy")
    ap.add_argument("--qr", default=None, help="write each seat's QR code PNG into this folder")
    ap.add_argument("--host", default=None, help="address to bind (default: the LAN address)")
    a = ap.parse_args(argv)
    seats = [s.strip() for s in a.seats.split(",")]
    if not seats or any(not s or not s.isprintable() for s in seats) or len(set(seats)) != len(seats):
        print("pirate-table: error: --seats: distinct, non-empty names separated by commas", file=sys.stderr)
        return 2
    try:
        asyncio.run(_main(seats, a.qr, a.host))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
