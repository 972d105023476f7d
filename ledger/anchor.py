"""The trust anchor: the public key a reader checks the log's signatures with.

A key lying in the ledger directory (`signer.pub`) is only as safe as the directory: an insider who
can write its files can put their own key there and re-sign every note. So a reader pins the key it
trusts (`--key PUB`, or `MATCHLEDGER_LOG_KEY`), and whatever is judged under a key taken from the
directory says so (unpinned). Where `signer.key` is readable (the operator's own machine), the
directory's `signer.pub` must be its public key.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ledger.errors import KeyFileError, LedgerCorrupt
from ledger.layout import PRIVATE_KEY, PUBLIC_KEY, load_config
from ledger.notes import Signer, Verifier

ENV = "MATCHLEDGER_LOG_KEY"
"""The setting that pins the log's key for every command (a `--key` option given to a command wins)."""
_pinned: list[Path] = []


@dataclass(frozen=True)
class LogKey:
    """The log's verifier key, where it was read, and whether the reader pinned it."""

    verifier: Verifier
    path: Path
    pinned: bool

    def record(self) -> dict[str, object]:
        """Returns what a JSON output says of the key."""
        return {"name": self.verifier.name, "key_id": self.verifier.key_id.hex(), "pinned": self.pinned, "from": str(self.path)}


@contextmanager
def pinned_key(path: Path | None) -> Iterator[None]:
    """Pins the log's key for what runs inside (a command's `--key`); None leaves the setting as it is."""
    if path is None:
        yield
        return
    _pinned.append(path)
    try:
        yield
    finally:
        _pinned.pop()


def log_key(root: Path) -> LogKey:
    """Returns the key a ledger's signatures are checked with: the pinned one, else the directory's.

    :raises LedgerNotFound: when `root` is not a ledger.
    :raises KeyFileError: when the key file is missing or malformed.
    :raises LedgerCorrupt: when `signer.pub` is not the public key of a readable `signer.key`, or not
        the pinned key.
    """
    load_config(root)  # a path that is not a ledger is named as such, before any key
    pin = _pin()
    held = _directory_key(root)
    if pin is None:
        if held is None:
            raise KeyFileError(f"缺少日志公钥 / verifier key {root / PUBLIC_KEY} is missing; give the log's key with --key PUB or {ENV}")
        return LogKey(held, root / PUBLIC_KEY, pinned=False)
    key = Verifier.load(pin)
    if held is not None and (held.name, held.public) != (key.name, key.public):
        raise LedgerCorrupt(None, f"{PUBLIC_KEY} 不是固定的日志公钥 / the ledger's {PUBLIC_KEY} (id {held.key_id.hex()}) is not "
                            f"the pinned key {pin} (id {key.key_id.hex()}): it was replaced")
    return LogKey(key, pin, pinned=True)


def check_writer_key(signer: Signer) -> None:
    """Refuses to let a writer sign with a `signer.key` that is not the pinned log key: an insider who
    replaced the key pair and re-signed every note would get the operator's writer to sign on with it.

    :raises LedgerCorrupt: when a key is pinned and `signer.key` is not its private key.
    """
    pin = _pin()
    if pin is None:
        return
    key, own = Verifier.load(pin), signer.verifier
    if (key.name, key.public) != (own.name, own.public):
        raise LedgerCorrupt(None, f"{PRIVATE_KEY} 不是固定的日志公钥的私钥，拒绝签署 / the ledger's {PRIVATE_KEY} (id {own.key_id.hex()}) is "
                            f"not the private key of the pinned key {pin} (id {key.key_id.hex()}): it was replaced; nothing is signed")


def _pin() -> Path | None:
    """Returns the pinned key's file: the command's `--key`, else the setting, else None."""
    return _pinned[-1] if _pinned else (Path(os.environ[ENV]) if os.environ.get(ENV) else None)


def _directory_key(root: Path) -> Verifier | None:
    """Returns the directory's `signer.pub` (None when there is none), once checked against a
    readable `signer.key`.

    :raises LedgerCorrupt: when they are not one key pair.
    """
    path = root / PUBLIC_KEY
    if not path.exists() and not path.is_symlink():
        return None
    held = Verifier.load(path)
    own = _own_key(root)
    if own is not None and (own.name, own.public) != (held.name, held.public):
        raise LedgerCorrupt(None, f"{PUBLIC_KEY} 与 {PRIVATE_KEY} 不是一对密钥 / {path} (id {held.key_id.hex()}) is not the public "
                            f"key of {root / PRIVATE_KEY} (id {own.key_id.hex()}): it was replaced")
    return held


def _own_key(root: Path) -> Verifier | None:
    """Returns the public key of the ledger's `signer.key` where this process can read it."""
    path = root / PRIVATE_KEY
    if not os.access(path, os.R_OK):
        return None
    try:
        return Signer.load(path).verifier
    except KeyFileError:  # unsafely stored or malformed: the writer refuses it; it anchors nothing
        return None
