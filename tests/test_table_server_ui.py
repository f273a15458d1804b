"""The real app with phones, under Xvfb: the app runs through App.async_run with the phone server on the same
asyncio loop. A Powderkeg session; the Phones screen shows a QR code per seat; scripted phones join by those
codes; the dealer deals on the tablet; three players call in secret (two by phone, one on the passed tablet's
LIVE/DIE/FOLD buttons, into the same SecretRound); nothing reaches the referee until the last call; a seat reset
from its button refuses the old code; phones off stops the listening.

The app runs in a child process (one Kivy window per process): ``python tests/test_table_server_ui.py OUT``.
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
PLAYERS = ["Ann", "Bob", "Cy", "Dee"]  # Ann deals; Bob, Cy and Dee call


def test_app_phones_screen_and_secret_calls_through_the_running_app(tmp_path):
    if not os.environ.get("DISPLAY"):
        pytest.fail("needs a display: run under xvfb-run (make test does)")
    out = tmp_path / "out"
    env = dict(os.environ, KIVY_HOME=str(tmp_path / "kivy"), PIRATE_TABLE_DATA=str(tmp_path / "data"),
               KIVY_NO_ARGS="1", KIVY_NO_CONSOLELOG="1", PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, str(Path(__file__).resolve()), str(out)], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    r = json.loads((out / "result.json").read_text())
    assert r["listening_before"] is False and r["running"] is True
    assert r["qr_urls"] == r["urls"] and all(u.startswith("http://127.0.0.1:") for u in r["urls"])
    assert r["presence_after_join"] == {"Ann": "no phone yet", "Bob": "phone here", "Cy": "no phone yet",
                                        "Dee": "phone here"}
    assert r["asks"] == ["Bob", "Cy", "Dee"]
    assert r["moves_before_last"] == r["moves_at_question"]  # nothing reached the referee before the reveal
    assert r["tablet_note"].startswith("Secret calls on card 3: waiting for Cy")
    assert r["last_moves"] == ["Bob calls die", "Cy calls live", "Dee calls fold"]
    assert r["saved_last_moves"] == [{"call": ["Bob", "die"]}, {"call": ["Cy", "live"]}, {"call": ["Dee", "fold"]}]
    assert r["bob_reveal"] == [["Bob", "die"], ["Cy", "live"], ["Dee", "fold"]]
    assert r["dee_closed"] == 4003 and r["old_dee_status"] == 403 and r["new_dee_joined"] is True
    assert r["stopped_listening"] is True
    for name in ("phones-qr.png", "powderkeg-phones.png"):
        assert (out / name).stat().st_size > 10_000
    shots = os.environ.get("PIRATE_TABLE_SHOTS")
    if shots:
        for name in ("phones-qr.png", "powderkeg-phones.png"):
            shutil.copy(out / name, Path(shots) / name)


# ------------------------------------------------------------------ the child: the real app on asyncio
def _child(out: Path) -> None:  # pragma: no cover - runs in the child process
    import asyncio
    import http.client

    from companion.ui.main import configure_kivy

    configure_kivy()
    from kivy.clock import Clock
    from kivy.core.window import Window
    from kivy.tests.common import UnitTestTouch

    from companion.games.powderkeg import Dock, Reveal
    from companion.table_server.client import PhoneClient, split_url
    from companion.ui import services
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

    async def shot(name):
        await asyncio.sleep(0.4)
        fn = Window.screenshot(name=str(out / name))
        os.replace(fn, out / name)

    def status_of(port, tid, token):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        c.request("GET", f"/t/{tid}/view", headers={"Authorization": f"Bearer {token}"})
        st = c.getresponse().status
        c.close()
        return st

    async def scenario():
        await until(lambda: app.root is not None and hasattr(app, "screens"))
        app.phones.host = "127.0.0.1"  # tests talk to 127.0.0.1 only (the app binds the LAN address)
        app.new_session(PLAYERS, buy_in=50, game="powderkeg")
        r["listening_before"] = app.phones.running
        app.go("phones")
        await asyncio.sleep(0.3)  # laid out
        tap(button("phones:toggle"))
        await until(lambda: app.phones.running)
        srv = app.phones.server
        scr = app.screens["phones"]
        await until(lambda: scr._built_for is not None)
        r["running"] = True
        r["urls"] = [srv.url_for(p) for p in PLAYERS]
        r["qr_urls"] = list(scr._built_for[1])
        bob = await PhoneClient(srv.url_for("Bob")).join()
        dee = await PhoneClient(srv.url_for("Dee")).join()
        await until(lambda: scr._status["Dee"].text == "phone here" and scr._status["Bob"].text == "phone here")
        r["presence_after_join"] = {p: scr._status[p].text for p in PLAYERS}
        await shot("phones-qr.png")
        # the dealer deals on the tablet
        h = app.session.hand
        app.act(next(a for a in h.legal_actions() if isinstance(a, Dock)))
        while app.session.hand.phase == "opening":
            app.act(next(a for a in app.session.hand.legal_actions() if isinstance(a, Reveal)))
        await until(lambda: bob.view is not None and bob.view["question"] is not None)
        q = bob.view["question"]
        r["asks"] = q["asks"]
        r["moves_at_question"] = len(app.session.hand.moves)
        await bob.answer(q["id"], 1)  # die
        await dee.answer(q["id"], 2)  # fold
        await until(lambda: app.phones_question() is not None and app.phones_question()["waiting"] == ["Cy"])
        app.go("powderkeg")
        await asyncio.sleep(0.3)
        r["tablet_note"] = app.screens["powderkeg"].ids.note.text
        r["moves_before_last"] = len(app.session.hand.moves)
        await shot("powderkeg-phones.png")
        tap(app.screens["powderkeg"].ids.live)  # Cy has no phone: the passed tablet answers for Cy
        await until(lambda: bob.view["reveal"] is not None)
        r["bob_reveal"] = bob.view["reveal"]["answers"]
        r["last_moves"] = [str(a) for a in app.session.hand.moves[-3:]]
        saved = json.loads(services.session_path().read_text())
        r["saved_last_moves"] = _find_moves(saved)[-3:]
        # reset Dee's seat from its button: the phone is closed, the old code refused, the new one works
        app.go("phones")
        await asyncio.sleep(0.3)
        old_token = split_url(srv.url_for("Dee"))[2]
        tap(button("phones:reset:Dee"))
        await until(lambda: dee.closed_code is not None)
        r["dee_closed"] = dee.closed_code
        r["old_dee_status"] = await asyncio.to_thread(status_of, srv.port, srv.table_id, old_token)
        dee2 = await PhoneClient(srv.url_for("Dee")).join()
        await until(lambda: dee2.view is not None)
        r["new_dee_joined"] = dee2.view["seat"] == "Dee"
        port = srv.port
        await bob.close()
        await dee2.close()
        tap(button("phones:toggle"))
        await until(lambda: not srv.running)
        r["stopped_listening"] = await asyncio.to_thread(_closed, port)
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


def _find_moves(saved: dict) -> list:
    """The moves of the round in play in a saved session file (wherever the session keeps them)."""
    stack = [saved]
    while stack:
        d = stack.pop()
        if isinstance(d, dict):
            if "moves" in d and isinstance(d["moves"], list):
                return d["moves"]
            stack.extend(d.values())
        elif isinstance(d, list):
            stack.extend(d)
    return []


def _closed(port: int) -> bool:
    import socket

    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex(("127.0.0.1", port)) != 0


if __name__ == "__main__":
    _child(Path(sys.argv[1]))
