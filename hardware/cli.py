"""`pirate-table buttons ...`: watch the CALL button box, benchmark it over the simulated firmware.

Light at import time (no serial import): everything heavy is imported inside the command functions.
"""

from __future__ import annotations

import json
import sys
import threading

from companion.errors import PirateTableError
from companion.inputs import cli_float, cli_int, cli_text


def register(subparsers) -> None:
    p = subparsers.add_parser("buttons", help="the CALL button box: monitor presses, benchmark the firmware")
    sub = p.add_subparsers(dest="buttons_command", metavar="ACTION", required=True)

    m = sub.add_parser("monitor", help="print each press live (seat, box time, host time)")
    src = m.add_mutually_exclusive_group()
    src.add_argument("--port", type=cli_text(4096), help="serial port (default: found by USB VID:PID)")
    src.add_argument("--sim", action="store_true",
                     help="a software box on a pseudo-terminal; type seat digits + Enter to press (13 = tie)")
    src.add_argument("--sim-firmware", action="store_true",
                     help="the real firmware on simavr; type seat digits + Enter to press (13 = tie)")
    m.add_argument("--arm", type=cli_int(0, 65535), metavar="ROUND",
                   help="arm this round (0-65535) first (presses become calls)")
    m.add_argument("--duration", type=cli_float(0, 86400.0 * 366, lo_open=True), help="stop after this many seconds (default: until Ctrl-C/EOF)")
    m.add_argument("--json", action="store_true", help="one JSON object per line")
    m.set_defaults(func=cmd_monitor)

    b = sub.add_parser("bench", help="random press bursts through the simulated firmware; prints JSON figures")
    b.add_argument("--sim-firmware", action="store_true", required=True,
                   help="run the real firmware ELF on simavr (the only bench target)")
    b.add_argument("--presses", type=cli_int(1, 1_000_000), default=2000, help="button presses to send (default 2000)")
    b.add_argument("--seed", type=cli_int(0, 2**63 - 1), default=1)
    b.set_defaults(func=cmd_bench)


def _fmt_press(p, as_json: bool) -> str:
    d = {
        "seats": list(p.seats), "buttons": list(p.buttons), "tie": p.tie, "call": p.armed, "first": p.first,
        "round": p.round, "box_us": p.box_us,
        "host_time": None if p.host_time is None else round(p.host_time, 6),
        "received": round(p.received, 6), "press_id": p.press_id, "boot_id": f"{p.boot_id:08x}",
    }
    if as_json:
        return json.dumps(d)
    kind = ("FIRST CALL" if p.first else "call") if p.armed else "press (not armed)"
    ht = "unsynced" if p.host_time is None else f"{p.host_time:.6f}"
    tie = " TIE" if p.tie else ""
    return (f"seat {','.join(map(str, p.seats))}{tie}  {kind}  box {p.box_us / 1e6:.6f} s  host {ht}  "
            f"(received {p.received:.6f}, id {p.press_id})")


def cmd_monitor(args) -> int:
    import time

    from hardware.driver import BoxError, ButtonBox

    sim = soft = None
    presser = None
    try:
        if args.sim:
            from hardware.softbox import SoftBox

            soft = SoftBox()
            port = soft.port

            def presser(seats):
                soft.press(*seats)
        elif args.sim_firmware:
            from hardware.simbox import SimBox, SimUnavailable

            try:
                sim = SimBox().start()
            except SimUnavailable as exc:
                raise PirateTableError(f"--sim-firmware: {exc}") from None
            port = sim.port

            def presser(seats):
                sim.press(sum(1 << (s - 1) for s in seats))
        else:
            port = args.port

        out_lock = threading.Lock()

        def on_press(p):
            with out_lock:
                print(_fmt_press(p, args.json), flush=True)

        def on_event(kind, detail):
            with out_lock:
                print(json.dumps({"event": kind, "detail": detail}) if args.json else f"[{kind}] {detail}",
                      flush=True)

        box = ButtonBox(port, on_press=on_press, on_event=on_event)
        try:
            box.open()
        except (BoxError, OSError) as exc:
            # the one line names its place: the port asked for, else the box looked for by its USB VID:PID
            if args.port is None and not (args.sim or args.sim_firmware):
                raise PirateTableError(f"button box: {exc}") from None
            where = f"--port {port}" if args.port is not None else ("--sim" if args.sim else "--sim-firmware")
            raise PirateTableError(f"{where}: cannot open the button box: {exc}") from None
        try:
            hello = box.hello
            on_event("hello", {"port": box.port, "boot_id": f"{hello.boot_id:08x}", "fw": hello.fw})
            if args.arm is not None:
                box.arm(args.arm)
                on_event("armed", args.arm)
            stop_at = None if args.duration is None else time.monotonic() + args.duration
            sync_by = time.monotonic() + 2.0  # host times need one clock-sync round trip first
            while not box.clock.synced and time.monotonic() < sync_by:
                time.sleep(0.02)
            if presser is not None:
                threading.Thread(target=_read_presses, args=(presser, on_event), daemon=True).start()
            while stop_at is None or time.monotonic() < stop_at:
                time.sleep(0.05)
        except KeyboardInterrupt:
            pass
        finally:
            box.close()
    finally:
        if soft is not None:
            soft.close()
        if sim is not None:
            sim.stop()
    return 0


def _read_presses(presser, on_event) -> None:
    for line in sys.stdin:
        digits = [int(c) for c in line.strip() if c in "0123456789"]  # ASCII digits only (not "٣")
        seats = sorted(set(d for d in digits if 1 <= d <= 8))
        if seats:
            presser(seats)
        elif line.strip():
            on_event("input", f"ignored {line.strip()!r}: type seat digits 1-8")


def cmd_bench(args) -> int:
    from hardware.bench import run_bench
    from hardware.simbox import SimUnavailable

    try:
        result = run_bench(args.presses, args.seed)
    except SimUnavailable as exc:
        raise PirateTableError(f"--sim-firmware: {exc}") from None
    print(json.dumps(result, indent=2))
    return 0 if result["lost"] == 0 and result["duplicated"] == 0 and result["order_and_masks_match"] else 1

