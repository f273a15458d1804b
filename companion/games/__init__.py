"""Pure game referees: state, legal actions, apply, outcome, undo. No UI, hardware or vision imports."""
