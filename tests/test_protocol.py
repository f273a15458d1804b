"""Protocol: COBS, CRC, frames, the streaming parser, and the 1,000,000-frame fuzz test."""

from __future__ import annotations

import binascii
import random
import time

import pytest
from hypothesis import given, settings, strategies as st

from hardware import protocol as p


def test_crc_is_ccitt_false_from_binascii():
    assert p.crc16(b"123456789") == 0x29B1
    assert p.crc_trailer(0xFFFF) == bytes((0xBF, 0xBF, 0x8F))
    assert p.crc_trailer(0) == bytes((0x80, 0x80, 0x80))


@given(st.binary(max_size=600))
@settings(max_examples=300)
def test_cobs_round_trip_and_no_zero(data):
    enc = p.cobs_encode(data)
    assert 0 not in enc
    assert p.cobs_decode(enc) == data


def _random_message(rng: random.Random, seq: int) -> p.Message:
    t = rng.choice(sorted(p.NAMES))
    r = rng.getrandbits
    values = {
        p.HELLO: dict(version=1, boot_id=r(32), buttons=8, tick_hz=p.TICK_HZ, fw=r(16)),
        p.HEARTBEAT: dict(box_time=r(64), round=r(16), state=r(2), pending=r(5), dropped=r(8)),
        p.PRESS: dict(press_id=r(16), tick=r(rng.choice((8, 16, 40, 64))), mask=r(8), flags=r(3), round=r(16),
                        boot_id=r(32)),
        p.ACK: dict(cmd_seq=r(8), status=r(2)),
        p.TIME: dict(cmd_seq=r(8), box_time=r(64)),
        p.HELLO_REQ: {}, p.DISARM: {}, p.TIME_REQ: {},
        p.ARM: dict(round=r(16)),
        p.BUZZ: dict(pattern=r(2), freq_hz=r(16), duration_ms=r(16)),
        p.LIGHTS: dict(on_mask=r(8), blink_mask=r(8)),
        p.PRESS_ACK: dict(press_id=r(16)),
    }[t]
    return p.make(t, seq & 0xFF, **values)


@given(st.integers(0, 2**32 - 1))
@settings(max_examples=300)
def test_every_message_round_trips(seed):
    rng = random.Random(seed)
    msg = _random_message(rng, rng.getrandbits(8))
    frame = p.encode_frame(msg)
    assert frame[-1] == 0 and 0 not in frame[:-1]
    parser = p.FrameParser(synced=True)
    # arbitrary chunking must not matter
    cut = rng.randrange(len(frame) + 1)
    got = parser.feed(frame[:cut]) + parser.feed(frame[cut:])
    assert got == [msg]


def test_every_single_bit_flip_of_a_frame_is_rejected():
    rng = random.Random(1)
    for _ in range(200):
        frame = p.encode_frame(_random_message(rng, rng.getrandbits(8)))
        for bit in range((len(frame) - 1) * 8):
            bad = bytearray(frame)
            bad[bit // 8] ^= 1 << (bit % 8)
            parser = p.FrameParser(synced=True)
            assert parser.feed(bytes(bad)) == [], (frame.hex(), bit)


def test_parser_resyncs_and_counts_rejects():
    m = p.make(p.ACK, 1, cmd_seq=2, status=0)
    f = p.encode_frame(m)
    parser = p.FrameParser(p.BOX_TYPES)
    # joined mid-frame: first partial frame is dropped, then everything after is accepted
    assert parser.feed(f[5:] + f + b"x" * 500 + b"\x00" + f) == [m, m]
    assert parser.frames_bad == 1
    # a host-side parser rejects box-to-host types and vice versa
    box_side = p.FrameParser(p.HOST_TYPES, synced=True)
    assert box_side.feed(f) == [] and box_side.frames_bad == 1


def test_make_rejects_bad_fields():
    with pytest.raises(p.ProtocolError):
        p.make(p.ARM, 0, round=70000)
    with pytest.raises(p.ProtocolError):
        p.make(p.ARM, 0)
    with pytest.raises(p.ProtocolError):
        p.make(0x42, 0)


FUZZ_FRAMES = 1_000_000


def _mutate(rng: random.Random, frame: bytes) -> bytes:
    body = bytearray(frame[:-1])
    kind = rng.randrange(6)
    if kind <= 2:  # 1, 2 or 3 bit flips anywhere in the frame (code bytes and trailer included)
        for _ in range(kind + 1):
            i = rng.randrange(len(body) * 8)
            body[i >> 3] ^= 1 << (i & 7)
        if bytes(body) == frame[:-1]:  # flips that cancelled out: force a real change
            body[0] ^= 0x40
    elif kind == 3:  # a burst of up to 16 bits replaced by random bits
        i = rng.randrange(len(body))
        for j in range(i, min(i + 2, len(body))):
            body[j] ^= rng.randrange(1, 256)
    elif kind == 4:  # truncated, or a byte lost
        i = rng.randrange(len(body))
        del body[i]
    else:  # a byte inserted
        body.insert(rng.randrange(len(body) + 1), rng.randrange(1, 256))
    return bytes(body) + b"\x00"


def test_fuzz_one_million_random_and_mutated_frames():
    """>= 1,000,000 frames: random garbage, mutated valid frames, valid frames; random chunking.

    No exception may escape, every valid frame must come out exactly once and in order, and nothing else
    may come out (a corrupt frame accepted would show up as an extra or different message).
    """
    rng = random.Random(20261122)
    pool = [p.encode_frame(_random_message(rng, i)) for i in range(4096)]
    msgs = [p.decode_body(f[:-1]) for f in pool]
    parser = p.FrameParser(p.BOX_TYPES | p.HOST_TYPES, synced=True)
    fed = 0
    accepted_total = 0
    t0 = time.perf_counter()
    while fed < FUZZ_FRAMES:
        chunks = []
        expected = []
        for _ in range(20_000):
            r = rng.random()
            if r < 0.25:  # valid
                k = rng.randrange(4096)
                chunks.append(pool[k])
                expected.append(msgs[k])
            elif r < 0.85:  # mutated valid frame
                chunks.append(_mutate(rng, pool[rng.randrange(4096)]))
            else:  # random garbage (may contain zeros: it then counts as several garbage frames)
                chunks.append(rng.randbytes(rng.randrange(1, 90)) + b"\x00")
        fed += len(chunks)
        stream = b"".join(chunks)
        got = []
        pos = 0
        while pos < len(stream):
            step = rng.randrange(1, 4096)
            got += parser.feed(stream[pos:pos + step])
            pos += step
        assert got == expected, "a corrupt frame was accepted or a valid frame lost"
        accepted_total += len(got)
    elapsed = time.perf_counter() - t0
    assert fed >= FUZZ_FRAMES
    assert parser.frames_bad >= 0.7 * (fed - accepted_total)
    print(f"fuzz: {fed} frames, {accepted_total} valid accepted, {parser.frames_bad} rejected, {elapsed:.1f} s")
