"""The familiar frame (``SuitedScanner._familiar``, session 94): a frame where most reads are sure shows a face the
reader knows, and its reads still unsure of their card are named at lower bars (the report's ``familiar_share`` with
``familiar_card`` / ``familiar_index`` and their ``far_`` forms)."""

import numpy as np
import pytest
from scan_switches import linked_with_report, write_report

from companion.decks import get_deck
from vision.suited_reader import FAMILIAR_SURE, SuitedRead, SuitedScanner


def _box(x, y, w=42, h=56):
    return np.array([[x, y], [x + w, y], [x + w, y + h], [x, y + h]], np.float32)


def _post(codes, **ps):
    deck = get_deck(codes.deck_id)
    code = {deck.notation(c): k for k, c in enumerate(codes.cards)}
    p = np.full(codes.n, 1e-7)
    for k, v in ps.items():
        p[code[k]] = v
    return p / p.sum()


def _read(codes, kind, x, p, named):
    k = int(p.argmax())
    return SuitedRead(kind, _box(x, 20), p, float(p[k]), k if named else None, codes)


def test_a_familiar_frame_names_its_unsure_reads_at_the_lower_bar_and_a_strange_one_does_not():
    sc = SuitedScanner("standard52", threads=1)
    sc.familiar = (0.6, {"familiar_index": 0.97})
    codes = sc.codes
    sure = [_read(codes, "index", 20 + 60 * i, _post(codes, **{c: 1.0}), True) for i, c in enumerate(("7S", "5H", "KD"))]
    at_98 = _read(codes, "index", 200, _post(codes, **{"9C": 0.98, "9S": 0.02}), False)
    at_96 = _read(codes, "index", 260, _post(codes, **{"4C": 0.96, "4S": 0.04}), False)
    assert at_98.confidence < sc.index_min and at_96.confidence < sc.index_min
    out = sc._familiar(sure + [at_98, at_96])  # 3 of 5 reads sure: 0.6
    assert out[:3] == sure and out[4] is at_96
    assert out[3].code == int(at_98.probs.argmax()) and out[3].confidence == at_98.confidence
    # under the share (3 of 6 sure) nothing changes
    other = _read(codes, "index", 320, _post(codes, **{"2C": 0.5, "2S": 0.5}), False)
    assert sc._familiar(sure + [at_98, at_96, other]) == sure + [at_98, at_96, other]
    # a card read already in the frame is not named twice; a whole card left in conflict (its posterior not
    # normalised) stays unreadable
    twice = _read(codes, "index", 200, _post(codes, **{"7S": 0.98, "7C": 0.02}), False)
    conflicted = _read(codes, "card", 200, _post(codes, **{"9C": 0.98, "9S": 0.02}) * 0.6, False)
    out = sc._familiar(sure + [twice, conflicted])
    assert out[3] is twice and out[4] is conflicted
    # a kind with no familiar bar keeps its own: a whole card at 0.98 stays unsure (the card bar is 0.99)
    card = _read(codes, "card", 200, _post(codes, **{"9C": 0.98, "9S": 0.02}), False)
    assert sc.card_min > 0.98 and sc._familiar(sure + [card]) == sure + [card]
    sc.familiar = (0.6, {"familiar_index": 0.97, "familiar_card": 0.97})
    assert sc._familiar(sure + [card])[3].code == int(card.probs.argmax())
    # the familiar bar is never a higher one: a kind whose own bar is under it is left to its own bar (a read over both
    # bars but left unnamed by an earlier step stays so)
    sc.familiar = (0.6, {"familiar_index": 0.999})
    withheld = _read(codes, "index", 200, _post(codes, **{"9C": 0.9995, "9S": 0.0005}), False)
    assert withheld.confidence > 0.999 > sc.index_min
    assert sc._familiar(sure + [withheld]) == sure + [withheld]
    # a far frame takes the far familiar bars only (none here: its reads stay as they are)
    sc.familiar = (0.6, {"familiar_index": 0.97})
    sc._far = True
    try:
        assert sc._familiar(sure + [at_98]) == sure + [at_98]
        sc.familiar = (0.6, {"far_familiar_index": 0.97})
        assert sc._familiar(sure + [at_98])[3].code == int(at_98.probs.argmax())
    finally:
        sc._far = False
    assert sc._familiar(sure + [at_98]) == sure + [at_98]  # ... and a near frame the near ones
    assert sc._familiar([]) == []
    assert FAMILIAR_SURE == 0.99


def _models_with(tmp_path, **th):
    d = tmp_path / "models"
    rep, rep_path = linked_with_report(d, "standard52")
    rep["thresholds"].update(th)
    write_report(rep_path, rep)
    return d


@pytest.mark.parametrize("th", [{"familiar_index": 0.97}, {"far_familiar_card": 0.97},
                                {"familiar_index": True, "familiar_share": 0.6},
                                {"familiar_index": 0.97, "familiar_share": False}])
def test_the_familiar_frames_share_and_bars_go_together_as_numbers(tmp_path, th):
    with pytest.raises(ValueError, match="familiar_"):
        SuitedScanner("standard52", _models_with(tmp_path, **th), threads=1)


def test_the_familiar_frame_is_read_where_the_report_has_it_and_for_a_taught_deck_only_where_it_says_so_apart(
        tmp_path):
    class Profile:  # the scanner only keeps it; nothing is read here
        pass

    d = _models_with(tmp_path, familiar_index=0.97, familiar_share=0.6)
    assert SuitedScanner("standard52", d, threads=1).familiar == (0.6, {"familiar_index": 0.97})
    assert SuitedScanner("standard52", d, threads=1, profile=Profile()).familiar is None
    # judged in session 94 and not kept for either deck (standard52's rules FB, FB2 withdrawn on the held-out blocks,
    # island54's rule FI not passed): the committed reports have no familiar frame
    assert SuitedScanner("standard52", threads=1).familiar is None
    assert SuitedScanner("island54", threads=1).familiar is None
