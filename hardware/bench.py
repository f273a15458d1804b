"""End-to-end benchmark over the real firmware on simavr: random bursts of presses in, driver out.

``run_bench(presses=N)`` schedules bursts of button edges at exact simulated cycles, receives the presses
through the host driver on the harness's pseudo-terminal, and compares what came out with what went in.
Used by ``pirate-table buttons bench --sim-firmware`` and by tests/test_firmware_sim.py.
"""

from __future__ import annotations

import random
import statistics
import time

from hardware.simbox import CYCLES_PER_TICK, CYCLES_PER_US, SimBox

RELEASE_REARM_US = 7_000  # the firmware re-arms a button after 5 ms of stable release (1 ms polls)


def make_bursts(presses: int, rng: random.Random, *, min_gap_us: int = 10, max_gap_us: int = 400,
                tie_p: float = 0.3):
    """Random bursts. Returns (edges [(offset_cycles, down, up)], groups [(offset_cycles, mask)], duration).

    In a burst 1-8 different buttons go down; consecutive buttons share a sample (an exact tie: same cycle)
    with probability tie_p, otherwise the next goes down min_gap_us..max_gap_us later. All are released
    together 1-3 ms after the last one, and the next burst starts after the re-arm time.
    """
    edges, groups = [], []
    t = 0
    sent = 0
    while sent < presses:
        k = min(rng.randint(1, 8), presses - sent)
        buttons = rng.sample(range(8), k)
        sent += k
        mask = 0
        group_mask = 0
        for i, b in enumerate(buttons):
            if i > 0 and rng.random() >= tie_p:
                groups.append((t, group_mask))
                edges.append((t, group_mask, 0))
                t += rng.randint(min_gap_us * CYCLES_PER_US, max_gap_us * CYCLES_PER_US)
                group_mask = 0
            group_mask |= 1 << b
            mask |= 1 << b
        groups.append((t, group_mask))
        edges.append((t, group_mask, 0))
        t += rng.randint(1000, 3000) * CYCLES_PER_US
        edges.append((t, 0, mask))
        t += RELEASE_REARM_US * CYCLES_PER_US
    return edges, groups, t


def _pct(values, q):
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def run_bench(presses: int = 2000, seed: int = 1, *, timeout_s: float | None = None, debug: list | None = None) -> dict:
    """Drive the real firmware in simavr with random bursts and measure what the host driver receives.

    timeout_s: give up when neither the simulator nor the host makes progress for this long (default 20 s).
    """
    from hardware.driver import ButtonBox

    rng = random.Random(seed)
    edges, groups, duration = make_bursts(presses, rng)
    got = []
    with SimBox() as sim:
        box = ButtonBox(sim.port, on_press=got.append, sync_interval=0.25)
        box.open()
        try:
            box.arm(1)
            t_sync = time.monotonic() + 3.0
            while not box.clock.synced and time.monotonic() < t_sync:
                time.sleep(0.05)
            n_edges_before = len(sim.edges)
            box_t0 = time.monotonic()
            sim.schedule(edges)
            # simavr runs slower than real time on a loaded machine, so wait on progress, not on a fixed
            # wall-clock budget: give up only when neither the simulation nor the host moves for stall_s.
            stall_s = timeout_s if timeout_s is not None else 20.0
            last, last_move = None, time.monotonic()
            while True:
                now_state = (len(sim.edges) - n_edges_before, len(got))
                if now_state[0] >= len(edges) and now_state[1] >= len(groups):
                    break
                if now_state != last:
                    last, last_move = now_state, time.monotonic()
                elif time.monotonic() - last_move > stall_s:
                    break
                time.sleep(0.05)
            time.sleep(0.3)  # let late resends arrive, to count duplicates honestly
            applied = sim.edges[n_edges_before:]
            stats = box.stats
            sync_rtt = box.clock.min_rtt
            drift = box.clock.drift_ppm
        finally:
            box.close()

    down_cycles = [c for c, d, _ in applied if d]
    want_masks = [m for _, m in groups]
    got_sorted = sorted(got, key=lambda p: p.tick)
    got_masks = [sum(1 << b for b in p.buttons) for p in got_sorted]
    ids = [p.press_id for p in got]
    duplicated = len(ids) - len(set(ids))
    matched = got_masks == want_masks and len(down_cycles) == len(groups)
    # timestamp error: box ticks vs the cycles the harness applied the edges at, after removing the
    # constant latency (median offset)
    errors_us = []
    if matched:
        offs = [p.tick * CYCLES_PER_TICK - c for p, c in zip(got_sorted, down_cycles)]
        med = statistics.median(offs)
        errors_us = [abs(o - med) / CYCLES_PER_US for o in offs]
        if debug is not None:
            debug.extend(zip(down_cycles, offs, [p.tick for p in got_sorted], want_masks))
            debug.append(applied)
    lat_ms = [(p.received - p.host_time) * 1000 for p in got if p.host_time is not None]
    received_presses = sum(len(p.buttons) for p in got)
    return {
        "presses_sent": presses,
        "events_expected": len(groups),
        "edges_applied_by_simulator": len(applied),
        "edges_scheduled": len(edges),
        "presses_received": received_presses,
        "events_received": len(got),
        "lost": max(0, presses - received_presses),
        "duplicated": duplicated,
        "duplicates_dropped_by_host": stats.duplicates,
        "ties_expected": sum(1 for m in want_masks if bin(m).count("1") > 1),
        "ties_detected": sum(1 for p in got if p.tie),
        "order_and_masks_match": matched,
        "worst_timestamp_error_us": round(max(errors_us), 3) if errors_us else None,
        "timestamp_errors_over_1us": sum(1 for e in errors_us if e > 1.0),
        "timestamp_errors_over_2us": sum(1 for e in errors_us if e > 2.0),
        "latency_p50_ms": round(_pct(lat_ms, 0.50), 3) if lat_ms else None,
        "latency_p99_ms": round(_pct(lat_ms, 0.99), 3) if lat_ms else None,
        "frames_ok": stats.frames_ok,
        "frames_rejected": stats.frames_bad,
        "clock_sync_min_rtt_ms": round(sync_rtt * 1000, 3) if sync_rtt is not None else None,
        "clock_drift_ppm": round(drift, 1),
        "simulated_seconds": round(duration / 16e6, 3),
        "seed": seed,
        # what the driver noticed (disconnects, reconnects, reboots), seconds after the bursts began
        "driver_events": [(round(t - box_t0, 3), kind, str(detail)) for t, kind, detail in stats.events],
    }
