"""Bluffing Battles screens (Kivy): set-up, the fight screen, the history. One small class + one kv each."""
