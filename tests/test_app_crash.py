"""Crash test of the app, for EVERY registered game (parametrised over the registry; no per-game code here): a demo
evening played through the game's own step-wise demo hook (``GameSpec.demo_step``) by the real app in a child
process (tests/app_crash_child.py), SIGKILLed at random moments (while starting or resuming, or in the middle of
the evening, a few acknowledged steps on) and restarted each time.

After every kill or exit:

- the saved session loads and is never set aside (no ``session.json.bad-*``);
- nothing acknowledged is lost: the saved session is at or past the last acknowledged step's progress, its
  finished rounds begin with exactly the acknowledged ones, and at the same round its moves begin with the
  acknowledged moves; a restarted app resumes at or past it;
- chip games: the ledger verifies and holds each finished round once (or once more: killed between booking and
  saving, which the resumed session then does not book again), its stacks equal the session's;
- points games: the score sheet equals the referee's ruling of the session's records, whenever the table model
  can produce them (``TableModel.referee_records``).

At the end the evening is whole (``ROUNDS`` rounds, or the game's plan) and, for chip games, every round is booked
exactly once. ``APP_CRASH_KILLS`` (default 4) kills per game; ``APP_CRASH_ROUNDS`` (default 2) rounds per evening.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ui, pytest.mark.slow]

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KILLS = int(os.environ.get("APP_CRASH_KILLS", "4"))
ROUNDS = int(os.environ.get("APP_CRASH_ROUNDS", "2"))
STARTUP_KILLS = 0.2  # the share of kills that land while the app is starting or resuming
# the other kills land after 0..this many acknowledged saves, at a random instant (fewer for more kills, so that
# they spread over the evening)
MAX_ACKS_BEFORE_KILL = max(1, 24 // max(KILLS, 1))


def registered_games() -> list[str]:
    from companion.games import registry

    return [s.id for s in registry.games()]


def digest(value) -> str:  # the same digest as the child's (tests/app_crash_child.py)
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Child:
    def __init__(self, data: Path, game: str, log: Path):
        if not os.environ.get("DISPLAY"):
            pytest.fail("the app crash test needs a display: run it under xvfb-run (make test does)")
        env = {**os.environ, "PYTHONPATH": str(ROOT), "KIVY_NO_ARGS": "1"}
        self.log = open(log, "ab")
        self.proc = subprocess.Popen([sys.executable, str(HERE / "app_crash_child.py"), str(data), game,
                                      str(ROUNDS)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=self.log,
                                     text=True)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line.strip())
            if line.startswith("ready"):
                self.ready.set()

    def n_acks(self) -> int:
        return sum(line.startswith("ack") for line in list(self.lines))

    def kill(self) -> bool:
        """SIGKILL; False when the child had already exited by itself."""
        alive = self.proc.poll() is None
        if alive:
            self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.t.join(10)
        self.log.close()
        return alive and self.proc.returncode == -signal.SIGKILL

    def wait(self, timeout):
        self.proc.wait(timeout)
        self.t.join(10)
        self.log.close()

    def acks(self) -> list[tuple[tuple[int, int], str, str]]:
        out = []
        for line in self.lines:
            if line.startswith("ack"):
                _, h, m, hd, md = line.split()
                out.append(((int(h), int(m)), hd, md))
        return out


def saved_session(data: Path):
    from companion.savefile import load_saved
    from companion.session import TableSession

    s, note = load_saved(data / "session.json", TableSession.from_dict)
    assert note is None, note  # a file the app wrote is never set aside
    assert s is not None
    assert not list(data.glob("session.json.bad-*"))
    return s


def check_ledger(s, exact: bool) -> dict:
    from companion.ledger import Ledger

    assert s.ledger_path is not None, "a chip game's session in the app keeps a ledger"
    with Ledger.open(s.ledger_path, readonly=True) as led:
        info = led.verify()
        table = led.table()
    booked = info["rounds_played"]
    done = len(s.history)
    assert booked in ((done,) if exact else (done, done + 1)), ("rounds booked in the ledger", booked, done)
    if booked == done:
        assert {p: table["stacks"][p] for p in s.players} == s.stacks
    return info


def check_score_sheet(s) -> bool:
    """Points games: the score sheet equals the referee's ruling of the session's records (when the table model
    can produce them). True when checked."""
    recs = s.model.referee_records(s.history)
    if recs is None:
        return False
    want = {p: 0 for p in s.players}
    for rec in recs:
        rec = json.loads(json.dumps(rec))  # as a file would hold it
        ruling = s.spec.rule_record(rec)
        for p, v in s.model.referee_points(ruling).items():
            want[p] += v
    assert s.totals() == want, ("score sheet vs the referee's ruling", s.totals(), want)
    return True


@pytest.mark.parametrize("game", registered_games())
def test_kill_the_app_at_random_moments_in_a_demo_evening(game, tmp_path):
    from companion.games import registry

    spec = registry.get(game)
    assert spec.table is not None and spec.screens, f"{game} cannot be played in the app"
    assert spec.demo_step, f"{game} has no GameSpec.demo_step: the crash test cannot drive it"
    rng = random.Random(f"crash-{game}")
    data = tmp_path / "data"
    data.mkdir()
    log = tmp_path / "child.log"
    last = ((-1, 0), digest([]), digest([]))  # the last acknowledged step: progress, rounds digest, moves digest
    kills = acks = starts = 0
    referee_checks = 0
    t0 = time.monotonic()
    while True:
        assert starts < KILLS + 20, "the evening never ends"
        starts += 1
        child = Child(data, game, log)
        killed = False
        if kills < KILLS:
            if rng.random() < STARTUP_KILLS:  # while the app is still starting or resuming
                time.sleep(rng.uniform(0.0, 2.0))
            else:
                assert child.ready.wait(60), (child.lines, log.read_text(errors="replace")[-3000:])
                target = rng.randint(0, MAX_ACKS_BEFORE_KILL)
                end = time.monotonic() + 60
                while child.n_acks() < target and child.proc.poll() is None and time.monotonic() < end:
                    time.sleep(0.005)
                time.sleep(rng.uniform(0.0, 0.08))  # somewhere inside the next step
            killed = child.kill()
            kills += killed
        else:
            child.wait(300)
        errors = [line for line in child.lines if line.startswith("error")]
        assert not errors, (errors, log.read_text(errors="replace")[-3000:])
        if not killed:
            assert child.proc.returncode == 0, (child.lines[-5:], log.read_text(errors="replace")[-3000:])
        ready = [line for line in child.lines if line.startswith("ready")]
        if ready:
            resumed = tuple(map(int, ready[0].split()[1:3]))
            assert resumed >= last[0], ("resumed behind an acknowledged step", resumed, last[0])
        got = child.acks()
        acks += len(got)
        if got:
            progress = [g[0] for g in got]
            assert progress == sorted(progress) and progress[0] >= last[0], (progress, last[0])
            last = got[-1]
        if not (data / "session.json").exists():
            assert last[0] == (-1, 0), "the saved session vanished"  # killed before the first save
            continue
        s = saved_session(data)
        (h, m), hdig, mdig = last
        moves = list(s.model.moves) if s.hand is not None else []
        now = (len(s.history), len(moves) if s.hand is not None else -1)
        assert now >= (h, m), ("an acknowledged step is lost", now, (h, m))
        if h >= 0:
            assert digest(list(s.history[:h])) == hdig, "an acknowledged round is lost or changed"
            if now[0] == h and m >= 0:
                assert digest(moves[:m]) == mdig, "an acknowledged move is lost or changed"
        if s.uses_chips:
            check_ledger(s, exact=False)
        else:
            referee_checks += check_score_sheet(s)
        if not killed and "done" in child.lines:
            break
    s = saved_session(data)
    assert len(s.history) >= ROUNDS or s.game_over()
    if s.uses_chips:
        info = check_ledger(s, exact=True)
        books = f"ledger {info['entries']} entries verified, {info['rounds_played']} rounds booked once"
    else:
        checked = check_score_sheet(s)
        books = (f"score sheet = the referee's ruling ({referee_checks + checked} checks)" if checked
                 else "score sheet (no referee records from this table model)")
    assert kills >= (KILLS + 1) // 2 and acks > kills  # the kills landed in the middle of the evening
    print(f"\napp crash test, {game}: {kills} SIGKILLs, {starts} starts, {acks} acknowledged saves, "
          f"{len(s.history)} rounds, {books}, {time.monotonic() - t0:.1f} s")
