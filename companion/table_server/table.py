"""The phone table: seats, tokens, presence, the open secret round and ``view_for`` — no network here.

``PhoneTable.view_for(seat)`` is the ONE function that builds anything a phone (or, with ``seat=None``, the
tablet's public screen) may see. It is an allow-list: every field is copied by name from typed values
(``PublicState``, ``SeatState``, ``SecretRound.public_view``), nothing is passed through. Before a round is
revealed, the views of all seats have the same content whatever the answers are, except the seat's own answer,
which is padded to a fixed width, so a view's size tells nothing either. The server (server.py) sends only
``encode(view_for(seat))`` on every WebSocket and HTTP path.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any, Callable

from companion.errors import PirateTableError
from companion.secrets import SecretRound
from companion.table_server.source import PublicState, SeatState, SecretSource
from companion.table_server.tokens import SeatTokens

log = logging.getLogger("companion.table_server")

VIEW_VERSION = 1


def encode(message: dict[str, Any]) -> str:
    """The one serialisation of anything sent to a phone (compact, ASCII, sorted keys)."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=True, sort_keys=True, allow_nan=False)


def label(value: Any) -> str:
    """How a secret answer is shown (the choice buttons and the reveal)."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@dataclass
class _Presence:
    connections: int = 0
    joined: bool = False
    left_at: float | None = None


class Refused(PirateTableError):
    """A phone's message that is refused; ``code`` is the HTTP-like status sent back to that phone only."""

    def __init__(self, code: int, what: str) -> None:
        super().__init__(what)
        self.code = code
        self.what = what


class PhoneTable:
    """One table's phones and the source-of-truth game. Call everything from one thread (the event loop)."""

    def __init__(self, source: SecretSource, *, table_id: str | None = None, grace_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.tokens = SeatTokens(source.seats(), table_id)
        self.grace_s = grace_s
        self._clock = clock
        self._presence = {s: _Presence() for s in self.tokens.seats}
        self._round: SecretRound | None = None
        self._round_id = 0
        self._reveal: dict[str, Any] | None = None
        self._reveal_asked = 0  # the id of the last round whose reveal was started here
        self.rev = 0  # bumped on every change that is broadcast

    @property
    def table_id(self) -> str:
        return self.tokens.table_id

    @property
    def seats(self) -> tuple[str, ...]:
        return self.tokens.seats

    # ------------------------------------------------------------------ presence
    def connected(self, seat: str) -> None:
        p = self._presence[seat]
        p.connections += 1
        p.joined = True
        p.left_at = None

    def disconnected(self, seat: str) -> None:
        p = self._presence[seat]
        p.connections = max(0, p.connections - 1)
        if p.connections == 0:
            p.left_at = self._clock()

    def reset_seat(self, seat: str) -> str:
        """New token for ``seat`` (the old one is refused from now on); the seat is free again."""
        token = self.tokens.reset(seat)
        self._presence[seat] = _Presence()
        log.info("phones: seat %s reset", seat)
        return token

    def presence(self, seat: str) -> str:
        """free (nobody joined yet) | here | away (left, within the grace period) | gone (grace over)."""
        p = self._presence[seat]
        if p.connections:
            return "here"
        if not p.joined:
            return "free"
        assert p.left_at is not None
        return "away" if self._clock() - p.left_at < self.grace_s else "gone"

    # ------------------------------------------------------------------ the secret round
    def sync(self) -> None:
        """Catch up with the source: a new open round gets a new id; a round revealed elsewhere is recorded;
        a round completed elsewhere (the tablet's last answer) is revealed here."""
        cur = self._round
        if cur is not None:
            self._settle(cur)
        rnd = self.source.open_secret()
        if rnd is not cur:
            self._round = rnd
            if rnd is not None:
                self._round_id += 1
                self._settle(rnd)
        self.rev += 1

    def _settle(self, rnd: SecretRound) -> None:
        """Reveal a complete round (once), and record the answers of a revealed one (once)."""
        if rnd.complete and not rnd.revealed and self._reveal_asked != self._round_id:
            self._reveal_asked = self._round_id
            reveal = getattr(self.source, "reveal_secret", None)
            if reveal is not None:
                reveal(rnd)  # the game reveals its own way (e.g. a saved "reveal" action)
            else:
                self.source.secret_revealed(rnd, rnd.reveal())
        if rnd.revealed and (self._reveal is None or self._reveal["id"] != self._round_id):
            answers = rnd.answers()
            self._reveal = {"id": self._round_id, "kind": rnd.kind,
                            "answers": [[s, label(answers[s])] for s in rnd.seats]}
            log.info("phones: round %d (%s) revealed", self._round_id, rnd.kind)

    def choices(self, rnd: SecretRound) -> tuple[Any, ...] | None:
        """The answers a phone may give: the round's ``choices``, else the source's ``phone_choices(rnd)``."""
        if rnd.choices is not None:
            return tuple(rnd.choices)
        extra = getattr(self.source, "phone_choices", None)
        got = extra(rnd) if extra is not None else None
        return tuple(got) if got is not None else None

    def answer(self, seat: str, round_id: object, choice: object) -> None:
        """A phone's answer: ``choice`` is an index into the open round's choices. Refused (nothing changed)
        unless it is for the open round, this seat is asked, and the index is valid."""
        rnd = self._round
        if rnd is None or rnd.revealed:
            raise Refused(409, "no open question")
        if isinstance(round_id, bool) or round_id != self._round_id:
            raise Refused(409, "that question is closed")
        choices = self.choices(rnd)
        if choices is None:
            raise Refused(409, "this question is answered on the tablet")
        if isinstance(choice, bool) or not isinstance(choice, int) or not 0 <= choice < len(choices):
            raise Refused(400, "choice must be the index of one of the choices")
        self.submit(seat, choices[choice])

    def submit(self, seat: str, value: Any) -> None:
        """Submit ``seat``'s secret to the open round (phones and the passed tablet alike) — through the source's
        ``submit_secret(rnd, seat, value)`` when it has one (a game that saves each answer as an action), else
        straight into the SecretRound. Reveals the round when it was the last one missing. Refused (409, nothing
        changed) when not allowed."""
        rnd = self._round
        if rnd is None or rnd.revealed:
            raise Refused(409, "no open question")
        why = rnd.why_not(seat, value)
        if why is not None:
            raise Refused(409, why)
        submit = getattr(self.source, "submit_secret", None)
        try:
            if submit is not None:
                submit(rnd, seat, value)
            else:
                rnd.submit(seat, value)
        except PirateTableError as e:
            raise Refused(409, str(e)) from None
        log.info("phones: %s answered round %d", seat, self._round_id)
        self.sync()  # reveals when that was the last answer; the source may open the next round

    # ------------------------------------------------------------------ the view
    def view_for(self, seat: str | None) -> dict[str, Any]:
        """Everything ``seat``'s phone may see (``None``: the tablet's public view). An allow-list."""
        if seat is not None and seat not in self._presence:
            raise PirateTableError(f"phones: no seat {seat!r}")
        pub = self.source.public_state()
        if not isinstance(pub, PublicState):
            raise PirateTableError("phones: public_state() must return a PublicState")
        view: dict[str, Any] = {
            "type": "view",
            "v": VIEW_VERSION,
            "rev": self.rev,
            "table": self.table_id,
            "seat": seat,
            "game": pub.game,
            "phase": pub.phase,
            "turn": pub.turn,
            "seats": [[s, self.presence(s)] for s in self.seats],
            "me": None,
            "question": None,
            "reveal": None,
        }
        if seat is not None:
            mine = self.source.seat_state(seat)
            if not isinstance(mine, SeatState):
                raise PirateTableError("phones: seat_state() must return a SeatState")
            view["me"] = {"score": mine.score, "label": mine.label, "note": mine.note}
        rnd = self._round
        if rnd is not None and not rnd.revealed:
            pv = rnd.public_view()  # kind, seats, waiting, revealed: nothing secret before the reveal
            choices = self.choices(rnd)
            labels = [label(c) for c in choices] if choices is not None else []
            q: dict[str, Any] = {
                "id": self._round_id,
                "kind": pv["kind"],
                "asks": list(pv["seats"]),
                "waiting": list(pv["waiting"]),
                "choices": labels,
                "phone": 1 if choices is not None else 0,
            }
            if seat is not None:
                q["mine"] = self._mine(rnd, seat, choices or (), labels)
            view["question"] = q
        if self._reveal is not None:
            view["reveal"] = {"id": self._reveal["id"], "kind": self._reveal["kind"],
                              "answers": [list(a) for a in self._reveal["answers"]]}
        return view

    @staticmethod
    def _mine(rnd: SecretRound, seat: str, choices: tuple[Any, ...], labels: list[str]) -> dict[str, Any]:
        """The seat's own answer, in a fixed-width shape: the same size whether it answered or not and
        whatever it answered."""
        width = max((len(encode(x)) for x in labels), default=2)
        asked = 1 if seat in rnd.seats else 0
        if rnd.has_answered(seat):
            # the answer itself stays in the round; find its index through the public choices
            value = rnd.own_answer(seat)
            idx = next((i for i, c in enumerate(choices) if c == value and type(c) is type(value)), -1)
            text = labels[idx] if idx >= 0 else label(value)
            return {"asked": asked, "answered": 1, "choice": f"{idx:03d}", "label": text,
                    "pad": " " * (width - len(encode(text)))}
        return {"asked": asked, "answered": 0, "choice": "---", "label": "",
                "pad": " " * (width - len(encode("")))}
