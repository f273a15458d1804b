"""Pirate Whist demo mode: a whole game (4 players, hands 3..1..3) played through the screens' own intents:
set-up with a cut for the deal, secret bids on the passed tablet, the reveal and the dealer's open bid (the hook
rule), trick-by-trick play with cards,
counts, the score sheet, an edited round and the Captain (``pirate-table app --demo --game pirate-whist``).
The GameSpec's demo hook; the simulated players' choices come from :mod:`.sim`."""

from __future__ import annotations

import random

from companion.games.pirate_whist import rules, sim

PLAYERS = ["Anne", "Calico", "Mary", "Ned"]
MAX_CARDS = 3


def steps(app, shot):
    rng = random.Random(2026)
    plan: dict = {}

    def model():
        return app.session.model

    def setup():
        scr = app.screens["whist_setup"]
        scr.setup(PLAYERS)
        scr.ids.max_cards.value = MAX_CARDS
        scr.cut_for_deal(random.Random(4))
        app.go("whist_setup")

    def start():
        scr = app.screens["whist_setup"]
        scr.ids.mode_tricks.state, scr.ids.mode_counts.state = "down", "normal"
        scr.ids.hook.state = "down"  # the dealer bids last, in the open
        scr.start()

    def decide(style):
        def f():
            plan["acts"] = list(sim.round_actions(model().round.state, rng, style))
            plan["bids"] = {a.player: a.bid for a in plan["acts"] if isinstance(a, rules.Bid)}
        return f

    def one_bid(pick_only=False):
        def f():
            scr = app.screens["whist_bids"]
            scr.open_pad()
            scr.pick(plan["bids"][scr.bidder])
            if not pick_only:
                scr.confirm()
        return f

    def confirm():
        app.screens["whist_bids"].confirm()

    def all_bids():
        while model().round.phase == "bid":
            one_bid()()

    def reveal():
        app.screens["whist_reveal"].reveal()

    def dealer_bid():
        r = model().round
        if r.phase == "dealer-bid":
            app.screens["whist_reveal"].dealer_bid(plan["bids"][r.now()["dealer"]])

    def cards(n=None):
        def f():
            scr = app.screens["whist_play"]
            plays = [a for a in plan["acts"] if isinstance(a, rules.PlayCard)]
            done = len([e for e in model().round.events if e["e"] == "play"])
            for a in plays[done: None if n is None else done + n]:
                scr.pick_rank(a.card.rank)
                scr.pick_suit(a.card.suit)
        return f

    def counts():
        scr = app.screens["whist_play"]
        scr.set_mode("counts")
        won = next(a for a in plan["acts"] if isinstance(a, rules.Counts)).won
        scr.counts = dict(won)
        scr.refresh()

    def counts_done():
        app.screens["whist_play"].done_counts()

    def next_round():
        app.next_hand()

    def the_rest():
        """The remaining rounds, one per step, alternating counts and trick by trick."""
        if app.session.game_over():
            return None
        if model().round is None or model().round_over():
            next_round()
            return True
        style = "cards" if model().round.now()["round"] % 2 else "counts"
        decide(style)()
        all_bids()
        reveal()
        dealer_bid()
        if style == "counts":
            counts()
            counts_done()
        else:
            app.screens["whist_play"].set_mode("tricks")
            cards()()
        return True

    def sheet():
        app.go("whist_sheet")

    def edit():
        app.screens["whist_sheet"].edit(1)

    def end():
        app.go("whist_end")

    def settle():  # a step between a change and its picture (the picture itself waits for the screen to settle)
        return None

    def snap(name):
        return [settle, shot(name)]

    return [
        setup, *snap("whist_setup"), start,
        decide("cards"), *snap("whist_bids"), one_bid(pick_only=True), *snap("whist_bids_pad"), confirm,
        all_bids, *snap("whist_reveal"), reveal, *snap("whist_reveal_dealer"), dealer_bid,
        cards(2), *snap("whist_play_tricks"), cards(), *snap("whist_round_over"), next_round,
        decide("counts"), all_bids, reveal, dealer_bid, counts, *snap("whist_play_counts"), counts_done,
        the_rest, sheet, *snap("whist_sheet"), edit, *snap("whist_edit"), end, *snap("whist_end"),
    ]



def step(app) -> None:
    """One step of a demo evening (GameSpec.demo_step), decided from ``app.session`` alone: the set-up and
    start, then one intent per step through the screens (a secret bid, the reveal, the dealer's open bid, a
    card or the counts), odd rounds trick by trick, even rounds by counts; the next round when one is over.
    Each round's plan comes from :mod:`.sim` seeded by the round's number and its start, so a resumed app plays
    the same plan on."""
    if app.session is None:
        scr = app.screens["whist_setup"]
        scr.setup(PLAYERS)
        scr.ids.max_cards.value = MAX_CARDS
        scr.cut_for_deal(random.Random(4))
        app.go("whist_setup")
        scr.ids.mode_tricks.state, scr.ids.mode_counts.state = "down", "normal"
        scr.ids.hook.state = "down"
        scr.start()
        return
    m = app.session.model
    if m.round is None or m.round_over():
        app.next_hand()
        return
    r = m.round
    k = r.now()["round"]
    style = "cards" if k % 2 else "counts"
    acts = list(sim.round_actions(m._table(app.session.history).state, random.Random(f"whist-{k}"), style))
    bids = {a.player: a.bid for a in acts if isinstance(a, rules.Bid)}
    phase = m.phase
    if phase == "bid":
        scr = app.screens["whist_bids"]
        scr.open_pad()
        scr.pick(bids[scr.bidder])
        scr.confirm()
    elif phase == "reveal":
        app.screens["whist_reveal"].reveal()
    elif phase == "dealer-bid":
        app.screens["whist_reveal"].dealer_bid(bids[r.now()["dealer"]])
    else:
        scr = app.screens["whist_play"]
        if style == "counts":
            scr.set_mode("counts")
            scr.counts = dict(next(a for a in acts if isinstance(a, rules.Counts)).won)
            scr.done_counts()
        else:
            if m.mode != "tricks":
                scr.set_mode("tricks")
            plays = [a for a in acts if isinstance(a, rules.PlayCard)]
            a = plays[len([e for e in r.events if e["e"] == "play"])]
            scr.pick_rank(a.card.rank)
            scr.pick_suit(a.card.suit)
