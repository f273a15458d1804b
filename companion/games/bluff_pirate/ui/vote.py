"""Secret votes on the passed tablet: for each other player in turn, a blank "pass the tablet to X" screen, then
X's two buttons; the vote goes into X's SecretRound and the screen blanks again. No vote is ever shown here.
Layout in vote.kv."""

from __future__ import annotations

from kivy.app import App
from kivy.uix.screenmanager import Screen

from companion.games.bluff_pirate.model import Intent
from companion.games.bluff_pirate.rules import BLUFFING, NOT_BLUFFING
from companion.games.bluff_pirate.ui.race import race_of


def _app():
    return App.get_running_app()


class BluffPirateVoteScreen(Screen):
    voting = None       # the player holding the tablet, once they said so

    def refresh(self):
        t = race_of(_app())
        voter = t.next_voter() if t is not None else None
        if voter is None:
            self.voting = None
            self.ids.title.text = "No vote now."
            self.ids.claim.text = ""
            self._show(False)
            self.ids.ready.disabled = True
            self.ids.ready.opacity = 0
            return
        v = t.public_view()["set"]
        self.ids.claim.text = (f"{v['setter']} laid {v['size']} cards: {len(v['visible'])} {v['visible'][0]} face up,"
                               f" {v['hidden_count']} face down.  Still to vote: {', '.join(v['waiting'])}")
        if self.voting != voter:
            self.voting = None
        if self.voting is None:
            self.ids.title.text = f"Pass the tablet to {voter}"
            self.ids.ready.text = f"I am {voter}: vote in secret"
            self.ids.ready.disabled = False
            self._show(False)
        else:
            self.ids.title.text = f"{voter}: is {v['setter']} bluffing?"
            self._show(True)

    def _show(self, voting):
        self.ids.ready.opacity = 0 if voting else 1
        self.ids.ready.disabled = voting
        for b in (self.ids.bluff, self.ids.honest):
            b.opacity = 1 if voting else 0
            b.disabled = not voting

    def ready(self):
        t = race_of(_app())
        if t is not None:
            self.voting = t.next_voter()
        self.refresh()

    def vote(self, bluffing):
        if self.voting is None:
            return
        seat, self.voting = self.voting, None
        self._show(False)                      # blank at once, whatever happens next
        _app().act(Intent("vote", (seat, BLUFFING if bluffing else NOT_BLUFFING)))
        self.refresh()

    def before_undo(self):
        self.voting = None
