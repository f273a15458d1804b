"""Powderkeg's screens (Kivy): one small class + one kv file each."""
