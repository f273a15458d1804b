"""Render every screen of one registered game, in a fresh app process (Kivy has one window per process).

    python tests/games/render_screens.py GAME OUTDIR

Builds the real app under the display (Xvfb), shows each of the game's screens with no session, then starts a
session of the game with its fewest players and default options and shows each screen again; every view is
written as OUTDIR/<screen>-<empty|session>.png. Prints one JSON line: the screens, the table model's screen and
any error. Exit 0 only when every screen rendered.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main(game: str, out: Path) -> int:
    from ui_driver import pump, start_app

    tmp = Path(tempfile.mkdtemp(prefix="render-"))
    app = start_app(tmp / "kivy", tmp / "data")
    from kivy.core.window import Window

    from companion.games import registry

    spec = registry.get(game)
    out.mkdir(parents=True, exist_ok=True)
    result = {"game": game, "screens": list(app.game_screens[game]), "shots": [], "model_screen": None,
              "error": None}

    def shoot(name, tag):
        app.go(name)
        if app.sm.current != name:  # the screen's allowed() says not now: it must still render (its why)
            assert not app.allowed(name)[0], (name, app.sm.current, app.status_text)
            app.screens[name].refresh()
            app.sm.current = name
        pump(3)
        assert app.sm.current == name, (name, app.sm.current, app.status_text)
        fn = Window.screenshot(name=str(out / f"{name}-{tag}.png"))
        os.replace(fn, out / f"{name}-{tag}.png")
        result["shots"].append(f"{name}-{tag}.png")

    try:
        for name in app.game_screens[game]:
            shoot(name, "empty")
        players = [f"Player{i + 1}" for i in range(spec.min_players)]
        app.new_session(players=players, buy_in=50, game=game)
        pump(3)
        assert app.session is not None and app.session.game == game, app.status_text
        result["model_screen"] = app.session.model.screen()
        for name in app.game_screens[game]:
            shoot(name, "session")
    except Exception:  # reported, then a non-zero exit
        result["error"] = traceback.format_exc()
    print(json.dumps(result))
    app.stop()
    return 0 if result["error"] is None else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
