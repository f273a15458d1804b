"""Settings: the app's settings panel (Kivy settings, companion/ui/app.py SETTINGS). Layout in settings.kv beside
this module."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen



def _app():
    return App.get_running_app()


class SettingsScreen(Screen):
    pass
