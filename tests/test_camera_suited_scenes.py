"""Synthetic scenes of the Island Deck and the standard deck: reproducible from a seed, labels match the picture."""

import json

import cv2
import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st

from companion.decks import get_deck
from vision.decks.faces import faces_for
from vision.synth.suited import PPM, make_deck_scene
from vision.synth.surfaces import HELD_OUT_SURFACES

DECKS = ("island54", "standard52")
# The generator keeps a layout when every card shows a corner index at least 90 % uncovered, measured on the cards'
# outlines drawn from their size in mm (vision.synth.suited._masks); the labels measure it again on the rendered
# faces' masks, which rasterise a little differently (found in CI: island54 hand, seed 2532, 0.896). So a label
# may sit just under 0.9; an index that is really covered is far under it. Session 84 looked for the lowest: of 3,619
# fan, trick and hand scenes of both decks (the first 531-656 seeds of each) and 9,098 more run through these tests,
# 0.8790 (standard52 hand, seed 243) and 0.8796 (island54 hand, seed 391) were the only two under 0.88.
SHOWN = 0.85


@pytest.mark.parametrize("deck", DECKS)
@pytest.mark.parametrize("layout", ["start", "fan", "trick", "mixed", "hand"])
def test_same_seed_same_scene_and_labels(deck, layout):
    a = make_deck_scene(321, deck, layout)
    b = make_deck_scene(321, deck, layout)
    assert np.array_equal(a.image, b.image)
    assert json.dumps(a.labels()) == json.dumps(b.labels())
    assert a.labels()["deck"] == deck and a.labels()["layout"] == layout
    c = make_deck_scene(322, deck, layout)
    assert not np.array_equal(a.image, c.image)


def _ncc(a, b):
    a = a.astype(np.float32).ravel()
    b = b.astype(np.float32).ravel()
    a, b = a - a.mean(), b - b.mean()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-6))


def _region(im, quads):
    parts = []
    for q in quads:
        x0, y0 = np.maximum(np.floor(q.min(0)).astype(int), 0)
        x1, y1 = np.ceil(q.max(0)).astype(int)
        parts.append(im[y0:y1, x0:x1].ravel())
    return np.concatenate(parts)


@pytest.mark.parametrize("deck", DECKS)
@pytest.mark.parametrize("seed", [k * 7919 for k in range(5)])
def test_start_labels_match_the_picture(seed, deck):
    """Each labelled card, cut out of the picture by its label's corners, shows the labelled card's indices:
    they match its face better than the face of any card of the same rank or the same suit."""
    sc = make_deck_scene(seed, deck, "start", HELD_OUT_SURFACES)
    d = get_deck(deck)
    faces = faces_for(d)
    h, w = sc.image.shape[:2]
    assert 3 <= len(sc.cards) <= 8
    assert len({c.card for c in sc.cards}) == len(sc.cards)
    for c in sc.cards:
        card = d.parse(c.card)
        assert d.notation(card) == c.card
        assert c.card_visible > 0.99 and min(c.index_visible) > 0.99
        assert (c.quad >= 0).all() and (c.quad[:, 0] <= w).all() and (c.quad[:, 1] <= h).all()
        for q in c.index_quads:
            ctr = q.mean(0)
            assert cv2.pointPolygonTest(c.quad.reshape(-1, 1, 2), (float(ctr[0]), float(ctr[1])), False) > 0
        face, iq = faces.render(card, c.style, PPM)
        fh, fw = face.shape[:2]
        M = cv2.getPerspectiveTransform(c.quad.astype(np.float32), np.float32([[0, 0], [fw, 0], [fw, fh], [0, fh]]))
        cut = cv2.GaussianBlur(cv2.warpPerspective(sc.image, M, (fw, fh)), (0, 0), 0.7)
        blur = lambda im: cv2.GaussianBlur(im, (0, 0), 0.7)  # noqa: E731
        grey = lambda im: cv2.GaussianBlur(cv2.cvtColor(im, cv2.COLOR_BGR2GRAY), (0, 0), 2.0)  # noqa: E731
        assert _ncc(grey(cut), grey(face)) > 0.4, c.card  # the whole face, roughly (light, blur, noise)
        own = _ncc(_region(cut, iq), _region(blur(face), iq))
        for o in d.cards:
            if o != card and (o.rank == card.rank or o.suit == card.suit):
                other = _ncc(_region(cut, iq), _region(blur(faces.render(o, c.style, PPM)[0]), iq))
                assert own > other, (c.card, d.notation(o), own, other)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), deck=st.sampled_from(DECKS), layout=st.sampled_from(["fan", "trick"]))
@example(seed=577, deck="island54", layout="trick")  # two cards thrown in that barely overlap: 0.912 of the lower shows
def test_overlaps_hide_the_lower_cards_but_a_corner_index_shows(seed, deck, layout):
    sc = make_deck_scene(seed, deck, layout)
    assert len(sc.cards) >= 2
    assert len({c.card for c in sc.cards}) == len(sc.cards)
    assert sc.cards[-1].card_visible > 0.99  # the top card is whole
    # the others overlap: a trick of two cards thrown in from opposite seats may only just (session 84: of 3,339
    # island54 tricks, 10 had no card under 0.9 shown, the least covered 0.912)
    assert any(c.card_visible < 0.95 for c in sc.cards)
    gray = cv2.cvtColor(sc.image, cv2.COLOR_BGR2GRAY)
    for c in sc.cards:
        assert max(c.index_visible) >= SHOWN, (c.card, c.index_visible)  # only a corner index may show
        for q, v in zip(c.index_quads, c.index_visible):
            if v > 0.95:  # ink where a visible index is
                x0, y0 = np.maximum(np.floor(q.min(0)).astype(int), 0)
                x1, y1 = np.ceil(q.max(0)).astype(int)
                patch = gray[y0:y1, x0:x1]
                assert patch.size and patch.min() < np.percentile(patch, 90) - 20


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), deck=st.sampled_from(DECKS))
@example(seed=2532, deck="island54")  # found in CI: a lower card's index label at 0.896 (SHOWN)
@example(seed=46612, deck="standard52")  # found in CI: a hand with two "10"s; its 6 lies 3.05 of its own index widths on
@example(seed=884, deck="standard52")  # found in CI (session 84): big "10" indices on narrow cards, 0.478 of each shows
@example(seed=1633, deck="standard52")  # the most that shows of 13,500 standard52 hands (seeds 0-13,499): 0.523
@example(seed=243, deck="standard52")  # a lower card's index label at 0.8790 (SHOWN)
@example(seed=391, deck="island54")  # a lower card's index label at 0.8796 (SHOWN)
def test_a_hand_held_tight_shows_each_card_by_its_index_beside_its_neighbours(seed, deck):
    sc = make_deck_scene(seed, deck, "hand")
    assert sc.layout == "hand" and 3 <= len(sc.cards) <= 13
    assert len({c.card for c in sc.cards}) == len(sc.cards)
    assert sc.cards[-1].card_visible > 0.99  # the top card is whole
    # the strip each card shows is set by the hand's widest index ("10" beside an "A"), so "close" is measured by it
    width = max(float(np.linalg.norm(c.index_quads[0][1] - c.index_quads[0][0])) for c in sc.cards)
    for lower, upper in zip(sc.cards, sc.cards[1:]):
        # a strip of it shows: the strip is the hand's widest corner index and its margin, 1.02-1.3 times over
        # (vision.synth.suited), so a hand of big "10"s on narrow cards shows about half of each card: of 13,500
        # standard52 hands the most was 0.523 (74 hands over 0.45), of 2,500 island54 hands 0.459
        assert lower.card_visible < 0.55
        assert max(lower.index_visible) >= SHOWN, (lower.card, lower.index_visible)  # its corner index does
        a, b = lower.index_quads[0], upper.index_quads[0]
        assert float(np.linalg.norm(a.mean(0) - b.mean(0))) < 3 * width  # the next index lies close beside it


def test_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="unknown layout 'heap'"):
        make_deck_scene(1, "standard52", "heap")


def test_write_scenes_writes_images_and_labels_that_match(tmp_path):
    from vision.synth.suited import write_scenes

    labels = write_scenes(tmp_path, "island", 4, seed=77)
    assert json.loads((tmp_path / "labels.json").read_text()) == labels
    assert sorted(p.name for p in tmp_path.glob("*.jpg")) == sorted(labels)
    for name, lab in labels.items():
        img = cv2.imread(str(tmp_path / name))
        assert img.shape == (720, 1280, 3)
        again = make_deck_scene(lab["seed"], "island54", lab["layout"])
        assert again.labels() == lab  # the labels are the scene's, a function of its seed
        assert float(np.abs(img.astype(np.float32) - again.image.astype(np.float32)).mean()) < 3  # JPEG only
    assert [lab["layout"] for lab in labels.values()] == ["start", "fan", "trick", "mixed"]


def test_a_card_read_in_a_hand_belongs_to_the_card_it_names_among_those_it_covers():
    """In a hand held tight the top card's outline and the next card's overlap most of the way: a whole-card read
    whose outline sits between them counts for the card it names if its outline covers that card (IoU >= 0.5),
    and against the card it covers best when it names a card it does not cover."""
    from vision.suited_reader import SuitedRead, _iou, deck_codes, match_reads, score_rows

    sc = make_deck_scene(5, "standard52", "hand")
    top, below = sc.cards[-1], sc.cards[-2]
    between = (0.45 * top.quad + 0.55 * below.quad).astype(np.float32)  # nearer the card below
    assert _iou(between, below.quad) > _iou(between, top.quad) >= 0.5
    codes = deck_codes("standard52")
    d = get_deck("standard52")

    def read(card):
        k = codes.code(d.parse(card))
        p = np.zeros(codes.n, np.float32)
        p[k] = 1.0
        return SuitedRead("card", between, p, 1.0, k, codes)

    rows = {r["card"]: r for r in match_reads(sc, [read(top.card)])}
    assert [x[0] for x in rows[top.card]["reads"]] == [top.card] and rows[below.card]["reads"] == []
    other = next(c for c in d.cards if d.notation(c) not in {x.card for x in sc.cards})
    rows = match_reads(sc, [read(d.notation(other))])
    assert score_rows(rows)["wrong_confident"] == 1
    assert {r["card"]: r for r in rows}[below.card]["reads"][0][0] == d.notation(other)
