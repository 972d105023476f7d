"""The event envelope every recorded event shares, and the seat holders it names."""

from __future__ import annotations

from typing import Annotated

import msgspec

SCHEMA_VERSION = 1

STREAM_PATTERN = r"^(?!.*/\.\.?(?:/|$))[A-Za-z0-9][A-Za-z0-9._:/-]*$(?!\n)"
"""A stream id: letters, digits and `._:/-`, from a letter or digit; no `.` or `..` segment (a
stream id names files in exports); `$(?!\n)` ends it in Python as in JSON Schema (Python's `$`
alone also matches before a final newline)."""
STREAM_RULE = "a stream id: letters, digits and `._:/-`, starting with a letter or digit, no `.` or `..` segment, no line break"
StreamId = Annotated[str, msgspec.Meta(min_length=1, max_length=200, pattern=STREAM_PATTERN)]
EnvelopeStream = Annotated[str, msgspec.Meta(min_length=1, max_length=200, extra_json_schema={"pattern": STREAM_PATTERN})]
"""The envelope's stream id: the contract of `StreamId`, but its pattern is checked by the codec
(schemas/codec.py) once per distinct stream instead of by msgspec on every event, where the regex
was a third of the time it takes to decode a log."""
INT64_MAX = 2**63 - 1
MAX_TIMESTAMP = 253_402_300_799_999
"""9999-12-31T23:59:59.999Z: every timestamp the contract accepts is a date SQL engines can hold."""
MAX_MILLIS = 2**53 - 1
"""The largest duration any JSON reader holds exactly (a double's integer range)."""
SeqNo = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]
Count = Annotated[int, msgspec.Meta(ge=0, le=INT64_MAX)]
Int64 = Annotated[int, msgspec.Meta(ge=-INT64_MAX - 1, le=INT64_MAX)]
Timestamp = Annotated[int, msgspec.Meta(ge=0, le=MAX_TIMESTAMP)]
Millis = Annotated[int, msgspec.Meta(ge=0, le=MAX_MILLIS)]
Seat = Annotated[int, msgspec.Meta(ge=0, le=3)]
PlayerId = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


class Event(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, tag_field="kind"):
    """Base of every event: the stream it belongs to, its dense 0-based sequence number there,
    the competition server's timestamp (ms since the epoch, UTC), the acting seat where there
    is one, and the schema version it was written under."""

    stream: EnvelopeStream
    seq: SeqNo
    ts: Timestamp
    seat: Seat | None = None
    v: Annotated[int, msgspec.Meta(ge=1)] = SCHEMA_VERSION

    @property
    def kind(self) -> str:
        """Returns the event's stable kind tag, e.g. `game.started`."""
        return self.__struct_config__.tag  # type: ignore[return-value]


class Program(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """An AI program holding a seat (人机赛), named with its version."""

    name: Annotated[str, msgspec.Meta(min_length=1)]
    version: Annotated[str, msgspec.Meta(min_length=1)]


class SeatHolder(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Who sits in a seat: a registered player, or an AI program (人机赛)."""

    seat: Seat
    player: PlayerId | None = None
    program: Program | None = None

    def __post_init__(self) -> None:
        if (self.player is None) == (self.program is None):
            raise ValueError("a seat is held by exactly one of `player` or `program`")

    @property
    def holder(self) -> str:
        """Returns the player id, or `program@version` for an AI seat."""
        if self.player is not None:
            return self.player
        assert self.program is not None
        return f"{self.program.name}@{self.program.version}"
