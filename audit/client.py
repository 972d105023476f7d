"""The Python client of the live service: signs batches with a source's key, sends them with
retries that are safe to repeat, and checks every receipt before trusting it.

A retry re-sends the very same bytes with the very same signature: the service knows the batch by
its body's digest and answers with the receipt it gave the first time, so an event lands once
however many times a lost answer makes the client send it.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from typing import Any

import aiohttp
import msgspec

from ledger import SIGNATURE_HEADER, Receipt, Signer, Verifier, check_receipt, sign_batch
from schemas import decode_line, encode
from schemas.envelope import Event

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


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
    without it only the proofs against the root the receipt's checkpoint states.
    """

    def __init__(self, url: str, signer: Signer, log_key: Verifier | None = None, attempts: int = 8,
                 timeout: float = 30.0, session: aiohttp.ClientSession | None = None) -> None:
        self.url = url.rstrip("/")
        self.signer = signer
        self.log_key = log_key
        self.attempts = attempts
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

        :raises SendError: when the service refuses it, or stays unreachable for every attempt.
        """
        body = batch_body(events)
        return await self.send_body(body, [line for line in body.split(b"\n") if line])

    async def send_body(self, body: bytes, sent: Sequence[bytes] | None = None) -> Receipt:
        """Sends a body already made (retries re-send exactly it) and returns its checked receipt.

        :raises SendError: when the service refuses it, or stays unreachable for every attempt.
        """
        headers = {SIGNATURE_HEADER: sign_batch(self.signer, body), "Content-Type": "application/jsonl"}
        last = SendError(0, "unreachable", f"no answer from {self.url}")
        for attempt in range(self.attempts):
            try:
                status, data, retry_after = await self._post("/batches", body, headers)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError) as exc:
                last = SendError(0, "unreachable", f"{self.url}: {type(exc).__name__}: {exc}")
                await asyncio.sleep(_backoff(attempt))
                continue
            if status == 200:
                receipt = msgspec.json.decode(data, type=Receipt)
                check_receipt(receipt, self.log_key, sent)
                return receipt
            last = _refusal(status, data)
            if status not in RETRY_STATUSES:
                raise last
            await asyncio.sleep(retry_after if retry_after is not None else _backoff(attempt))
        raise last

    async def _post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, bytes, float | None]:
        assert self._session is not None, "use the client as `async with Client(...)`"
        async with self._session.post(self.url + path, data=body, headers=headers) as response:
            data = await response.read()
            retry = response.headers.get("Retry-After")
            return response.status, data, float(retry) if retry and retry.isdigit() else None


def _backoff(attempt: int) -> float:
    return min(5.0, 0.05 * 2 ** attempt) * (0.5 + random.random())


def _refusal(status: int, data: bytes) -> SendError:
    try:
        body = msgspec.json.decode(data)
        line = body.get("line")
        return SendError(status, body.get("error", "refused"), body.get("message", ""), line if isinstance(line, int) else None)
    except (msgspec.DecodeError, AttributeError):
        return SendError(status, "refused", data[:200].decode(errors="replace"))


async def change_source(url: str, log_signer: Signer, change: dict[str, Any]) -> dict[str, Any]:
    """Registers or revokes a source on a running service, signed with the log's own key.

    :raises SendError: when the service refuses it.
    """
    body = msgspec.json.encode(change)
    line = sign_batch(log_signer, body)  # the scheme of batches, under the log's own key name
    async with aiohttp.ClientSession() as session:
        async with session.post(url.rstrip("/") + "/sources", data=body, headers={SIGNATURE_HEADER: line}) as response:
            data = await response.read()
            if response.status != 200:
                raise _refusal(response.status, data)
            result: dict[str, Any] = msgspec.json.decode(data)
            return result
