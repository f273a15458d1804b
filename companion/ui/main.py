"""Start the app: window configuration, demo mode, --screenshot and --measure-start."""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path

# --screenshot: the tour's pace. A step that only plays (a move, a tap, a poll of a scan) is followed by the next one a
# few frames later; a picture is taken SHOT_SETTLE_S after the step that asked for it, so the screen has been laid
# out and drawn (the settings panel takes more than 0.05 s to lay itself out). Before session 62 every step waited
# 0.25 s, which made the whole tour of 398 steps take 109 s on this machine.
SHOT_TICK_S = 0.05
SHOT_SETTLE_S = 0.25


def process_age_s() -> float | None:
    """Seconds since this process was created (Linux /proc), so the figure includes the interpreter start."""
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return uptime - start_ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def configure_kivy() -> None:
    from kivy.config import Config

    Config.set("graphics", "width", "1280")
    Config.set("graphics", "height", "800")
    Config.set("graphics", "resizable", "1")
    Config.set("input", "mouse", "mouse,multitouch_on_demand")
    Config.set("kivy", "exit_on_escape", "0")


def demo_games(game: str | None = None):
    """The games whose demo runs: ``game`` alone, or every registered game with a demo hook (the default game
    first)."""
    from companion.games import registry

    if game is not None:
        return [registry.get(game)]
    specs = [g for g in registry.games() if g.demo]
    return sorted(specs, key=lambda g: g.id != registry.DEFAULT_GAME)


def main(demo: bool = False, screenshot_dir: str | None = None, measure_start: bool = False,
         t0: float | None = None, game: str | None = None) -> int:
    t0 = time.perf_counter() if t0 is None else t0
    configure_kivy()
    from kivy.clock import Clock

    from companion.games import registry
    from companion.ui.app import PirateTableApp

    from companion.ui import services

    if not demo and not services.camera_devices() and not services.box_status()[0]:
        demo = True  # no camera and no box: demo mode (the rulebook's table, the software box)
        print("pirate-table app: no camera and no button box found: demo mode", flush=True)
    app = PirateTableApp(demo=demo or bool(screenshot_dir))

    games = demo_games(game)  # checked before the window opens: an unknown game is a one-line error

    def prefill(*_):
        st = app.screens["start"]
        st.pick_game(games[0].id)
        # the demo module's PLAYERS (if it has them) are typed in on the start screen
        players = list(getattr(importlib.import_module(games[0].demo.partition(":")[0]), "PLAYERS", ())) \
            if games[0].demo else []
        if players:
            st.set_count(len(players))
            for t, name in zip(st.name_inputs, players):
                t.text = name

    if app.demo:
        Clock.schedule_once(prefill, 0)

    if measure_start:
        def report(dt):
            t = time.perf_counter() - t0
            age = process_age_s()
            print(f"cold start to first screen: {t:.2f} s in the command"
                  + (f", {age:.2f} s since the process began" if age is not None else ""), flush=True)
            app.stop()
        # the first frame is drawn after on_start; one more frame means it is on screen
        app.bind(on_start=lambda *_: Clock.schedule_once(lambda dt: Clock.schedule_once(report, 0), 0))

    if screenshot_dir:
        out = Path(screenshot_dir)
        out.mkdir(parents=True, exist_ok=True)
        from kivy.core.window import Window

        pending: list[str] = []  # pictures asked for, taken SHOT_SETTLE_S later, before the next step runs

        def take(name):
            fn = Window.screenshot(name=str(out / f"{name}.png"))
            if fn:
                os.replace(fn, out / f"{name}.png")

        def shot(name):
            def f():
                pending.append(name)
            return f

        def show(name):
            return lambda: app.go(name)

        steps = [prefill, shot("start")]
        for i, spec in enumerate(games):
            if spec.demo:
                steps += registry.resolve(spec.demo)(app, shot)
            if i == 0:  # the shared screens, with the first game's session
                for name in ("history", "ledger", "settings", "buttons"):
                    if name != "ledger" or spec.uses_chips:
                        steps += [show(name), shot(name)]
        steps.append(app.stop)

        def step(dt):
            while pending:
                take(pending.pop(0))
            if not steps:
                return
            if steps[0]() is not True:  # a step that returns True waits (runs again next time)
                steps.pop(0)
            Clock.schedule_once(step, SHOT_SETTLE_S if pending else SHOT_TICK_S)

        app.bind(on_start=lambda *_: Clock.schedule_once(step, 0.5))
    # the app's loop is asyncio's, so the phone server (companion/table_server) runs on it beside Kivy
    import asyncio

    asyncio.run(app.async_run(async_lib="asyncio"))
    return 0
