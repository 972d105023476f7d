"""Events the log records about itself: who witnesses it."""

from __future__ import annotations

from typing import Annotated

import msgspec

from schemas.envelope import Count, Event

WITNESS_STREAM = "log.witnesses"
"""The stream of the arbiters registered as witnesses of this log."""


class WitnessAdded(Event, frozen=True, kw_only=True, tag="log.witness_added"):
    """An arbiter co-signed the checkpoint of `size` with the key `verifier` (a C2SP verifier key):
    from then on `verify` requires that co-signature, whatever lies in the ledger's folders."""

    verifier: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    size: Count


EVENTS: tuple[type[Event], ...] = (WitnessAdded,)
