"""Events the log records about itself: who witnesses it, which sources may write to it, and who
sent each batch the live service appended."""

from __future__ import annotations

from typing import Annotated

import msgspec

from schemas.arbitration import ARBITER_STREAM
from schemas.envelope import Count, Event, StreamId

WITNESS_STREAM = "log.witnesses"
"""The stream of the arbiters registered as witnesses of this log."""
SOURCES_STREAM = "log.sources"
"""The stream of the sources (venue servers, platforms, AI harnesses) registered to send batches."""
BATCHES_STREAM = "log.batches"
"""The stream of the signed batches the live service accepted: one record per batch."""
LOG_STREAMS = frozenset({WITNESS_STREAM, SOURCES_STREAM, BATCHES_STREAM, ARBITER_STREAM})
"""The log's own streams: no source may write them."""

SourceName = Annotated[str, msgspec.Meta(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")]


class WitnessAdded(Event, frozen=True, kw_only=True, tag="log.witness_added"):
    """An arbiter co-signed the checkpoint of `size` with the key `verifier` (a C2SP verifier key):
    from then on `verify` requires that co-signature, whatever lies in the ledger's folders."""

    verifier: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    size: Count


class SourceRegistered(Event, frozen=True, kw_only=True, tag="source.registered"):
    """A sender may submit signed batches from now on: its name, its Ed25519 key (a C2SP verifier
    key, the key name being the source's name) and what it may write: the tournaments (their
    stream and streams under `<id>/`, where a `game.started` must name that tournament) and the
    streams (an exact id, or a prefix ending in `/`). With neither, any stream no other source writes."""

    name: SourceName
    key: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    tournaments: list[StreamId] = []
    streams: list[StreamId] = []


class SourceRevoked(Event, frozen=True, kw_only=True, tag="source.revoked"):
    """A sender's key is withdrawn: its batches are refused from now on (what it sent stays recorded)."""

    name: SourceName
    reason: Annotated[str, msgspec.Meta(max_length=500)] = ""


class BatchReceived(Event, frozen=True, kw_only=True, tag="source.batch"):
    """One signed batch the service accepted: who sent it, the signature line over the request
    body's exact bytes (scheme `matchledger-batch/2`, see `ledger/sources.py`), the body's SHA-256,
    and the log entries of its events in body order, as runs `[first, count]` (an event the log
    already held, re-sent, names its earlier entry). `canonical` tells that the body was those
    entries' stored bytes, each followed by a newline, so anyone can re-check the signature from
    the log alone. `streams` lists the streams the batch wrote, in order of first appearance."""

    source: SourceName
    signature: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    digest: Annotated[str, msgspec.Meta(min_length=64, max_length=64, pattern=r"^[0-9a-f]{64}$")]
    entries: list[tuple[Count, Count]]
    streams: list[StreamId]
    canonical: bool


EVENTS: tuple[type[Event], ...] = (WitnessAdded, SourceRegistered, SourceRevoked, BatchReceived)
