"""The event contract: every kind of event competition software may send, and its codec."""

from __future__ import annotations

from typing import Union

from schemas import arbitration, checkers, common, junqi, log, paohuzi
from schemas.codec import ContractError, decode, decode_line, decode_stored, decode_stored_array, encode
from schemas.envelope import SCHEMA_VERSION, Event, Program, SeatHolder

ALL_EVENTS: tuple[type[Event], ...] = common.EVENTS + checkers.EVENTS + junqi.EVENTS + paohuzi.EVENTS + log.EVENTS + arbitration.EVENTS
AnyEvent = Union[ALL_EVENTS]  # type: ignore[valid-type]
KINDS: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in ALL_EVENTS}  # type: ignore[misc]

__all__ = [
    "ALL_EVENTS", "AnyEvent", "KINDS", "SCHEMA_VERSION", "ContractError", "Event", "Program",
    "SeatHolder", "decode", "decode_line", "decode_stored", "decode_stored_array",
    "encode",
]
