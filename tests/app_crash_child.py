"""Child process of the app crash test (tests/test_app_crash.py); not a test module itself.

``python app_crash_child.py DATA_DIR GAME ROUNDS`` runs the real app (Kivy, in this process, under the parent's
Xvfb display) on DATA_DIR, resumes the saved session if there is one, and plays a demo evening of GAME through
the game's own step-wise demo hook (``GameSpec.demo_step``, docs/adding-a-game.md): each step is decided from the
app's session alone, so a restarted child carries on where the saved session stands. The evening is over when
ROUNDS rounds are finished (or the game's plan is).

Lines on stdout:

- ``ready H M``: resumed (or started afresh) at progress (finished rounds, moves of the round in play; -1 for
  none; ``ready -1 0`` before any session);
- ``ack H M HDIG MDIG``: the app has saved (printed right after every ``app.save()``, so that a kill may land
  anywhere after it): the progress, and digests of the finished rounds' rulings and of the round's moves, which
  the resumed session must still hold;
- ``done``; or ``error ...`` (then exit 3/4) when the game cannot be driven.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def digest(value) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=repr)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def progress(session) -> tuple[int, int]:
    """(finished rounds, moves of the round in play or -1 between rounds); (-1, 0) with no session."""
    if session is None:
        return (-1, 0)
    return (len(session.history), len(session.model.moves) if session.hand is not None else -1)


def marks(session) -> tuple[str, str]:
    """Digests of what an acknowledged step vouches for: the finished rounds and the round's moves so far."""
    return digest(list(session.history)), digest(list(session.model.moves) if session.hand is not None else [])


def file_digest(path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def fail(code: int, text: str) -> None:
    print(f"error {text}".replace("\n", " | "), flush=True)
    os._exit(code)


def main() -> None:
    data, game, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
    from ui_driver import pump, start_app

    app = start_app(os.path.join(data, "kivy_home"), data)
    from companion.games import registry
    from companion.ui import services

    saved = app.save

    def save_then_ack():
        """Every save of the app (each intent's, the resume's, the next round's) is acknowledged at once, as
        soon as the file is written: the parent may kill the child anywhere after it."""
        saved()
        if app.session is not None:
            h, m = progress(app.session)
            print(f"ack {h} {m} {' '.join(marks(app.session))}", flush=True)

    app.save = save_then_ack  # the app's own save, then the line
    spec = registry.get(game)
    if not spec.demo_step:
        fail(3, f"{game} has no demo_step hook (GameSpec.demo_step): the crash test cannot drive it")
    step = registry.resolve(spec.demo_step)
    path = services.session_path()
    if path.exists():
        app.resume()
        if app.session is None:
            fail(3, f"resume failed: {app.status_text}")
        if app.session.game != game:
            fail(3, f"resumed a session of {app.session.game}, not {game}")
    pump(2)
    print(f"ready {' '.join(map(str, progress(app.session)))}", flush=True)

    def finished() -> bool:
        s = app.session
        return s is not None and (len(s.history) >= rounds or s.game_over())

    stuck = 0
    while not finished():
        before = file_digest(path)
        step(app)
        pump(1)
        if file_digest(path) == before:  # nothing saved: wait (e.g. the simultaneity window must close first)
            stuck += 1
            if stuck > 200:
                fail(4, f"stuck at {progress(app.session)}: {app.status_text}")
            time.sleep(0.02)
            pump(2)
            continue
        stuck = 0
    print("done", flush=True)
    app.stop()
    os._exit(0)


if __name__ == "__main__":
    try:
        main()
    except BaseException:  # the parent shows this line; Kivy's console log is off
        fail(5, traceback.format_exc())
