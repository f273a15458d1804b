"""The benchmark's fanned-hand figures (vision.bench._score_scene): a shown index is credited through a lone read on
it, and through the whole-card read that is its own card's, whose corner-region reads lie off the printed index."""

import numpy as np

from vision.bench import _empty, _score_scene
from vision.detect import CardRead, IndexRead
from vision.synth.scene import Scene, SceneCard


def _card(rank, letter, x0):
    quad = np.array([[x0, 100], [x0 + 100, 100], [x0 + 100, 250], [x0, 250]], np.float32)
    idx = [np.array([[x0 + 4, 104], [x0 + 16, 104], [x0 + 16, 130], [x0 + 4, 130]], np.float32),
           np.array([[x0 + 96, 246], [x0 + 84, 246], [x0 + 84, 220], [x0 + 96, 220]], np.float32)]
    return SceneCard(rank, letter, quad, idx)


def _whole(card, rank, letter, shift=0.0):
    q = card.quad + np.float32(shift)
    # the corner reader's views: corner regions, centred well off the printed index
    x, y = q[0]
    region = np.array([[x, y], [x + 42, y], [x + 42, y + 60], [x, y + 60]])
    rd = IndexRead(region, 0.9, rank, letter, 0.999, corner=0, source="corner")
    return CardRead("card", q, rank, letter, 0.999 if rank is not None else 0.5, [rd]), rd


def _score(cards, reads, scene_cards):
    st = _empty()
    _score_scene(st, Scene(np.zeros((400, 800, 3), np.uint8), scene_cards, "fan", "plaid", 0), cards, reads)
    return st


def test_a_card_read_whole_counts_for_its_shown_indices():
    a, b = _card(3, "B", 100), _card(5, "H", 400)
    ca, ra = _whole(a, 3, "B")
    st = _score([ca], [ra], [a, b])
    assert (st["fan_idx"], st["fan_exact_cards"], st["fan_wrong_cards"]) == (4, 2, 0)
    # the old figure counts only reads lying on the printed index: the corner region's centre is off it
    assert st["fan_exact"] == 0


def test_a_whole_card_read_naming_another_code_is_wrong_and_an_unread_one_is_neither():
    a = _card(3, "B", 100)
    st = _score([_whole(a, 4, "B")[0]], [], [a])
    assert (st["fan_exact_cards"], st["fan_wrong_cards"]) == (0, 2)
    st = _score([_whole(a, None, None)[0]], [], [a])
    assert (st["fan_exact_cards"], st["fan_wrong_cards"]) == (0, 0)


def test_a_whole_card_read_belongs_to_one_card_only():
    # two cards overlapping (a fan): the read names the one beneath, its outline covers both (IoU >= 0.5): it is the
    # card it names, and says nothing of the other's indices
    a, b = _card(3, "B", 100), _card(6, "D", 125)
    st = _score([_whole(b, 6, "D", shift=-12.0)[0]], [], [a, b])
    assert (st["fan_exact_cards"], st["fan_wrong_cards"]) == (2, 0)


def test_a_lone_read_on_the_index_counts_and_a_disagreeing_one_makes_it_wrong():
    a = _card(3, "B", 100)

    def reported(rd):  # as the scan reports a lone index
        return CardRead("index", rd.quad, rd.rank, rd.letter, rd.conf, [rd], unseen_card=True)

    lone = IndexRead(a.index_quads[0], 0.9, 3, "B", 0.99, source="corner_fan")
    st = _score([reported(lone)], [lone], [a])
    assert (st["fan_exact"], st["fan_exact_cards"], st["fan_wrong_cards"]) == (1, 1, 0)
    assert _score([], [lone], [a])["fan_exact"] == 0  # a lone read the scan let go is not counted
    bad = IndexRead(a.index_quads[0], 0.9, 3, "C", 0.99, source="corner_fan")
    st = _score([_whole(a, 3, "B")[0], reported(bad)], [bad], [a])
    assert (st["fan_exact_cards"], st["fan_wrong_cards"]) == (1, 1)
