"""The games: one package each (``companion/games/<id>/``), registered with the registry (registry.py), found by
scanning this folder. Pure referees: state, legal actions, apply, outcome, undo; no UI, hardware or vision
imports outside a game's ``ui/``. See docs/adding-a-game.md."""
