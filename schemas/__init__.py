"""The event contract: every kind of event competition software may send, and its codec."""

from __future__ import annotations

from schemas.codec import ContractError, decode, decode_line, decode_stored, decode_stored_array, encode
from schemas.envelope import SCHEMA_VERSION, Event, Program, SeatHolder
from schemas.events import ALL_EVENTS, KINDS, AnyEvent

__all__ = [
    "ALL_EVENTS", "AnyEvent", "KINDS", "SCHEMA_VERSION", "ContractError", "Event", "Program",
    "SeatHolder", "decode", "decode_line", "decode_stored", "decode_stored_array",
    "encode",
]
