"""Crash test of the app: a demo evening of each game the app plays, the app SIGKILLed at random moments and
restarted each time. After every kill: the saved session loads (it is never set aside), nothing acknowledged is
lost, the ledger verifies and holds each finished hand at most once. At the end the evening is whole: every hand
booked exactly once and the session's stacks equal the ledger's."""

from __future__ import annotations

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

if not os.environ.get("DISPLAY"):
    pytest.skip("needs a display: run under xvfb-run (make test does)", allow_module_level=True)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KILLS = int(os.environ.get("APP_CRASH_KILLS", "10"))
HANDS = 4
DRIVEN = {"pirates-bluff", "powderkeg"}  # games tests/app_crash_child.py can play


def app_games() -> list[str]:
    """The games the app can start a session of (TableSession.GAMES while it lists them, else the registry's
    games with screens)."""
    from companion import session

    games = set(getattr(session, "GAMES", ()))
    try:
        from companion.games import registry

        games |= {s.id for s in registry.games() if s.screens}
    except ImportError:  # pragma: no cover
        pass
    return sorted(games)


class Child:
    def __init__(self, data: Path, game: str, log: Path):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "KIVY_NO_ARGS": "1"}
        self.log = open(log, "ab")
        self.proc = subprocess.Popen([sys.executable, str(HERE / "app_crash_child.py"), str(data), game,
                                      str(HANDS)], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=self.log,
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

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.t.join(10)
        self.log.close()

    def wait(self, timeout):
        self.proc.wait(timeout)
        self.t.join(10)
        self.log.close()

    def acks(self) -> list[tuple[int, int]]:
        return [tuple(map(int, line.split()[1:3])) for line in self.lines if line.startswith("ack")]


def saved_state(data: Path):
    from companion.savefile import load_saved
    from companion.session import TableSession

    s, note = load_saved(data / "session.json", TableSession.from_dict)
    assert note is None, note  # a file the app wrote is never set aside
    return s


def check_ledger(s, exact: bool) -> dict:
    from companion.ledger import Ledger

    with Ledger.open(s.ledger_path, readonly=True) as led:
        info = led.verify()
        table = led.table()
    booked = info["rounds_played"]
    done = len(s.history)
    assert booked in ((done,) if exact else (done, done + 1)), (booked, done)
    if booked == done:
        assert {p: table["stacks"][p] for p in s.players} == s.stacks
    return info


@pytest.mark.parametrize("game", app_games())
def test_kill_the_app_at_random_moments_in_a_demo_evening(game, tmp_path):
    if game not in DRIVEN:
        pytest.skip(f"no demo driver for {game} in tests/app_crash_child.py")
    rng = random.Random(f"crash-{game}")
    data = tmp_path / "data"
    data.mkdir()
    log = tmp_path / "child.log"
    last = (-1, 0)
    kills = acks = 0
    t0 = time.monotonic()
    while True:
        child = Child(data, game, log)
        if kills < KILLS:
            if rng.random() < 0.15:  # sometimes while the app is still starting or resuming
                time.sleep(rng.uniform(0.0, 1.5))
            else:
                assert child.ready.wait(60), (child.lines, log.read_text(errors="replace")[-3000:])
                time.sleep(rng.uniform(0.0, 0.6))
            child.kill()
            kills += 1
        else:
            child.wait(180)
            assert child.proc.returncode == 0, (child.lines[-5:], log.read_text(errors="replace")[-3000:])
        ready = [line for line in child.lines if line.startswith("ready")]
        if ready:
            resumed = tuple(map(int, ready[0].split()[1:3]))
            assert resumed >= last, ("resumed behind an acknowledged step", resumed, last)
        got = child.acks()
        acks += len(got)
        if got:
            assert got == sorted(got) and got[0] > last
            last = got[-1]
        if not (data / "session.json").exists():
            assert last == (-1, 0)  # killed before the first save
            continue
        s = saved_state(data)
        moves = len(s.hand.moves) if s.hand is not None else -1
        assert (len(s.history), moves) >= last, ("an acknowledged step is lost", (len(s.history), moves), last)
        check_ledger(s, exact=False)
        if child.proc.returncode == 0 and "done" in child.lines:
            break
    s = saved_state(data)
    assert len(s.history) == HANDS
    info = check_ledger(s, exact=True)
    assert not list(data.glob("session.json.bad-*"))
    assert kills >= KILLS // 2 and acks > kills  # the kills landed in the middle of the evening
    print(f"\napp crash test, {game}: {kills} SIGKILLs, {acks} acknowledged steps, {HANDS} hands, ledger "
          f"{info['entries']} entries verified, {time.monotonic() - t0:.1f} s")
