"""Box clock -> host clock, in one place (the idea of Klipper's clocksync.py, much smaller).

The host asks the box for its time (TIME_REQ) and notes when it sent the request and when the answer came.
The box read its clock somewhere inside that round trip, so the host time that matches the box time is the
midpoint, give or take half the round-trip time (RTT). Queueing on USB and in the OS only ever makes a round
trip longer, so samples with the smallest RTT are the most accurate: we keep a window of recent samples,
only use those whose RTT is close to the window's minimum, and fit a straight line through them
(host = offset + box_seconds * ratio), which also estimates the drift of the box's crystal.
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass


@dataclass(frozen=True)
class SyncSample:
    host_sent: float
    host_recv: float
    box_s: float

    @property
    def rtt(self) -> float:
        return self.host_recv - self.host_sent

    @property
    def host_mid(self) -> float:
        return (self.host_sent + self.host_recv) / 2


class ClockSync:
    """Thread-safe estimate of host_time(box_seconds). Host times are time.monotonic() seconds."""

    def __init__(self, tick_hz: int = 2_000_000, window: int = 64, rtt_slack_s: float = 0.0005):
        self.tick_hz = tick_hz
        self._samples: deque[SyncSample] = deque(maxlen=window)
        self._slack = rtt_slack_s
        self._lock = threading.Lock()
        self._offset = None  # host time at box time 0
        self._ratio = 1.0    # host seconds per box second
        self.min_rtt = None
        self._fit = None  # (samples, mean box seconds, sum of squares) of the line fit, for error_bound_s and uncertainty_s

    def reset(self, tick_hz: int | None = None) -> None:
        with self._lock:
            if tick_hz:
                self.tick_hz = tick_hz
            self._samples.clear()
            self._offset = None
            self._ratio = 1.0
            self.min_rtt = None
            self._fit = None

    @property
    def synced(self) -> bool:
        return self._offset is not None

    def add(self, host_sent: float, host_recv: float, box_ticks: int) -> None:
        if host_recv < host_sent:
            return
        s = SyncSample(host_sent, host_recv, box_ticks / self.tick_hz)
        with self._lock:
            self._samples.append(s)
            self.min_rtt = min(x.rtt for x in self._samples)
            good = [x for x in self._samples if x.rtt <= self.min_rtt + self._slack]
            if len(good) >= 2 and good[-1].box_s - good[0].box_s > 0.5:
                n = len(good)
                mb = sum(x.box_s for x in good) / n
                mh = sum(x.host_mid for x in good) / n
                sbb = sum((x.box_s - mb) ** 2 for x in good)
                sbh = sum((x.box_s - mb) * (x.host_mid - mh) for x in good)
                ratio = sbh / sbb
                if 0.5 < ratio < 2.0:  # anything else is not a crystal, it is a glitch
                    self._ratio = ratio
                    self._offset = mh - mb * ratio
                    self._fit = (tuple(good), mb, sbb)
                    return
            best = min(good, key=lambda x: x.rtt)
            self._offset = best.host_mid - best.box_s * self._ratio
            self._fit = ((best,), best.box_s, 0.0)

    def host_time(self, box_ticks: int) -> float | None:
        """Host monotonic time of a box tick, or None before the first sample."""
        with self._lock:
            if self._offset is None:
                return None
            return self._offset + box_ticks / self.tick_hz * self._ratio

    def error_bound_s(self, box_ticks: int) -> float | None:
        """The most ``host_time(box_ticks)`` can be off, from the samples alone: each sample's midpoint is
        within half its round trip of the truth, and the fitted line at a box time is a weighted sum of the
        samples (weights 1/n + (x - mean)(x_i - mean)/Sxx), so the bound is sum |weight_i| * rtt_i / 2. It
        grows when the line is extrapolated far from its samples. Tick rounding is not included."""
        with self._lock:
            if self._fit is None:
                return None
            good, mb, sbb = self._fit
            x = box_ticks / self.tick_hz
            n = len(good)
            if n == 1 or sbb == 0:
                return good[0].rtt / 2
            return sum(abs(1 / n + (x - mb) * (g.box_s - mb) / sbb) * g.rtt / 2 for g in good) * self._ratio

    @property
    def drift_ppm(self) -> float:
        return (self._ratio - 1.0) * 1e6

    @property
    def uncertainty_s(self) -> float | None:
        """Half the longest round trip among the samples the estimate rests on (at most half of the best
        round trip plus the slack): the box read its clock somewhere inside each of those round trips, so
        that is how far off each midpoint can be. The fitted line inherits it (a little more when it is
        extrapolated past the samples)."""
        fit = self._fit
        return None if fit is None else max(x.rtt for x in fit[0]) / 2
