"""Every kind of event the contract knows, as one tagged union: what the codec decodes and the
package exports (below both, so the codec needs nothing from the package)."""

from __future__ import annotations

from typing import Union

from schemas import arbitration, checkers, common, junqi, log, paohuzi
from schemas.envelope import Event

ALL_EVENTS: tuple[type[Event], ...] = common.EVENTS + checkers.EVENTS + junqi.EVENTS + paohuzi.EVENTS + log.EVENTS + arbitration.EVENTS
AnyEvent = Union[ALL_EVENTS]  # type: ignore[valid-type]
KINDS: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in ALL_EVENTS}  # type: ignore[misc]
