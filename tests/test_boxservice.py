"""The app's box service (no Kivy): a failed 'press your button' reports its error to the UI callback."""

import queue
import time

import pytest

from companion.ui.boxservice import BoxService

# real-time serial timing (simavr on a pty, the soft box's clock sync): run alone, after the rest of the suite
# (`make test`: `-m alone`), so that a worker busy beside them cannot starve them
pytestmark = pytest.mark.alone


def test_seat_assignment_timeout_reaches_the_callback_with_its_message():
    ui_queue: queue.Queue = queue.Queue()
    result = {}

    def post(fn):  # like Clock.schedule_once: the callback runs later, on the test ("UI") thread
        ui_queue.put(fn)

    def run_ui(until, timeout):
        end = time.monotonic() + timeout
        while not until() and time.monotonic() < end:
            try:
                ui_queue.get(timeout=0.05)()
            except queue.Empty:
                pass
        return until()

    svc = BoxService("simulated", post).start()
    try:
        assert run_ui(lambda: svc.ready, 20) and svc.simulated

        def finished(mapping, error):
            result.update(mapping=mapping, error=error)

        svc.assign_seats(2, prompt=lambda seat: None, done=finished, timeout=0.3)  # nobody presses
        assert run_ui(lambda: "error" in result, 15)
        assert result["mapping"] is None
        assert result["error"]  # the driver's reason, not a NameError swallowed in the worker
    finally:
        svc.close()


def test_a_touch_becomes_the_box_tick_of_its_instant_though_a_thread_switch_falls_between_the_reads(monkeypatch):
    """press_seat's touch time is turned into the software box's tick of that instant. A thread that loses the
    interpreter right after reading the wall clock (3 ms here, once) must not move the press: the two clocks are read
    as a tight pair (session 65: a whole-hand UI test saw two calls a moment apart swap order)."""
    import companion.ui.boxservice as bs

    class Clock2MHz:  # the software box's clock (hardware/softbox.py SoftBox.ticks: monotonic, 2 MHz), started 10 s ago
        t0 = time.monotonic_ns() - 10_000_000_000

        def ticks(self):
            return (time.monotonic_ns() - self.t0) // 500

    sb = Clock2MHz()
    real_time = time.time
    switched = []

    def wall_then_lose_the_core():
        w = real_time()
        if not switched:
            switched.append(1)
            end = time.perf_counter() + 0.003
            while time.perf_counter() < end:  # another thread runs for 3 ms
                pass
        return w

    touch = real_time() - 0.1
    monkeypatch.setattr(bs.time, "time", wall_then_lose_the_core)
    got = BoxService.tick_at(sb, touch)
    monkeypatch.setattr(bs.time, "time", real_time)
    assert switched
    k1 = sb.ticks()
    w = real_time()
    k2 = sb.ticks()
    want = (k1 + k2) / 2 - (w - touch) * 2_000_000
    assert abs(got - want) < 1000  # within 0.5 ms; the switch alone would put it 3 ms (6,000 ticks) late
    future = BoxService.tick_at(sb, real_time() + 5)  # a touch "in the future": taken as now, never later
    assert k2 <= future <= sb.ticks()
    assert BoxService.tick_at(sb, real_time() - 60) >= sb.ticks() - 1_000_100  # never older than half a second
