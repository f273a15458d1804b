"""The real app with phones for Pirate Whist and Bluff Pirate, under Xvfb (App.async_run, the phone server on
Kivy's asyncio loop). Whist: two phones bid, two players bid on the passed tablet's own bid screen (tap by tap),
into the one SecretRound; the last bid (a phone's) reveals the bids at once and the tablet follows to the play
screen. Bluff Pirate: the set is laid on the tablet, two voters vote by phone and one on the passed tablet's vote
screen; the tablet follows to the pick screen; the setter picks from her phone; only the picked vote is shown.

The app runs in a child process (one Kivy window per process): ``python tests/test_table_server_ui_games.py OUT``.
FAILS (not skips) without a display. PIRATE_TABLE_SHOTS=<dir> copies the screenshots there."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ["Ann", "Bob", "Cy", "Dee"]
SHOTS = ("whist-phones.png", "bluff-pirate-phones.png")


def test_app_whist_bids_and_bluff_pirate_votes_from_phones_and_the_passed_tablet(tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.fail("needs a display: run under xvfb-run (make test does)")
    out = tmp_path / "out"
    env = dict(os.environ, KIVY_HOME=str(tmp_path / "kivy"), PIRATE_TABLE_DATA=str(tmp_path / "data"),
               KIVY_NO_ARGS="1", KIVY_NO_CONSOLELOG="1", PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    r = json.loads((out / "result.json").read_text())
    # Whist
    assert r["w_asks"] == PLAYERS and r["w_waiting_before_last"] == ["Dee"]
    assert r["w_phase_before_last"] == "bid" and r["w_reveal_before_last"] is None
    assert r["w_events"] == [{"e": "bid", "player": "Ann", "bid": 2}, {"e": "bid", "player": "Bob", "bid": 1},
                             {"e": "bid", "player": "Cy", "bid": 0}, {"e": "bid", "player": "Dee", "bid": 3},
                             {"e": "reveal"}]
    assert r["w_reveal"] == [["Ann", "2"], ["Bob", "1"], ["Cy", "0"], ["Dee", "3"]]
    assert r["w_screen_after"] == "whist_play" and r["w_phase_after"] == "play"
    assert r["w_status"].startswith("Revealed (bid): Ann 2, Bob 1, Cy 0, Dee 3")
    # Bluff Pirate
    assert r["b_asks"] == ["Bob", "Cy", "Dee"] and r["b_screen_votes"] == "bp_vote"
    assert r["b_screen_pick"] == "bp_pick" and r["b_pick_choices"] == ["Bob", "Cy", "Dee"]
    assert r["b_reveal"] == [["Ann", "Cy"]] and r["b_screen_after"] == "bp_race"
    assert r["b_last_reveal"] == ["Cy", "not bluffing"]
    assert r["b_phase"].startswith("Cy voted not bluffing. Ann was bluffing (hidden: map, hat).")
    assert r["b_unpicked_shown"] is False
    for name in SHOTS:
        assert (out / name).stat().st_size > 10_000
    shots = os.environ.get("PIRATE_TABLE_SHOTS")
    if shots:
        for name in SHOTS:
            shutil.copy(out / name, Path(shots) / name)


# ------------------------------------------------------------------ the child: the real app on asyncio
def _child(out: Path) -> None:  # pragma: no cover - runs in the child process
    import asyncio

    from companion.ui.main import configure_kivy

    configure_kivy()
    from kivy.clock import Clock
    from kivy.core.window import Window
    from kivy.tests.common import UnitTestTouch

    from companion.games.bluff_pirate.model import Intent
    from companion.table_server.client import PhoneClient
    from companion.ui.app import PirateTableApp

    out.mkdir(parents=True, exist_ok=True)
    app = PirateTableApp(demo=True)
    r: dict = {}

    async def until(cond, timeout=15.0):
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not cond():
            if loop.time() > end:
                raise TimeoutError("condition not met")
            await asyncio.sleep(0.02)

    def tap(widget):
        x, y = widget.to_window(*widget.center)
        t = UnitTestTouch(x, y)
        t.touch_down()
        t.touch_up()

    def button(tag):
        hits = [w for w in app.sm.current_screen.walk(restrict=True) if getattr(w, "tag", None) == tag]
        assert len(hits) == 1, tag
        return hits[0]

    async def tap_tag(tag):
        await asyncio.sleep(0.15)  # laid out
        tap(button(tag))

    async def shot(name):
        await asyncio.sleep(0.4)
        fn = Window.screenshot(name=str(out / name))
        os.replace(fn, out / name)

    async def phones_on():
        app.phones.host = "127.0.0.1"  # tests talk to 127.0.0.1 only (the app binds the LAN address)
        app.phones_on()
        await until(lambda: app.phones.running)
        return app.phones.server

    async def whist():
        app.new_session(PLAYERS, game="pirate-whist", options={"max_cards": 3, "first_dealer": "Dee"})
        srv = await phones_on()
        ann = await PhoneClient(srv.url_for("Ann")).join()
        dee = await PhoneClient(srv.url_for("Dee")).join()
        await until(lambda: ann.view is not None and ann.view["question"] is not None)
        q = ann.view["question"]
        r["w_asks"] = q["asks"]
        await ann.answer(q["id"], 2)
        await until(lambda: app.phones_question()["waiting"] == ["Bob", "Cy", "Dee"])
        app.go("whist_bids")
        for who, n in (("Bob", 1), ("Cy", 0)):  # the passed tablet, tap by tap
            await tap_tag("whist:open-pad")
            assert app.screens["whist_bids"].bidder == who, app.screens["whist_bids"].bidder
            await tap_tag(f"whist:bid:{n}")
            await tap_tag("whist:confirm-bid")
        await until(lambda: dee.view["question"]["waiting"] == ["Dee"])
        r["w_waiting_before_last"] = dee.view["question"]["waiting"]
        r["w_phase_before_last"] = app.session.model.phase
        r["w_reveal_before_last"] = dee.view["reveal"]
        await shot("whist-phones.png")
        await dee.answer(q["id"], 3)
        await until(lambda: ann.view["reveal"] is not None)
        await until(lambda: app.sm.current == "whist_play")
        r["w_reveal"] = ann.view["reveal"]["answers"]
        r["w_events"] = app.session.model.round.events
        r["w_screen_after"] = app.sm.current
        r["w_phase_after"] = app.session.model.phase
        r["w_status"] = app.status_text
        await ann.close()
        await dee.close()

    async def bluff():
        app.new_session(PLAYERS, game="bluff-pirate", options={"seed": 1})
        srv = await phones_on()
        phones = {p: await PhoneClient(srv.url_for(p)).join() for p in ("Ann", "Bob", "Dee")}
        app.act(Intent("draw"))
        app.act(Intent("lay_set", (("hat",), ("map", "hat"))))
        await until(lambda: phones["Bob"].view is not None and phones["Bob"].view["question"] is not None)
        q = phones["Bob"].view["question"]
        r["b_asks"] = q["asks"]
        r["b_screen_votes"] = app.sm.current
        await phones["Bob"].answer(q["id"], 0)  # bluffing
        await until(lambda: app.phones_question()["waiting"] == ["Cy", "Dee"])
        await tap_tag("bp:vote:ready")  # Cy on the passed tablet
        await tap_tag("bp:vote:not")
        await until(lambda: phones["Dee"].view["question"]["waiting"] == ["Dee"])
        await phones["Dee"].answer(q["id"], 0)  # bluffing: the last vote
        await until(lambda: app.sm.current == "bp_pick")
        r["b_screen_pick"] = app.sm.current
        await until(lambda: phones["Ann"].view["question"] is not None and phones["Ann"].view["question"]["kind"] == "pick")
        qp = phones["Ann"].view["question"]
        r["b_pick_choices"] = qp["choices"]
        await phones["Ann"].answer(qp["id"], 1)  # Cy
        await until(lambda: phones["Bob"].view["reveal"] is not None)
        await until(lambda: app.sm.current == "bp_race")
        r["b_reveal"] = phones["Bob"].view["reveal"]["answers"]
        r["b_screen_after"] = app.sm.current
        lr = app.session.model.round.last_reveal
        r["b_last_reveal"] = [lr.voter, lr.vote]
        r["b_phase"] = phones["Bob"].view["phase"]
        seen = " ".join(p.frames[i] for p in phones.values() for i in range(len(p.frames))) + app.status_text
        r["b_unpicked_shown"] = "Bob voted" in seen or "Dee voted" in seen
        await shot("bluff-pirate-phones.png")
        for p in phones.values():
            await p.close()

    async def scenario():
        await until(lambda: app.root is not None and hasattr(app, "screens"))
        await whist()
        await bluff()
        (out / "result.json").write_text(json.dumps(r))
        Clock.schedule_once(lambda dt: app.stop(), 0)  # from inside Kivy's loop, as the app's own Quit does

    async def guarded():
        try:
            await scenario()
        except BaseException:
            Clock.schedule_once(lambda dt: app.stop(), 0)
            raise

    async def main():
        task = asyncio.get_running_loop().create_task(guarded())
        await app.async_run(async_lib="asyncio")
        if task.done() and task.exception():
            raise task.exception()
        if not task.done():
            task.cancel()
            raise SystemExit("the app stopped before the scenario finished")

    asyncio.run(main())


if __name__ == "__main__":
    _child(Path(sys.argv[1]))
