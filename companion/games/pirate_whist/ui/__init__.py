"""Pirate Whist's Kivy screens: one small class + one kv file per screen (the app loads the kv beside each
module). Screens read the session and send intents (``app.act``, ``app.undo``, ``app.next_hand``); the rules
and the table model decide everything."""
