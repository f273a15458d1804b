"""Load and reveal-latency benchmark: N scripted phones (in another process, like real phones) answer R secret
rounds as fast as the server opens them; the tablet side (a listener on the server's loop, where the Kivy app
would be) records when each reveal reaches it.

    python -m companion.table_server.bench --phones 10 --rounds 100

Reveal latency = the tablet listener seeing the reveal - the last phone sending its answer (one monotonic clock,
two processes). Prints p50 / p99 / max for the tablet and for the slowest phone, and checks that every answer
arrived exactly once (none lost, none duplicated).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing as mp
import statistics
import sys
import time
from typing import Any

from companion.table_server.demo import DemoSource
from companion.table_server.server import TableServer
from companion.table_server.thread import ServerThread

CHOICES = tuple(f"c{i}" for i in range(10))


def expected_choice(phone: int, rnd: int) -> int:
    return (phone * 7 + rnd) % len(CHOICES)


async def _phones(urls: list[str], rounds: int) -> dict[str, Any]:
    from companion.table_server.client import PhoneClient

    sent: list[dict[int, float]] = [{} for _ in urls]
    seen: list[dict[int, float]] = [{} for _ in urls]
    errors: list[Any] = []

    async def one(i: int, url: str) -> None:
        ph = PhoneClient(url)
        await ph.join()
        idx = 0
        try:
            while True:
                await ph.wait_for(lambda c: len(c.frames) > idx, timeout=60)
                new, idx = range(idx, len(ph.frames)), len(ph.frames)
                for k in new:
                    m = json.loads(ph.frames[k])
                    if m["type"] == "error":
                        errors.append(m)
                    elif m["reveal"] is not None and m["reveal"]["id"] not in seen[i]:
                        seen[i][m["reveal"]["id"]] = ph.received_at[k]
                q = ph.view["question"] if ph.view is not None else None
                if q is not None and q["mine"]["asked"] and not q["mine"]["answered"] and q["id"] not in sent[i]:
                    sent[i][q["id"]] = time.monotonic()
                    await ph.answer(q["id"], expected_choice(i, q["id"]))
                if len(seen[i]) >= rounds:
                    break
        finally:
            await ph.close()

    await asyncio.wait_for(asyncio.gather(*(one(i, u) for i, u in enumerate(urls))), timeout=600)
    return {"sent": sent, "seen": seen, "errors": errors}


def _phones_main(urls: list[str], rounds: int, conn: Any) -> None:
    try:
        conn.send(asyncio.run(_phones(urls, rounds)))
    except BaseException as e:  # report, never hang the parent
        conn.send({"failed": repr(e)})
    finally:
        conn.close()


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def run(phones: int = 10, rounds: int = 100) -> dict[str, Any]:
    seats = [f"P{i:02d}" for i in range(phones)]
    src = DemoSource(seats, kind="vote", choices=CHOICES, rounds=rounds, title="Bench")
    tablet: dict[int, float] = {}

    def on_view(view: dict[str, Any]) -> None:
        r = view["reveal"]
        if r is not None and r["id"] not in tablet:
            tablet[r["id"]] = time.monotonic()

    def make() -> TableServer:
        # scripted phones answer within ms of each question (hundreds a second): far above the
        # per-connection limit meant for people (10/s), so the benchmark raises it
        srv = TableServer(src, host="127.0.0.1", rate=2000, burst=2000)
        srv.add_listener(on_view)
        return srv

    with ServerThread(make) as srv:
        urls = [srv.url_for(s) for s in seats]
        ctx = mp.get_context("spawn")
        parent, child = ctx.Pipe(duplex=False)
        proc = ctx.Process(target=_phones_main, args=(urls, rounds, child), daemon=True)
        t0 = time.monotonic()
        proc.start()
        if not parent.poll(620):
            proc.kill()
            raise RuntimeError("bench: the phones did not finish")
        res = parent.recv()
        wall = time.monotonic() - t0
        proc.join(10)
    if "failed" in res:
        raise RuntimeError(f"bench: phones failed: {res['failed']}")
    sent, seen = res["sent"], res["seen"]
    expected = [{s: CHOICES[expected_choice(i, r)] for i, s in enumerate(seats)} for r in range(1, rounds + 1)]
    lat_tablet = [(tablet[r] - max(sent[i][r] for i in range(phones))) * 1000 for r in range(1, rounds + 1)]
    lat_phone = [(max(seen[i][r] for i in range(phones)) - max(sent[i][r] for i in range(phones))) * 1000
                 for r in range(1, rounds + 1)]
    return {
        "phones": phones, "rounds": rounds, "inputs": sum(len(s) for s in sent), "wall_s": wall,
        "history_ok": src.history == expected, "recorded": sum(len(h) for h in src.history),
        "errors": res["errors"],
        "tablet_ms": {"p50": statistics.median(lat_tablet), "p99": pct(lat_tablet, 99), "max": max(lat_tablet)},
        "phone_ms": {"p50": statistics.median(lat_phone), "p99": pct(lat_phone, 99), "max": max(lat_phone)},
    }


def main(argv: list[str] | None = None) -> int:
    from companion.inputs import OneLineParser, cli_int

    ap = OneLineParser(prog="python -m companion.table_server.bench")
    ap.add_argument("--phones", type=cli_int(1, 64), default=10)
    ap.add_argument("--rounds", type=cli_int(1, 10000), default=100)
    a = ap.parse_args(argv)
    r = run(a.phones, a.rounds)
    print(f"phones={r['phones']} rounds={r['rounds']} inputs sent={r['inputs']} recorded={r['recorded']} "
          f"all as sent, once each: {r['history_ok']} errors={len(r['errors'])} wall={r['wall_s']:.2f}s")
    for side in ("tablet", "phone"):
        m = r[f"{side}_ms"]
        print(f"reveal latency ({side}{'' if side == 'tablet' else ', slowest phone'}): "
              f"p50={m['p50']:.1f} ms p99={m['p99']:.1f} ms max={m['max']:.1f} ms")
    return 0 if r["history_ok"] and not r["errors"] else 1


if __name__ == "__main__":
    sys.exit(main())
