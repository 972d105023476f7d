"""Errors of the ledger layer."""

from __future__ import annotations

from schemas.codec import at_line


class LedgerError(Exception):
    """Base of every ledger error; the CLI prints its message and exits 1."""


class LedgerNotFound(LedgerError):
    """The directory holds no ledger (run `matchledger init`)."""


class LedgerLocked(LedgerError):
    """Another writer holds the ledger's exclusive lock."""


class LedgerCorrupt(LedgerError):
    """Stored data inside a checkpointed range is damaged; it is evidence and is never repaired."""

    def __init__(self, index: int | None, message: str) -> None:
        super().__init__(message if index is None else f"entry {index}: {message}")
        self.index, self.detail = index, message

    def __reduce__(self) -> tuple[type, tuple[int | None, str]]:  # what crosses to another process is made again whole
        return type(self), (self.index, self.detail)


class ForeignEntries(LedgerCorrupt):
    """Committed entries after the newest signed note carry no proof of origin by the writer: moved aside, never signed."""

    def __init__(self, message: str) -> None:
        super().__init__(None, message)

    def __reduce__(self) -> tuple[type, tuple[str]]:  # type: ignore[override]
        return type(self), (self.detail,)


class KeyFileError(LedgerError):
    """A signing or verifier key is missing, malformed or unsafely stored."""


class SignatureError(LedgerError):
    """A signed note does not verify against the key."""


class SequenceError(LedgerError):
    """An input event breaks the append rules: its sequence number is out of order or conflicts with
    a recorded event, it is over the size limit, or it is of the log's own kinds or streams;
    `reason` is a stable code (`seq-gap`, `seq-conflict`, `event-too-large`, `log-kind`, `log-stream`)."""

    def __init__(self, line: int, message: str, reason: str = "sequence") -> None:
        super().__init__(f"{at_line(line)}: {message}")
        self.line, self.detail, self.reason = line, message, reason

    def __reduce__(self) -> tuple[type, tuple[int, str, str]]:  # a worker process's refusal reaches its parent whole
        return type(self), (self.line, self.detail, self.reason)


class DiskError(LedgerError):
    """Writing or syncing a batch failed; nothing of that batch was acknowledged."""


class CheckpointError(LedgerError):
    """The entries were appended and made durable, but no checkpoint could be signed over them."""
