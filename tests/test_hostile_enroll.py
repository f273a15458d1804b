"""Hostile input to `pirate-table deck enroll` (and `deck remove`): any generated row folder, deck name or base ends
in exit 0 with a complete profile, or exit 2 with one line on stderr and the data folder and the row folder byte
for byte as before (no half-written profile, no temporary folder left behind)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import cv2
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from hostile import HOSTILE_TEXT, assert_refused_cleanly, count, run_cli, snapshot
from test_camera_enroll import _deck_style
from test_hostile_cli import hostile_image

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "60"))


@pytest.fixture(scope="module")
def good_photos() -> dict[int, bytes]:
    """The nine row photos of one deck (photo r: the eight cards of rank r, A to H), as JPEG bytes."""
    from vision.synth.rows import row_photo

    style = _deck_style()
    return {r: cv2.imencode(".jpg", row_photo(style, r, 40 + r), [cv2.IMWRITE_JPEG_QUALITY, 90])[1].tobytes()
            for r in range(9)}


# What stands in each of the nine places: the right photo, another row's photo, a hostile image, nothing.
SLOT = st.one_of(st.just("good"), st.integers(0, 8), hostile_image(), st.just(None))
NAME = st.one_of(st.from_regex(r"[a-z][a-z0-9_-]{0,8}", fullmatch=True), HOSTILE_TEXT,
                 st.sampled_from(["pirates72", "island", "standard52", "a" * 33, "-x", "ok deck"]))
BASE = st.one_of(st.just("pirates-bluff"), HOSTILE_TEXT, st.sampled_from(["pirates72", "poker", "island54"]))
EXTRA = st.one_of(st.none(), st.sampled_from(["9.jpg", "eight.jpg", "0.png", ".hidden", "notes.txt"]))


@settings(max_examples=max(8, EXAMPLES // 4), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(slots=st.lists(SLOT, min_size=9, max_size=9), name=NAME, base=BASE, extra=EXTRA, again=st.booleans())
def test_deck_enroll_fuzz(good_photos, slots, name, base, extra, again, monkeypatch):
    """``again``: `--again`, with a deck of that name already there (where the name can be a folder's) whose files
    must stay byte for byte as they were unless the deck is taught again."""
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        data, rows = d / "data", d / "rows"
        (data / "decks").mkdir(parents=True)
        rows.mkdir()
        for r, slot in enumerate(slots):
            if slot is None:
                continue
            raw = good_photos[r] if slot == "good" else good_photos[slot] if isinstance(slot, int) else slot
            (rows / f"{r}.jpg").write_bytes(raw)
        if extra:
            (rows / extra).write_bytes(good_photos[0])
        if again and isinstance(name, str) and name and "/" not in name and "\0" not in name and name not in (".", ".."):
            try:
                (data / "decks" / name).mkdir()
                (data / "decks" / name / "deck.json").write_text('{"base": "pirates-bluff", "name": "old"}\n')
                (data / "decks" / name / "profile.npz").write_bytes(b"the old profile")
            except (OSError, ValueError):  # not a name a folder can have: the refusal is checked all the same
                pass
        monkeypatch.setenv("PIRATE_TABLE_DATA", str(data))
        before_data, before_rows = snapshot(data), snapshot(rows)
        code, out, err = run_cli("deck", "enroll", name, "--base", base, "--rows", rows, *(["--again"] if again else []))
        count("deck enroll")
        assert snapshot(rows) == before_rows  # the photos are only read
        if code == 0:
            assert out.startswith("taught again deck " if again else "enrolled deck ") and err == "", (out, err)
            assert (data / "decks" / name / "profile.npz").read_bytes() != b"the old profile"
            assert (data / "decks" / name).is_dir()
            code, out, err = run_cli("deck", "remove", name)
            assert code == 0, err
        else:
            assert_refused_cleanly(code, out, err, before_data, snapshot(data), (name, base, extra))


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAME)
def test_deck_remove_fuzz(name, tmp_path, monkeypatch):
    data = tmp_path / "data"
    (data / "decks").mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("PIRATE_TABLE_DATA", str(data))
    before = snapshot(data)
    code, out, err = run_cli("deck", "remove", name)
    count("deck remove")
    assert_refused_cleanly(code, out, err, before, snapshot(data), name)  # nothing is enrolled: always refused


def test_a_deck_taught_again_keeps_its_old_profile_when_the_new_one_cannot_go_in(tmp_path, monkeypatch):
    """vision.enroll._swap_in (`deck enroll --again`): the old profile folder is moved aside, the new one renamed in;
    when that rename fails the old one is put back, and nothing else is left in the decks folder."""
    import os

    import vision.enroll as en

    target, new = tmp_path / "mydeck", tmp_path / ".mydeck-new"
    target.mkdir()
    (target / "deck.json").write_text("old")
    new.mkdir()
    (new / "deck.json").write_text("new")
    real = os.rename

    def failing(a, b):
        if os.fspath(a) == os.fspath(new):
            raise OSError(28, "No space left on device")
        return real(a, b)

    monkeypatch.setattr(en.os, "rename", failing)
    with pytest.raises(OSError):
        en._swap_in(new, target)
    assert (target / "deck.json").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".mydeck-new", "mydeck"]
    monkeypatch.setattr(en.os, "rename", real)
    en._swap_in(new, target)
    assert (target / "deck.json").read_text() == "new" and [p.name for p in tmp_path.iterdir()] == ["mydeck"]
