"""`pirate-table app`: the Kivy tablet app (Kivy is imported only when the command runs)."""

from __future__ import annotations

import argparse

from companion.inputs import cli_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("app", help="the tablet app (Kivy)",
                       description="The Pirate Table tablet app: sessions, hands, calls, rulings, history.")
    p.add_argument("--demo", action="store_true",
                   help="demo mode: the rulebook's table pre-filled, software box (keys 1-8, on-screen CALL)")
    p.add_argument("--screenshot", metavar="DIR", type=cli_text(4096),
                   help="write a PNG of each main screen (playing the rulebook's example hand) and exit")
    p.add_argument("--game", metavar="GAME",
                   help="with --demo / --screenshot: only this registered game's demo (default: every game's)")
    p.add_argument("--measure-start", action="store_true",
                   help="print the cold start time to the first screen drawn, then exit")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os
    import time

    t0 = time.perf_counter()
    if args.screenshot:  # a folder that cannot be made is one line before the app starts (and prints anything)
        from pathlib import Path

        from companion.errors import PirateTableError

        try:
            Path(args.screenshot).mkdir(parents=True, exist_ok=True)
        except (OSError, ValueError) as exc:
            raise PirateTableError(f"{args.screenshot}: cannot make the folder: {getattr(exc, 'strerror', None) or exc}") from None
    os.environ.setdefault("KIVY_NO_ARGS", "1")
    os.environ.setdefault("KIVY_NO_CONSOLELOG", "1")
    from companion.ui.main import main

    if args.game is not None:
        from companion.games import registry

        registry.get(args.game)  # an unknown game: one line, exit 2, before any window opens
    return main(demo=args.demo, screenshot_dir=args.screenshot, measure_start=args.measure_start, t0=t0,
                game=args.game)
