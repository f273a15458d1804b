"""The app's box service (no Kivy): a failed 'press your button' reports its error to the UI callback."""

import queue
import time

from companion.ui.boxservice import BoxService


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
