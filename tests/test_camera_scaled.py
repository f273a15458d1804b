"""The scaled look (session 80): a lone corner index left unread (a hand held tight, a camera further away) is read
again from its box shrunk and grown about its centre (``SuitedScanner._scaled_look``, SCALED_LOOK); the view surest
to hold an upright index gives the reading only where it is surer of that than the first, the read keeps its box,
and reads named already are never touched."""

import json

import numpy as np

import vision.suited_reader as S
from scan_switches import linked_with_report
from font_lists import calibration_99


def _scaled(q: np.ndarray, g: float) -> np.ndarray:
    """The box ``q`` scaled ``g`` times about its centre, written out here so that the test does not lean on the
    helper the look uses (``vision.corner.scaled_about_centre``)."""
    c = q.mean(0)
    return ((q - c) * g + c).astype(np.float32)


def test_scaled_look_reads_indices_framed_too_loose_or_too_tight_and_never_a_less_sure_view():
    from companion.decks import get_deck
    from vision.synth.suited import make_deck_scene

    assert S.SCALED_LOOK and all(g > 0 for g in S.SCALED_LOOK)
    sc = S.SuitedScanner("standard52")
    d = get_deck("standard52")
    fixed = wrong = tried = changed = 0
    scenes = [make_deck_scene(5_100_000 + k, "standard52", "fan", fonts=calibration_99()) for k in range(3)]
    shown = [(s, c.card, np.asarray(q, np.float32)) for s in scenes for c in s.cards
             for q, vis in zip(c.index_quads, c.index_visible) if vis >= 0.95]
    # the detector's box too tight on the printed index, or too loose
    for s, card, box in [(s, card, _scaled(q, off)) for s, card, q in shown for off in (0.7, 1.45)]:
        p, pn = sc.reader.read(s.image, [S.index_view(box)])
        rd = sc._read("index", box, p[0] / p[0].sum())
        reads, none = [rd], [float(pn[0])]
        sc._scaled_look(s.image, reads, none)
        new = reads[0]
        tried += 1
        if new is rd:  # a named read is left as it was, and so is one no scaled view is surer of
            assert none[0] == float(pn[0])
            continue
        assert rd.code is None  # only unread indices are read again
        changed += 1
        assert np.array_equal(new.corners, box)  # the read keeps its box
        assert none[0] < float(pn[0])  # never a view less sure to hold an upright index
        assert abs(float(new.probs.sum()) - 1.0) < 1e-4
        if new.code is not None:
            fixed += d.notation(new.card()) == card
            wrong += d.notation(new.card()) != card
    assert tried >= 16 and changed >= 4 and fixed >= 2 and wrong == 0


def test_scaled_look_is_on_only_where_the_readers_report_says_so():
    for deck in S.DECKS:
        th = json.loads((S.MODELS / f"{deck}_reader.json").read_text())["thresholds"]
        assert S.SuitedScanner(deck).scaled_look is bool(th.get("scaled_look", False))


def test_scaled_look_for_a_taught_deck_only_where_the_report_says_so_apart(tmp_path):
    from vision.suited_reader import SuitedScanner

    class Profile:  # the scanner only keeps it; nothing is read in this test
        pass

    rep, rep_path = linked_with_report(tmp_path, "island54")
    for on, taught, expect_own, expect_taught in ((True, None, True, False), (True, True, True, True),
                                                  (False, True, False, False)):
        rep["thresholds"]["scaled_look"] = on
        rep["thresholds"].pop("taught_scaled_look", None)
        if taught is not None:
            rep["thresholds"]["taught_scaled_look"] = taught
        rep_path.write_text(json.dumps(rep))
        assert SuitedScanner("island54", tmp_path).scaled_look is expect_own
        assert SuitedScanner("island54", tmp_path, profile=Profile()).scaled_look is expect_taught


def test_scaled_look_with_agreement_or_its_own_bar_takes_only_what_the_plain_look_takes():
    """``scaled_look_same_card`` / ``scaled_look_same_rank`` (session 81): a scaled view is taken only where it names
    the card the first view leaned to, or that rank (summed over the suits); ``scaled_index``: only where it names a
    card at that bar. What any of them takes the plain look takes too."""
    from vision.synth.suited import make_deck_scene

    sc = S.SuitedScanner("standard52")
    ns = len(sc.codes.suits)
    scenes = [make_deck_scene(5_100_000 + k, "standard52", "fan", fonts=calibration_99()) for k in range(3)]
    boxes = [(s, _scaled(np.asarray(q, np.float32), off)) for s in scenes for c in s.cards
             for q, vis in zip(c.index_quads, c.index_visible) if vis >= 0.95 for off in (0.7, 1.45)]
    taken: dict = {}
    for mode in (None, "card", "rank", "bar"):
        sc.scaled_same_card, sc.scaled_same_rank = mode == "card", mode == "rank"
        sc.scaled_bar = 0.998 if mode == "bar" else None
        taken[mode] = set()
        for j, (s, box) in enumerate(boxes):
            p, pn = sc.reader.read(s.image, [S.index_view(box)])
            rd = sc._read("index", box, p[0] / p[0].sum())
            reads, none = [rd], [float(pn[0])]
            sc._scaled_look(s.image, reads, none)
            if reads[0] is rd:
                continue
            taken[mode].add(j)
            if mode == "card":
                assert int(reads[0].probs.argmax()) == int(rd.probs.argmax())
            if mode == "rank":
                assert int(reads[0].probs.reshape(-1, ns).sum(1).argmax()) == int(rd.probs.reshape(-1, ns).sum(1).argmax())
            if mode == "bar":
                assert reads[0].code is not None and reads[0].confidence >= 0.998
    assert taken["card"] <= taken[None] and taken["rank"] <= taken[None] and taken["bar"] <= taken[None]
    assert taken["card"] and len(taken[None]) >= 4


def test_scaled_look_agreement_and_bar_are_read_from_the_readers_report(tmp_path):
    import pytest

    rep, rep_path = linked_with_report(tmp_path, "standard52")
    for card, rank in ((True, False), (False, True), (False, False)):
        rep["thresholds"]["scaled_look_same_card"] = card
        rep["thresholds"]["scaled_look_same_rank"] = rank
        rep_path.write_text(json.dumps(rep))
        sc = S.SuitedScanner("standard52", tmp_path)
        assert (sc.scaled_same_card, sc.scaled_same_rank) == (card, rank)
    rep["thresholds"]["scaled_index"] = 0.998
    rep_path.write_text(json.dumps(rep))
    assert S.SuitedScanner("standard52", tmp_path).scaled_bar == 0.998
    for bad in (True, 1.5, "0.998"):  # a bar is a number from 0 to 1.01: anything else is refused, not used
        rep["thresholds"]["scaled_index"] = bad
        rep_path.write_text(json.dumps(rep))
        with pytest.raises(ValueError, match="scaled_index"):
            S.SuitedScanner("standard52", tmp_path)
    base = S.SuitedScanner("standard52")
    th = json.loads((S.MODELS / "standard52_reader.json").read_text())["thresholds"]
    assert base.scaled_same_card is bool(th.get("scaled_look_same_card", False))
    assert base.scaled_bar == th.get("scaled_index")


def test_scaled_look_grow_only_reads_each_unread_index_from_its_grown_box_alone(tmp_path):
    """``scaled_look_grow_only`` (session 82): the look reads an unread lone index from its grown box only (on used
    calibration seeds the shrunk view, which cuts into the index, made most of the look's mistakes). Read from the
    reader's report; the views the reader is handed are the grown boxes, one per unread index, and nothing else."""
    from vision.synth.suited import make_deck_scene

    rep, rep_path = linked_with_report(tmp_path, "standard52")
    rep["thresholds"]["scaled_look_grow_only"] = False
    rep_path.write_text(json.dumps(rep))
    assert S.SuitedScanner("standard52", tmp_path).scaled_views == S.SCALED_LOOK
    rep["thresholds"]["scaled_look_grow_only"] = True
    rep_path.write_text(json.dumps(rep))
    sc = S.SuitedScanner("standard52", tmp_path)
    grown = tuple(g for g in S.SCALED_LOOK if g > 1)
    assert grown and sc.scaled_views == grown and len(grown) < len(S.SCALED_LOOK)

    real_read, handed = sc.reader.read, []

    def recording_read(bgr, views):  # the real reader, its views written down
        handed.append([np.asarray(v, np.float32) for v in views])
        return real_read(bgr, views)

    sc.reader.read = recording_read
    scenes = [make_deck_scene(5_100_000 + k, "standard52", "fan", fonts=calibration_99()) for k in range(2)]
    unread = 0
    for s in scenes:
        for c in s.cards:
            for q, vis in zip(c.index_quads, c.index_visible):
                if vis < 0.95:
                    continue
                box = _scaled(np.asarray(q, np.float32), 1.45)  # framed too loose
                p, pn = real_read(s.image, [S.index_view(box)])
                rd = sc._read("index", box, p[0] / p[0].sum())
                reads, none = [rd], [float(pn[0])]
                handed.clear()
                sc._scaled_look(s.image, reads, none)
                if rd.code is not None:
                    assert not handed and reads[0] is rd  # a named read is not looked at again
                    continue
                unread += 1
                assert len(handed) == 1 and len(handed[0]) == len(grown)
                for view, g in zip(handed[0], grown):
                    assert np.allclose(view, S.index_view(_scaled(box, g)), atol=1e-3)
                if reads[0] is not rd:  # taken: it keeps its box, and its view was surer
                    assert np.array_equal(reads[0].corners, box) and none[0] < float(pn[0])
    assert unread >= 2
