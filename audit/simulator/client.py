"""The Python client of the live service: signs batches with a source's key, sends them with
retries that are safe to repeat, and checks every receipt before trusting it.

A retry re-sends the very same bytes with the very same signature: the service knows the batch by
its body's digest and answers with the receipt it gave the first time, so an event lands once
however many times a lost answer makes the client send it.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

import aiohttp
import msgspec

from ledger import Receipt, Signer, Verifier, check_receipt
from ledger.sources import HEADER as SIGNATURE_HEADER
from ledger.sources import log_identity, note_identity, sign_batch
from schemas import decode_line, encode
from schemas.envelope import Event

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
RETRY_FOR = 120.0
"""Seconds a client keeps sending a batch again while the service cannot be reached or answers a
retryable status: a restart takes 3-28 s under load (issue 33), so a restart is ridden out and only
a longer outage is reported, as one."""


class SendError(Exception):
    """The service refused a batch (`status`, its stable `reason`, the batch's `line` where it names
    one), or could not be reached."""

    def __init__(self, status: int, reason: str, message: str, line: int | None = None) -> None:
        super().__init__(f"{status} {reason}: {message}" if status else f"{reason}: {message}")
        self.status, self.reason, self.message, self.line = status, reason, message, line


def batch_body(events: Sequence[Event | bytes]) -> bytes:
    """Returns a batch body: each event's canonical bytes and a newline (so the log holds the very
    bytes signed, and anyone can re-check the signature from the log alone). Events given as JSON
    bytes are checked against the contract and put in canonical form.

    :raises ContractError: naming the (1-based) event that breaks the contract.
    """
    return b"".join((decode_line(e, n)[1] if isinstance(e, bytes) else encode(e)) + b"\n" for n, e in enumerate(events, 1))


class Client:
    """Sends signed batches to one service; use as an async context manager.

    `log_key` is the log's verifier key: with it each receipt's checkpoint signature is checked,
    without it only the proofs against the root the receipt's checkpoint states. A batch is sent
    again for up to `retry_for` seconds while the service cannot be reached or answers a retryable
    status. Each batch is signed for the log (scheme `matchledger-batch/2`: its origin and key id,
    `ledger.log_identity`): `origin`, else the log key's, else that of the service's checkpoint.
    """

    def __init__(self, url: str, signer: Signer, log_key: Verifier | None = None, retry_for: float = RETRY_FOR,
                 timeout: float = 30.0, session: aiohttp.ClientSession | None = None, origin: str | None = None) -> None:
        self.url = url.rstrip("/")
        self.signer = signer
        self.log_key = log_key
        self.origin = origin or (log_identity(log_key.name, log_key.key_id) if log_key is not None else None)
        self.retry_for = retry_for
        self.timeout = aiohttp.ClientTimeout(total=timeout)
        self._session = session
        self._own_session = session is None

    async def __aenter__(self) -> Client:
        if self._session is None:
            self._session = aiohttp.ClientSession(timeout=self.timeout)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._own_session and self._session is not None:
            await self._session.close()

    async def send(self, events: Sequence[Event | bytes]) -> Receipt:
        """Sends one batch and returns its checked receipt.

        :raises SendError: when the service refuses it, or stays unreachable for `retry_for` seconds.
        """
        body = batch_body(events)
        return await self.send_body(body, [line for line in body.split(b"\n") if line])

    async def send_body(self, body: bytes, sent: Sequence[bytes] | None = None) -> Receipt:
        """Sends a body already made (retries re-send exactly it) and returns its checked receipt.

        :raises SendError: when the service refuses it, or stays unreachable for `retry_for` seconds.
        """
        assert self._session is not None, "use the client as `async with Client(...)`"
        deadline = time.monotonic() + self.retry_for
        headers = {SIGNATURE_HEADER: sign_batch(self.signer, body, await self._origin(deadline)), "Content-Type": "application/jsonl"}
        data = await answered(self._session, self.url, "/batches", body, headers, max(0.0, deadline - time.monotonic()))
        receipt = msgspec.json.decode(data, type=Receipt)
        check_receipt(receipt, self.log_key, sent)
        return receipt

    async def _origin(self, deadline: float) -> str:
        """Returns the origin batches are signed for; without one given, the first line of the
        service's checkpoint (a server naming another log gets batches that verify only there),
        asked again until `deadline` while the service cannot be reached.

        :raises SendError: when the service has no checkpoint to give, or stays unreachable.
        """
        assert self._session is not None, "use the client as `async with Client(...)`"
        attempt = 0
        while self.origin is None:
            try:
                async with self._session.get(self.url + "/checkpoint") as response:
                    data = await response.read()
                    if response.status == 200:
                        self.origin = note_identity(data.decode(errors="replace"))
                        break
                    if response.status not in RETRY_STATUSES:
                        raise _refusal(response.status, data)
                    last = _refusal(response.status, data)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
                last = outage(self.url, self.retry_for, exc)
            if time.monotonic() + _backoff(attempt) > deadline:
                raise last
            await asyncio.sleep(_backoff(attempt))
            attempt += 1
        return self.origin


async def answered(session: aiohttp.ClientSession, url: str, path: str, body: bytes, headers: dict[str, str], retry_for: float) -> bytes:
    """POSTs a body (the very same bytes each time) until the service answers 200 or refuses it for
    good, for up to `retry_for` seconds while it cannot be reached or answers a retryable status
    (after its Retry-After, else a growing back-off); returns the 200's body.

    :raises SendError: the refusal, or an outage when the service stayed unreachable.
    """
    deadline = time.monotonic() + retry_for
    attempt = 0
    while True:
        retry_after = None
        try:
            async with session.post(url + path, data=body, headers=headers) as response:
                data = await response.read()
                if response.status == 200:
                    return data
                retry = response.headers.get("Retry-After")
                retry_after = float(retry) if retry and retry.isdigit() else None
                last = _refusal(response.status, data)
                if response.status not in RETRY_STATUSES:
                    raise last
        except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
            last = outage(url, retry_for, exc)
        wait = retry_after if retry_after is not None else _backoff(attempt)
        if time.monotonic() + wait > deadline:
            raise last
        await asyncio.sleep(wait)
        attempt += 1


def outage(url: str, retry_for: float, exc: BaseException) -> SendError:
    """Returns the error of a service that could not be reached (an outage, not a refusal: status 0)."""
    return SendError(0, "unreachable", f"服务不可达 / {url} could not be reached for {retry_for:g} s (an outage, not a refusal; "
                     f"the last error: {type(exc).__name__}: {exc})")


def _backoff(attempt: int) -> float:
    return min(5.0, 0.05 * 2 ** attempt) * (0.5 + random.random())


def _refusal(status: int, data: bytes) -> SendError:
    try:
        body = msgspec.json.decode(data)
        line = body.get("line")
        return SendError(status, body.get("error", "refused"), body.get("message", ""), line if isinstance(line, int) else None)
    except (msgspec.DecodeError, AttributeError):
        return SendError(status, "refused", data[:200].decode(errors="replace"))


async def change_source(url: str, log_signer: Signer, change: dict[str, Any], retry_for: float = RETRY_FOR) -> dict[str, Any]:
    """Registers or revokes a source on a running service, signed with the log's own key (sent
    again through a restart, as batches are: the same registration again is acknowledged as done).

    :raises SendError: when the service refuses it, or stays unreachable for `retry_for` seconds.
    """
    body = msgspec.json.encode(change)
    line = sign_batch(log_signer, body, log_identity(log_signer.name, log_signer.verifier.key_id))  # the scheme of batches, under the log's own key
    async with aiohttp.ClientSession() as session:
        data = await answered(session, url.rstrip("/"), "/sources", body, {SIGNATURE_HEADER: line}, retry_for)
    result: dict[str, Any] = msgspec.json.decode(data)
    return result
