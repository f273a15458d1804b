"""Host driver against the software box (pseudo-terminal), and clock sync on synthetic samples."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from hardware import protocol as P
from hardware.clocksync import ClockSync
from hardware.driver import BoxError, ButtonBox, find_box_ports
from hardware.softbox import SoftBox

# real-time serial timing (simavr on a pty, the soft box's clock sync): run alone, after the rest of the suite
# (`make test`: `-m alone`), so that a worker busy beside them cannot starve them
pytestmark = pytest.mark.alone

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def soft():
    box = SoftBox()
    yield box
    box.close()


@pytest.fixture
def driver(soft):
    events = []
    box = ButtonBox(soft.port, on_event=lambda k, d: events.append((k, d)), sync_interval=0.2)
    box.events = events
    box.open()
    yield box
    box.close()


def _wait(pred, timeout=3.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.01)
    return False


def test_hello_arm_first_call_tie_and_ack(soft, driver):
    assert driver.boot_id == soft.boot_id
    early = soft.press(4)
    p = driver.wait_press(2)
    assert p.press_id == early and not p.armed and not p.first and p.seats == (4,)
    driver.arm(9)
    soft.press(2)
    soft.press(1, 3)
    first, tie = driver.wait_press(2), driver.wait_press(2)
    assert first.armed and first.first and first.round == 9 and first.seats == (2,)
    assert tie.armed and not tie.first and tie.tie and tie.seats == (1, 3)
    assert tie.tick > first.tick
    assert soft.lights_on == 0b10 and soft.buzz_log[-1] == (1, 2000, 300)  # the box lit/buzzed by itself
    assert _wait(lambda: soft.pending == 0)  # every press acknowledged
    driver.disarm()
    assert not soft.armed


def test_commands_reach_the_box_and_bad_arguments_are_refused(soft, driver):
    driver.lights(0b1010_0000, 0b1000_0000)
    assert (soft.lights_on, soft.lights_blink) == (0b1010_0000, 0b1000_0000)
    driver.buzz(2, 1500, 400)
    assert soft.buzz_log[-1] == (2, 1500, 400)
    with pytest.raises(BoxError, match="status 2"):
        driver.buzz(1, 50, 100)


def test_duplicates_dropped_and_corrupt_frames_repaired_by_resend(soft, driver):
    fields = dict(press_id=77, tick=123456, mask=0b100, flags=0, round=0, boot_id=soft.boot_id)
    soft._send(P.PRESS, **fields)
    soft._send(P.PRESS, **dict(fields, flags=P.FLAG_RESEND))
    p = driver.wait_press(2)
    assert p.press_id == 77 and driver.wait_press(0.3) is None
    assert driver.stats.duplicates == 1
    bad_before = driver.stats.frames_bad
    soft.corrupt_next = 2
    soft.press(6)
    p = driver.wait_press(2)
    assert p.seats == (6,) and p.resent
    assert driver.stats.frames_bad >= bad_before + 1
    assert driver.wait_press(0.2) is None


def test_reboot_is_noticed_and_round_rearmed(soft, driver):
    driver.arm(3)
    old = soft.boot_id
    soft.reboot()
    assert _wait(lambda: any(k == "reboot" for k, _ in driver.events))
    kind, detail = next(e for e in driver.events if e[0] == "reboot")
    assert detail["old_boot_id"] == old and detail["new_boot_id"] == soft.boot_id
    assert _wait(lambda: soft.armed and soft.round == 3)  # the driver re-armed the rebooted box
    soft.press(5)
    p = driver.wait_press(2)
    assert p.boot_id == soft.boot_id and p.press_id == 0 and p.armed


def test_seat_assignment(soft, driver):
    def presses():
        time.sleep(0.2)
        soft.press(5)        # -> seat 1
        time.sleep(0.05)
        soft.press(5)        # already assigned: ignored
        time.sleep(0.05)
        soft.press(2, 3)     # a tie is ambiguous: ignored
        time.sleep(0.05)
        soft.press(2)        # -> seat 2
        time.sleep(0.05)
        soft.press(8)        # -> seat 3

    t = threading.Thread(target=presses)
    t.start()
    asked = []
    mapping = driver.assign_seats(3, timeout=5, prompt=asked.append)
    t.join()
    assert mapping == {4: 1, 1: 2, 7: 3} and asked == [1, 2, 3]
    soft.press(8)
    assert driver.wait_press(2).seats == (3,)


def test_reconnect_after_unplug():
    a = SoftBox()
    current = {"port": a.port}
    events = []
    box = ButtonBox(find_port=lambda: current["port"], on_event=lambda k, d: events.append(k)).open()
    try:
        a.close()  # unplugged
        assert _wait(lambda: "disconnected" in events)
        b = SoftBox()  # plugged back (a new device node, a box that reset when the port opened)
        current["port"] = b.port
        try:
            assert _wait(lambda: "reconnected" in events, 5)
            assert "reboot" in events and box.boot_id == b.boot_id
            b.press(1)
            assert box.wait_press(2).seats == (1,)
        finally:
            b.close()
    finally:
        box.close()


def test_clock_sync_converges_on_the_softbox(soft, driver):
    # converged: the estimate rests on a round trip of at most 2 ms. The first sample alone can have a long one when
    # another thread holds the interpreter (it did after the Kivy app's tests in one process: a first round trip of
    # 10-40 ms put the mapped press up to 20 ms after its arrival, always within the clock's own error_bound_s). Up to
    # 20 s: on a slow, busy machine (session 64's fresh-clone CI, late in the whole suite) no round trip of 2 ms came
    # within 5 s; alone the estimate gets there in 0.5 s
    assert _wait(lambda: driver.clock.synced and driver.clock.uncertainty_s <= 0.001, 20)
    soft.press(1)
    p = driver.wait_press(2)
    # the softbox clock is time.monotonic_ns(): the mapped press time must sit just before its arrival
    # (within the half round trip the clock sync cannot see through)
    assert -0.002 <= p.received - p.host_time < 0.05


def test_no_hello_is_a_clear_error(tmp_path):
    import os
    import tty

    m, s = os.openpty()
    tty.setraw(s)
    try:
        with pytest.raises(BoxError, match="no HELLO"):
            ButtonBox(os.ttyname(s), hello_timeout=0.5).open()
    finally:
        os.close(m)
        os.close(s)


def test_find_box_ports_filters_by_usb_id():
    assert isinstance(find_box_ports(), list)
    assert find_box_ports({(0xFFFF, 0xFFFF): "nothing"}) == []


@given(offset=st.floats(-1e4, 1e4), drift_ppm=st.floats(-200, 200), seed=st.integers(0, 2**31))
@settings(max_examples=60, deadline=None)
def test_clock_sync_min_rtt_filter_and_drift(offset, drift_ppm, seed):
    import random

    rng = random.Random(seed)
    cs = ClockSync(tick_hz=2_000_000)
    ratio = 1 + drift_ppm * 1e-6

    def box_ticks(host):  # the box reads its clock at host time `host`
        return round((host - offset) / ratio * 2_000_000)

    t = 100.0
    for _ in range(40):
        base_rtt = 0.0004
        up = base_rtt / 2 + (rng.expovariate(1 / 0.003) if rng.random() < 0.5 else 0.0)
        down = base_rtt / 2 + (rng.expovariate(1 / 0.003) if rng.random() < 0.5 else 0.0)
        cs.add(t, t + up + down, box_ticks(t + up))
        t += 0.5
    # a press at a known host time maps back within the bound the samples give: each midpoint is within half
    # its round trip of the truth, and the samples used are those within the slack of the best (up to 0.45 ms
    # here); the line extrapolated past them can add to that. (The test said "within the best half round trip",
    # 0.2 ms, until hypothesis found seed 2946: one-sided delays in the slack's samples, 0.45 ms off.)
    host = t + 1.0
    ticks = box_ticks(host)
    est = cs.host_time(ticks)
    assert cs.uncertainty_s <= (cs.min_rtt + 0.0005) / 2 + 1e-12
    assert abs(est - host) <= cs.error_bound_s(ticks) + 1e-6  # + tick rounding (0.5 us)
    assert abs(cs.drift_ppm - drift_ppm) < 30


def _cli(*args, stdin=""):
    return subprocess.run([sys.executable, "-m", "companion", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=60)


def test_cli_monitor_with_the_softbox_prints_presses():
    r = _cli("buttons", "monitor", "--sim", "--arm", "2", "--duration", "1.5", "--json", stdin="3\n15\n")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    presses = [x for x in lines if "seats" in x]
    assert [x["seats"] for x in presses] == [[3], [1, 5]]
    assert presses[0]["first"] and presses[1]["tie"] and presses[1]["call"]
    assert all(isinstance(x["host_time"], float) for x in presses)


def test_cli_bad_input_is_a_one_line_error():
    r = _cli("buttons", "monitor", "--sim", "--duration", "-1")
    assert r.returncode == 2 and r.stderr.strip().startswith("pirate-table: error:")
    r = _cli("buttons", "monitor", "--port", "/dev/nonexistent-box", "--duration", "1")
    assert r.returncode == 2 and r.stderr.startswith(
        "pirate-table: error: --port /dev/nonexistent-box: cannot open the button box: ") and r.stderr.count("\n") == 1


def test_reboot_whose_hello_was_lost_is_noticed_from_the_press(soft, driver):
    soft.press(1)
    assert driver.wait_press(2).press_id == 0
    old = soft.boot_id
    soft.corrupt_next = 1  # the HELLO after the reboot is corrupted on the wire
    soft.reboot()
    soft.press(2)          # press id 0 again, but of the new boot: not a duplicate
    p = driver.wait_press(2)
    assert p is not None and p.press_id == 0 and p.boot_id == soft.boot_id != old and p.seats == (2,)
    assert driver.stats.duplicates == 0
    assert _wait(lambda: any(k == "reboot" for k, _ in driver.events))
