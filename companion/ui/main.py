"""Start the app: window configuration, demo mode, --screenshot and --measure-start."""

from __future__ import annotations

import os
import time
from pathlib import Path

DEMO_PLAYERS = ["Arville", "Bethany", "Carter", "Douglas", "Eris"]
# The rulebook's example hand (docs/pirates-bluff.md), played through the app's intents for the screenshots.
DEMO_STARTING = {"Arville": "2D", "Bethany": "2C", "Carter": "3A", "Douglas": "4A", "Eris": "7A"}
DEMO_BIDS = [("Bethany", 3, 2), ("Arville", 4, 2), ("Carter", 5, 2), ("Bethany", 5, 7), ("Douglas", 6, 7),
             ("Carter", 7, 2), ("Eris", 7, 7)]
PK_PLAYERS = ["Alfonse", "Beatrice", "Cowen", "Dougherty", "Eron"]
DEMO_COUNTS = {"Arville": (0, 1), "Bethany": (2, 0), "Carter": (0, 0), "Douglas": (0, 1), "Eris": (3, 1)}


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


def main(demo: bool = False, screenshot_dir: str | None = None, measure_start: bool = False,
         t0: float | None = None) -> int:
    t0 = time.perf_counter() if t0 is None else t0
    configure_kivy()
    from kivy.clock import Clock

    from companion.decks.pirates72 import PBCard
    from companion.ui.app import PirateTableApp

    from companion.ui import services

    if not demo and not services.camera_devices() and not services.box_status()[0]:
        demo = True  # no camera and no box: demo mode (the rulebook's table, the software box)
        print("pirate-table app: no camera and no button box found: demo mode", flush=True)
    app = PirateTableApp(demo=demo or bool(screenshot_dir))

    def prefill(*_):
        st = app.screens["start"]
        st.set_count(len(DEMO_PLAYERS))
        for t, name in zip(st.name_inputs, DEMO_PLAYERS):
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

        def shot(name):
            def f():
                fn = Window.screenshot(name=str(out / f"{name}.png"))
                if fn:
                    os.replace(fn, out / f"{name}.png")
            return f

        def show(name):
            return lambda: app.go(name)

        def bids():
            for p, q, r in DEMO_BIDS:
                app.bid(p, q, r)

        def powderkeg_round():
            """The Powderkeg rulebook round up to the third call (a new Powderkeg session)."""
            from companion.decks.island54 import IslandCard

            app.new_session(players=PK_PLAYERS, buy_in=50, game="powderkeg", super_wilds=False, cyclone=None,
                            window_ms=10, ante=1)
            app.powderkeg_card(IslandCard.parse("K:anchors"))
            for c in ("A:flowers", "A:crabs"):
                app.powderkeg_card(IslandCard.parse(c))
            for p in PK_PLAYERS[1:]:
                app.powderkeg_call("live")
            app.powderkeg_card(IslandCard.parse("3:boats"))
            for p in PK_PLAYERS[1:3]:
                app.powderkeg_call("live")

        def counts():
            sd = app.screens["showdown"]
            for p, (n, w) in DEMO_COUNTS.items():
                sd.counts[p] = [n, w]
            sd.refresh()

        def wait_scan():
            """The simulated table camera's reading (its worker thread) has come back."""
            if app.camera is not None:
                steps.insert(0, wait_scan)

        steps = [
            prefill, shot("start"),
            lambda: app.screens["start"].start_session(),
            app.start_scan, wait_scan, shot("scan"), app.end_scan,
            lambda: [app.screens["deal"].cards.update({p: PBCard.parse(c) for p, c in DEMO_STARTING.items()}),
                     app.screens["deal"].refresh()],
            shot("deal"),
            lambda: app.reveal({p: PBCard.parse(c) for p, c in DEMO_STARTING.items()}),
            bids, shot("bid"),
            lambda: app.press_call("Douglas"),  # the software box's button, through the driver
            lambda: None, lambda: None,  # the simultaneity window closes
            counts, shot("showdown"),
            lambda: app.showdown({p: tuple(v) for p, v in DEMO_COUNTS.items()}), shot("ruling"),
            show("coach"), lambda: None, shot("coach"),
            app.next_hand, show("history"), shot("history"),
            show("ledger"), shot("ledger"),
            show("settings"), shot("settings"),
            show("buttons"), shot("buttons"),
            powderkeg_round, lambda: None, shot("powderkeg"),
            app.stop,
        ]

        def step(dt):
            if not steps:
                return
            steps.pop(0)()
            Clock.schedule_once(step, 0.25)

        app.bind(on_start=lambda *_: Clock.schedule_once(step, 0.5))
    app.run()
    return 0
