"""Canonical encoding and strict decoding of events, with errors that name the line and field."""

from __future__ import annotations

import functools
import json
import operator
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from schemas.envelope import STREAM_PATTERN, STREAM_RULE, Event
from schemas.events import AnyEvent

DEFAULT_MAX_ENTRY_BYTES = 64 * 1024
_encoder = msgspec.json.Encoder()


def at_line(line: int) -> str:
    """How every refusal names its input line, in Chinese and English: the one prefix the contract's
    and the append rules' errors share, so a script or a referee reads one shape."""
    return f"第 {line} 行 line {line}"


class ContractError(ValueError):
    """An input line does not satisfy the event contract."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"{at_line(line)}: {message}")
        self.line = line
        self.detail = message

    def __reduce__(self) -> tuple[type, tuple[int, str]]:  # a worker process's refusal reaches its parent whole
        return type(self), (self.line, self.detail)


@functools.cache
def _decoder() -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(AnyEvent)


@functools.cache
def _batch_decoder() -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(list[AnyEvent])  # type: ignore[valid-type]


def warm() -> None:
    """Builds the decoders now. A first decode otherwise builds them, some 25 ms of Python reading
    the schemas' annotations: a service does it before its first batch, not while it waits."""
    _decoder()
    _batch_decoder()


_STREAM = re.compile(STREAM_PATTERN)


@functools.lru_cache(maxsize=1 << 16)
def _check_stream(stream: str) -> None:
    """Checks the envelope's stream id against its pattern; cached, since a stream has many events."""
    if not _STREAM.fullmatch(stream):
        raise msgspec.ValidationError(f"Expected {STREAM_RULE} (流标识不合规) - at `$.stream`")


def encode(event: Event) -> bytes:
    """Returns the canonical bytes of an event: the msgspec JSON encoding of the validated Struct."""
    return _encoder.encode(event)


def decode(data: bytes | str) -> Event:
    """Decodes one event strictly.

    :raises msgspec.DecodeError: on malformed JSON or a contract violation.
    """
    event: Event = _decoder().decode(data)
    _check_stream(event.stream)
    return event


def decode_stored(payloads: Sequence[bytes | memoryview]) -> list[Event]:
    """Decodes stored entries strictly, all in one call (much faster than one by one).

    :raises msgspec.DecodeError: on malformed JSON or a contract violation.
    """
    return decode_stored_array(b"[" + b",".join(payloads) + b"]") if payloads else []


_stream_of = operator.attrgetter("stream")


def decode_stored_array(data: bytes) -> list[Event]:
    """Decodes a JSON array of stored entries strictly.

    :raises msgspec.DecodeError: on malformed JSON or a contract violation.
    """
    events: list[Event] = _batch_decoder().decode(data)
    for stream in set(map(_stream_of, events)):
        _check_stream(stream)
    return events


def decode_line(data: bytes, line: int, max_bytes: int = DEFAULT_MAX_ENTRY_BYTES) -> tuple[Event, bytes]:
    """Validates one input line and returns the event with its canonical bytes.

    :raises ContractError: naming the line and the JSON path of the offending field.
    """
    if len(data) > 4 * max_bytes:
        raise ContractError(line, f"event is {len(data)} bytes, over the limit of {max_bytes}")
    if data.startswith(b"\xef\xbb\xbf"):
        raise ContractError(line, "the line starts with a UTF-8 byte order mark (BOM); save the file as UTF-8 without one")
    try:
        event = decode(data)
        canonical = encode(event)
        if canonical != data or _LONG_NUMBER in data.translate(_DIGITS):  # else parsed once: see _check_plain_json
            _check_plain_json(data)
    except msgspec.ValidationError as exc:
        raise ContractError(line, _with_path(str(exc))) from None
    except msgspec.DecodeError as exc:
        raise ContractError(line, f"malformed JSON: {exc}") from None
    except RecursionError:
        raise ContractError(line, "malformed JSON: nested too deeply") from None
    if len(canonical) > max_bytes:
        raise ContractError(line, f"event is {len(canonical)} bytes, over the limit of {max_bytes}")
    return event, canonical


_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
"""Nineteen digits in a row, once `_DIGITS` made every digit a 0: perhaps an integer outside int64
(2^63 has 19 digits). Two C loops, a quarter of the time of the regex search `[0-9]{19}` it replaced,
which took longer than decoding the line."""


def _check_plain_json(data: bytes) -> None:
    """Refuses what msgspec lets through but a stored event must not hold: a key given twice
    (msgspec keeps the last, so two readers could disagree on what was sent) and integers
    outside int64 anywhere in the event (SQL engines cannot hold them). A line that is its own
    canonical encoding (as `send`, the client and most software write them) needs no such check
    unless it has nineteen digits in a row: an encoding names each key once. Any other line is
    parsed a second time here: msgspec keeps the last of two equal keys and takes any integer,
    so the first parse cannot see either.

    :raises msgspec.ValidationError: naming the key or the number.
    """
    _PLAIN.decode(data.decode())  # msgspec has checked the UTF-8 and the JSON already


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise msgspec.ValidationError(f"Duplicate key {key!r} in an object - at `$`")
        seen[key] = value
    return seen


def _int64(text: str) -> int:
    value = int(text)
    if not -(2**63) <= value < 2**63:
        raise msgspec.ValidationError(f"Integer {text} is outside the 64-bit range - at `$`")
    return value


_PLAIN = json.JSONDecoder(object_pairs_hook=_no_duplicate_keys, parse_int=_int64)  # made once: `json.loads` with hooks builds one a call


def _with_path(message: str) -> str:
    """Adds the root path to msgspec messages about the top-level object, which carry none."""
    return message if " - at `" in message else f"{message} - at `$`"
