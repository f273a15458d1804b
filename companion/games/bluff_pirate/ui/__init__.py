"""Bluff Pirate's Kivy screens (one small class + one kv file each). Only this package imports Kivy."""
