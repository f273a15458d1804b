"""Drive the real app in-process with real touches (kivy.tests.common.UnitTestTouch) under Xvfb."""

from __future__ import annotations

import os
import time


def start_app(kivy_home, data_dir):
    """Create the app and its window once per process (Kivy has one window per process)."""
    os.environ["KIVY_HOME"] = str(kivy_home)
    os.environ["KIVY_NO_ARGS"] = "1"
    os.environ["KIVY_NO_CONSOLELOG"] = "1"
    os.environ["PIRATE_TABLE_DATA"] = str(data_dir)
    from companion.ui.main import configure_kivy

    configure_kivy()
    from kivy.base import EventLoop, runTouchApp

    from companion.ui.app import PirateTableApp

    app = PirateTableApp()
    app._run_prepare()
    runTouchApp(embedded=True)
    pump(3)
    return app


def pump(frames=1):
    from kivy.base import EventLoop

    for _ in range(frames):
        EventLoop.idle()


def wait_until(cond, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pump()
        if cond():
            return True
        time.sleep(0.01)
    return cond()


def screen(app):
    return app.sm.current_screen


def find(root, text=None, tag=None):
    from kivy.uix.button import Button

    hits = [w for w in root.walk(restrict=True) if isinstance(w, Button)
            and (text is None or w.text == text) and (tag is None or getattr(w, "tag", None) == tag)]
    assert hits, f"no button text={text!r} tag={tag!r} on screen {getattr(root, 'name', root)}"
    assert len(hits) == 1, f"{len(hits)} buttons text={text!r} tag={tag!r}"
    return hits[0]


def labels(root):
    from kivy.uix.label import Label
    from kivy.uix.button import Button

    return [w.text for w in root.walk(restrict=True) if isinstance(w, Label) and not isinstance(w, Button)]


def touch(widget):
    """A touch at the widget's centre in window coordinates, not yet pressed."""
    from kivy.tests.common import UnitTestTouch

    x, y = widget.to_window(*widget.center)
    assert widget.get_root_window() is not None, "widget is not on the window"
    return UnitTestTouch(x, y)


def tap(widget, frames=1):
    pump()  # a finger only finds a button that has been laid out and drawn
    assert not widget.disabled, f"{widget.text!r} is disabled"
    t = touch(widget)
    t.touch_down()
    t.touch_up()
    pump(frames)


def tap_text(app, text=None, tag=None, root=None):
    tap(find(root or screen(app), text=text, tag=tag))
