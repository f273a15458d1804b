"""Pirate's Bluff's screens (Kivy): one small class + one kv file each, and the app intents of the game (intents.py)."""
