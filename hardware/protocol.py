"""Frames, COBS, CRC and messages of the CALL button box (see hardware/PROTOCOL.md, the source of truth).

Pure Python, no serial I/O. ``encode_frame`` / ``decode_frame`` work on one frame; ``FrameParser`` is the
streaming receiver used by the driver and the software box: feed it bytes, get ``Message`` objects back.
It never raises on bad input; it counts what it rejected.
"""

from __future__ import annotations

import binascii
import struct
from dataclasses import dataclass

PROTOCOL_VERSION = 1
TICK_HZ = 2_000_000  # Timer1 at 16 MHz / 8: 0.5 us per tick
BUTTONS = 8
MAX_FRAME = 64  # bytes between delimiters, trailer included
CRC_INIT = 0xFFFF

# Box -> host
HELLO = 0x01
HEARTBEAT = 0x02
PRESS = 0x03
ACK = 0x04
TIME = 0x05
# Host -> box
HELLO_REQ = 0x81
ARM = 0x82
DISARM = 0x83
BUZZ = 0x84
LIGHTS = 0x85
TIME_REQ = 0x86
PRESS_ACK = 0x87

# PRESS flags
FLAG_ARMED = 0x01
FLAG_FIRST = 0x02
FLAG_RESEND = 0x04

# type -> (name, struct of the body, field names)
_LAYOUT: dict[int, tuple[str, struct.Struct, tuple[str, ...]]] = {
    HELLO: ("HELLO", struct.Struct("<BIBIH"), ("version", "boot_id", "buttons", "tick_hz", "fw")),
    HEARTBEAT: ("HEARTBEAT", struct.Struct("<QHBBB"), ("box_time", "round", "state", "pending", "dropped")),
    PRESS: ("PRESS", struct.Struct("<HQBBHI"), ("press_id", "tick", "mask", "flags", "round", "boot_id")),
    ACK: ("ACK", struct.Struct("<BB"), ("cmd_seq", "status")),
    TIME: ("TIME", struct.Struct("<BQ"), ("cmd_seq", "box_time")),
    HELLO_REQ: ("HELLO_REQ", struct.Struct("<"), ()),
    ARM: ("ARM", struct.Struct("<H"), ("round",)),
    DISARM: ("DISARM", struct.Struct("<"), ()),
    BUZZ: ("BUZZ", struct.Struct("<BHH"), ("pattern", "freq_hz", "duration_ms")),
    LIGHTS: ("LIGHTS", struct.Struct("<BB"), ("on_mask", "blink_mask")),
    TIME_REQ: ("TIME_REQ", struct.Struct("<"), ()),
    PRESS_ACK: ("PRESS_ACK", struct.Struct("<H"), ("press_id",)),
}
NAMES = {t: v[0] for t, v in _LAYOUT.items()}
BOX_TYPES = frozenset(t for t in _LAYOUT if t < 0x80)
HOST_TYPES = frozenset(t for t in _LAYOUT if t >= 0x80)
# payload length (type + seq + body) per type, for the fast length check
_PAYLOAD_LEN = {t: 2 + v[1].size for t, v in _LAYOUT.items()}


class ProtocolError(ValueError):
    """A frame or message that does not follow PROTOCOL.md."""


@dataclass(frozen=True, slots=True)
class Message:
    type: int
    seq: int
    fields: tuple

    @property
    def name(self) -> str:
        return NAMES[self.type]

    def __getattr__(self, item):  # fields by name: msg.tick, msg.mask ...
        try:
            layout = _LAYOUT[object.__getattribute__(self, "type")]
        except (KeyError, AttributeError):
            raise AttributeError(item) from None
        try:
            return self.fields[layout[2].index(item)]
        except ValueError:
            raise AttributeError(item) from None

    def as_dict(self) -> dict:
        d = {"type": self.name, "seq": self.seq}
        d.update(zip(_LAYOUT[self.type][2], self.fields))
        return d


def make(type_: int, seq: int, **fields) -> Message:
    """Build a message, checking field names and ranges (raises ProtocolError)."""
    if type_ not in _LAYOUT:
        raise ProtocolError(f"unknown message type 0x{type_:02x}")
    name, st, names = _LAYOUT[type_]
    if set(fields) != set(names):
        raise ProtocolError(f"{name} needs fields {names}, got {tuple(sorted(fields))}")
    values = tuple(fields[n] for n in names)
    try:
        st.pack(*values)
    except struct.error as exc:
        raise ProtocolError(f"{name}: field out of range: {exc}") from None
    if not 0 <= seq <= 255:
        raise ProtocolError(f"seq out of range: {seq}")
    return Message(type_, seq, values)


# --- COBS -----------------------------------------------------------------------------------------------

def cobs_encode(data: bytes) -> bytes:
    """Standard COBS (codes 0x01..0xFF); no 0x00 in the result."""
    out = bytearray([0])
    code_i = 0
    code = 1
    for b in data:
        if b == 0:
            out[code_i] = code
            code_i = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_i] = code
                code_i = len(out)
                out.append(0)
                code = 1
    out[code_i] = code
    return bytes(out)


def cobs_decode(enc: bytes) -> bytes:
    """Strict COBS decode; raises ProtocolError on a zero byte or a code running past the end."""
    out = bytearray()
    i = 0
    n = len(enc)
    while i < n:
        code = enc[i]
        if code == 0:
            raise ProtocolError("zero byte inside COBS data")
        j = i + code
        if j > n:
            raise ProtocolError("COBS code runs past the end of the frame")
        block = enc[i + 1:j]
        if 0 in block:
            raise ProtocolError("zero byte inside COBS data")
        out += block
        if code != 0xFF and j < n:
            out.append(0)
        i = j
    return bytes(out)


# --- frames ---------------------------------------------------------------------------------------------

def crc16(data: bytes) -> int:
    return binascii.crc_hqx(data, CRC_INIT)


def crc_trailer(crc: int) -> bytes:
    return bytes((0x80 | (crc >> 10), 0x80 | ((crc >> 4) & 0x3F), 0x80 | (crc & 0x0F)))


def encode_payload(msg: Message) -> bytes:
    return bytes((msg.type, msg.seq)) + _LAYOUT[msg.type][1].pack(*msg.fields)


def encode_frame(msg: Message) -> bytes:
    """The bytes of one frame on the wire, delimiter included."""
    enc = cobs_encode(encode_payload(msg))
    return enc + crc_trailer(crc16(enc)) + b"\x00"


def decode_body(frame: bytes, allowed=None) -> Message:
    """Decode one frame without its 0x00 delimiter. Raises ProtocolError on anything wrong."""
    n = len(frame)
    if n < 6 or n > MAX_FRAME:
        raise ProtocolError(f"bad frame length {n}")
    t0, t1, t2 = frame[-3], frame[-2], frame[-1]
    if (t0 & 0xC0) != 0x80 or (t1 & 0xC0) != 0x80 or (t2 & 0xF0) != 0x80:
        raise ProtocolError("bad CRC trailer markers")
    enc = frame[:-3]
    if binascii.crc_hqx(enc, CRC_INIT) != (((t0 & 0x3F) << 10) | ((t1 & 0x3F) << 4) | (t2 & 0x0F)):
        raise ProtocolError("CRC mismatch")
    payload = cobs_decode(enc)
    typ = payload[0]
    if typ not in _LAYOUT or (allowed is not None and typ not in allowed):
        raise ProtocolError(f"unexpected message type 0x{typ:02x}")
    if len(payload) != _PAYLOAD_LEN[typ]:
        raise ProtocolError(f"bad length {len(payload)} for {NAMES[typ]}")
    fields = _LAYOUT[typ][1].unpack_from(payload, 2)
    if typ == PRESS and fields[3] & 0xF8:
        raise ProtocolError("reserved PRESS flag bits set")
    return Message(typ, payload[1], fields)


class FrameParser:
    """Streaming receiver: ``feed(bytes) -> list[Message]``. Never raises on bad input.

    ``allowed`` restricts the accepted message types (BOX_TYPES on the host, HOST_TYPES on a box).
    The first partial frame after creation or ``reset()`` is discarded (we may have joined mid-frame).
    """

    def __init__(self, allowed=None, *, synced: bool = False):
        self.allowed = allowed
        self._buf = b""
        self._synced = synced
        self.frames_ok = 0
        self.frames_bad = 0
        self.bytes_dropped = 0
        self.last_error = ""

    def reset(self) -> None:
        self._buf = b""
        self._synced = False

    def feed(self, data: bytes) -> list[Message]:
        if not data:
            return []
        buf = self._buf + bytes(data)
        if b"\x00" not in data:
            if len(buf) > MAX_FRAME:  # over-long: drop it whole, keep dropping until the next 0x00
                self.bytes_dropped += len(buf)
                self.frames_bad += 1 if self._synced else 0
                self._synced = False
                buf = b""
            self._buf = buf
            return []
        parts = buf.split(b"\x00")
        rest = parts.pop()
        out = []
        if not self._synced:
            first = parts.pop(0) if parts else b""
            self.bytes_dropped += len(first)
            self._synced = True
        if len(rest) > MAX_FRAME:  # over-long tail: drop it and everything up to the next 0x00
            self.bytes_dropped += len(rest)
            rest = b""
            self._synced = False
        self._buf = rest
        allowed = self.allowed
        for frame in parts:
            if not frame:
                continue
            try:
                out.append(decode_body(frame, allowed))
            except (ProtocolError, IndexError, struct.error) as exc:
                self.frames_bad += 1
                self.last_error = str(exc)
        self.frames_ok += len(out)
        return out


def press_mask_seats(mask: int) -> list[int]:
    """Buttons (0..7) set in a PRESS mask."""
    return [i for i in range(BUTTONS) if mask >> i & 1]
