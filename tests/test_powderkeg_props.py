"""Property tests: random rounds never create or destroy a coin, undo is exact, illegal actions change
nothing, and rulings agree with a brute-force reading of the rules (dead-hand rule by all pairs of cards,
winners and money by a direct, separate simulation)."""

import random
from itertools import combinations

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from companion.errors import IllegalActionError
from companion.games.powderkeg import POT, Call, Dock, Options, PowderkegRound, Reveal
from companion.games.powderkeg.record import rule_record
from companion.decks.island54 import island_deck


def brute_dead(cards):
    """Dead iff some pair of cards is one number card and one face card of the same suit."""
    return any(a.suit == b.suit and a.is_face != b.is_face for a, b in combinations(cards, 2))


def reference(players, dealer, stacks, carry, opts, hand, choices):
    """A direct reading of the rulebook, written separately from the referee. Returns (stacks, pot)."""
    o = opts
    d = players.index(dealer)
    order = players[d + 1:] + players[:d]
    st_ = dict(stacks)
    paid = {p: 0 for p in players}

    def pay(p, n):
        st_[p] -= n
        paid[p] += n

    for p in players:
        pay(p, o.dealer_ante if p == dealer else o.ante)
    pot = carry + sum(paid.values())
    legal = all(hand[i].order <= hand[i + 1].order for i in range(len(hand) - 1))
    if not legal:
        for p in players:
            st_[p] += paid[p]
        if o.misdeal == "dealer_pays":
            for p in order:
                st_[p] += o.misdeal_fine
                st_[dealer] -= o.misdeal_fine
        return st_, carry
    if brute_dead(hand[:o.opening]):
        st_[dealer] += pot
        for p in order:
            st_[p] -= o.dock_penalty
            st_[dealer] += o.dock_penalty
        return st_, 0
    alive = list(order)
    winners = []
    for k in range(o.opening, o.hand_size):
        calls = {p: choices[k][p] for p in alive}
        for p, c in calls.items():
            if c != "fold":
                pay(p, o.bet)
                pot += o.bet
        if all(c == "fold" for c in calls.values()):
            break
        dead = brute_dead(hand[:k + 1])
        right = [p for p in alive if calls[p] == ("die" if dead else "live")]
        if dead or k == o.hand_size - 1:
            winners = right
            break
        alive = right
        if not alive:
            break
    if winners:
        share = pot // len(winners)
        for p in winners:
            st_[p] += share
        pot -= share * len(winners)
    else:
        st_[dealer] += pot
        pot = 0
    return st_, pot


@st.composite
def rounds(draw):
    n = draw(st.integers(2, 8), label="players")
    players = [f"P{i}" for i in range(n)]
    dealer = draw(st.sampled_from(players), label="dealer")
    stacks = {p: draw(st.integers(0, 60)) for p in players}
    carry = draw(st.integers(0, 5), label="carry")
    hand_size = draw(st.sampled_from([7, 7, 7, 6, 8]), label="hand_size")
    opts = Options(
        dealer_ante=draw(st.integers(0, 6)), ante=draw(st.integers(0, 2)), bet=draw(st.integers(0, 2)),
        dock_penalty=draw(st.integers(0, 6)), misdeal=draw(st.sampled_from(["void", "dealer_pays"])),
        misdeal_fine=draw(st.integers(0, 4)), hand_size=hand_size,
        opening=draw(st.sampled_from([2, 2, 1, 3])),
    )
    rng = random.Random(draw(st.integers(0, 2**32 - 1), label="seed"))
    cards = list(island_deck())
    rng.shuffle(cards)
    shape = draw(st.sampled_from(["random", "random", "random", "dock_death"]), label="shape")
    if shape == "dock_death" and opts.opening >= 2:
        # the opening cards kill the hand: number cards, then a Queen of the first one's suit, then faces
        numbers = sorted([c for c in cards if c.is_number][:opts.opening - 1], key=lambda c: c.order)
        queen = next(c for c in cards if c.rank == "Q" and c.suit == numbers[0].suit)
        faces = [c for c in cards if c.is_face and c != queen][:hand_size - opts.opening]
        hand = numbers + [queen] + sorted(faces, key=lambda c: c.order)
        dock = next(c for c in cards if c not in hand)
    else:
        dock, hand = cards[0], cards[1:hand_size + 1]
        if draw(st.integers(0, 9), label="set") < 8:  # mostly legal sets, random order among equal ranks
            hand.sort(key=lambda c: c.order)
    # each player calls right with some skill, sometimes folds
    skill = draw(st.sampled_from([0.5, 0.8, 0.95]), label="skill")
    fold = draw(st.sampled_from([0.0, 0.05, 0.3]), label="fold")
    choices = []
    for k in range(hand_size):
        truth = "die" if brute_dead(hand[:k + 1]) else "live"
        wrong = "live" if truth == "die" else "die"
        choices.append({p: "fold" if rng.random() < fold else (truth if rng.random() < skill else wrong)
                        for p in players})
    return players, dealer, stacks, carry, opts, dock, hand, choices


def total(r):
    return sum(r.stacks.values()) + r.pot


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounds(), st.randoms(use_true_random=False))
def test_random_rounds_conserve_coins_undo_exact_and_match_the_reference(rnd, rng):
    players, dealer, stacks, carry, opts, dock, hand, choices = rnd
    r = PowderkegRound(players, dealer, stacks, carry, opts)
    coins = sum(stacks.values()) + carry
    assert total(r) == coins

    def step(action):
        before = (r.snapshot(), r.stacks, r.pot)
        # an illegal probe first: it must raise and change nothing
        probe = rng.choice([Call(rng.choice(players), rng.choice(["live", "die", "fold", "maybe"])),
                            Reveal(dock), Reveal(rng.choice(hand)), Dock(rng.choice(hand))])
        if not r.is_legal(probe):
            try:
                r.apply(probe)
                raise AssertionError(f"{probe} should be illegal")
            except IllegalActionError as exc:
                assert str(exc)
            assert (r.snapshot(), r.stacks, r.pot) == before
        assert action in r.legal_actions()
        r.apply(action)
        assert total(r) == coins
        for e in r.entries:
            assert sum(v for _, v in e.postings) == 0
        r.undo()
        assert (r.snapshot(), r.stacks, r.pot) == before
        r.apply(action)

    step(Dock(dock))
    while r.phase != "over":
        if r.phase == "calling":
            p = r.next_to_call
            step(Call(p, choices[len(r.revealed)][p]))
        else:
            step(Reveal(hand[len(r.revealed)]))
    o = r.outcome
    event(f"end={o.end} misdeal={o.misdeal} winners={bool(o.winners)}")
    assert total(r) == coins and r.pot >= 0
    # dead-hand rule against all pairs
    brute_at = next((k for k in range(1, len(hand) + 1) if brute_dead(hand[:k])), None)
    assert o.dead_at == brute_at
    assert o.dock_death == brute_dead(hand[:opts.opening]) or (o.end == "misdeal")
    assert o.set_legal == all(a.order <= b.order for a, b in zip(hand, hand[1:]))
    if o.end == "dead":
        assert o.ended_at == brute_at
    if o.end == "lived":
        assert brute_at is None
        assert o.ended_at == opts.hand_size
    # winners called every card right (a brute check of "right all the way")
    for p in o.winners:
        for cr in r.rounds:
            assert dict(cr.calls)[p] == ("die" if brute_dead(hand[:cr.position]) else "live")
    if o.winners:
        assert r.pot < len(o.winners)
    # money: the separate reference simulation
    ref_stacks, ref_pot = reference(players, dealer, stacks, carry, opts, hand, choices)
    assert (r.stacks, r.pot) == (ref_stacks, ref_pot)
    # everyone's money moves only through entries
    moved = {p: 0 for p in players}
    for e in r.entries:
        for acct, v in e.postings:
            if acct != POT:
                moved[acct] += v
    assert {p: stacks[p] + moved[p] for p in players} == r.stacks


@settings(max_examples=60, deadline=None)
@given(rounds())
def test_record_rulings_match_the_state_machine(rnd):
    players, dealer, stacks, carry, opts, dock, hand, choices = rnd
    r = PowderkegRound(players, dealer, stacks, carry, opts)
    r.apply(Dock(dock))
    calls = []
    while r.phase != "over":
        if r.phase == "calling":
            k = len(r.revealed)
            calls.append({p: choices[k][p] for p in reversed(r.in_players)})
            for p in r.in_players:
                r.apply(Call(p, choices[k][p]))
        else:
            r.apply(Reveal(hand[len(r.revealed)]))
    rec = {"game": "powderkeg", "players": players, "dealer": dealer, "stacks": stacks, "pot_carry": carry,
           "options": opts.as_dict(), "dock": str(dock), "hand": [str(c) for c in hand], "calls": calls}
    ruling = rule_record(rec)
    assert ruling["stacks"] == r.stacks and ruling["pot_carry"] == r.pot and ruling["rejected"] == []
    assert ruling["winners"] == list(r.outcome.winners)
    assert ruling["dead_at_position"] == r.outcome.dead_at
