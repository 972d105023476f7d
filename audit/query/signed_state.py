"""Signed states of derived files: how a file matchledger keeps beside the log (under `derived/`)
proves that the log's own key wrote it, and which code it was derived by.

Derived files save recomputing, never decide a verdict; but a tool that trusts them must not serve
what someone with write access to the ledger's files and no key put there. So each kind keeps a
state (a JSON object naming the log it came from and the SHA-256 of its files) followed by a C2SP
signed note, by the log's key, over the state's SHA-256. A state that does not verify is not used.
The key it is checked with is the trust anchor's (ledger/anchor.py): the pinned key, or `signer.pub`
once it is found to be `signer.key`'s where that is readable; never a key that merely lies there.

`code_fingerprint` names the code that derived the files: the SHA-256 of the source of every module
whose change changes what is derived (the engines, the event contract, the projection), so that an
upgraded engine rebuilds them even where the version number did not change.
"""

from __future__ import annotations

import functools
import hashlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from ledger import LedgerError, Signer, load_verifier
from ledger.errors import SignatureError
from ledger.layout import PRIVATE_KEY
from ledger.notes import sign_note, verify_note

_PACKAGE = Path(__file__).resolve().parents[2]
_DERIVING = ("replay", "schemas", "audit/query/sql", "audit/query/projection.py", "audit/query/projection_cache.py",
             "audit/query/arbitration.py", "audit/query/checks.py", "audit/query/db.py", "audit/live/auditor.py",
             "audit/certification/certify.py", "audit/certification/since.py", "audit/certification/scoped.py",
             "audit/query/tournament_checks.py", "replay/seating.py")
"""What derives the kept files (relative to the source tree): the engines, the contract, the SQL, the
projection, its extension and the incremental audit's state, and the live fold with the checks it
runs at a round close. A change in any of them rebuilds every kind of kept file (more often than each
kind needs, never less: an extension's code was missing here, so a change to it kept using files it
had not made)."""


class StateRefused(Exception):
    """A kept state that cannot be used; the message says why."""


def load_signer(root: Path) -> Signer:
    """Returns the ledger's signer, which signs kept states as it signs checkpoints.

    :raises LedgerError: when the ledger's private key cannot be read (then nothing is kept).
    """
    return Signer.load(root / PRIVATE_KEY)


def sign_state(signer: Signer, kind: str, state: bytes) -> bytes:
    """Returns a state followed by its note, signed by the ledger's key: what a state file holds."""
    return state + b"\n" + sign_note(_body(signer.name, kind, state), signer).encode()


def open_state(root: Path, kind: str, held: bytes) -> bytes:
    """Returns the state of a state file whose note, by the ledger's key, signs it.

    :raises StateRefused: naming why it cannot be used (missing, not signed by the log's key, …).
    """
    if not held:
        raise StateRefused("nothing was kept yet")
    state, _, note = held.partition(b"\n")
    try:
        verifier = load_verifier(root)
        if verify_note(note.decode(), verifier) != _body(verifier.name, kind, state):
            raise StateRefused("its signature is over another state")
    except (SignatureError, UnicodeDecodeError) as exc:
        raise StateRefused(f"it is not signed by the log's key ({exc})") from None
    except LedgerError as exc:
        raise StateRefused(f"the log's key cannot be read ({exc})") from None
    return state


def _body(origin: str, kind: str, state: bytes) -> str:
    """The body of the note that signs a state: the log's origin, the kind of state, its SHA-256."""
    return f"{origin}\n{kind}\nsha256 {hashlib.sha256(state).hexdigest()}\n"


@functools.cache
def code_fingerprint() -> str:
    """Returns the package version and the SHA-256 of the source of every module that derives kept files."""
    digest = hashlib.sha256()
    for name in _DERIVING:
        path = _PACKAGE / name
        for source in sorted(p for p in path.rglob("*") if p.suffix in (".py", ".sql")) if path.is_dir() else [path] * path.is_file():
            digest.update(str(source.relative_to(_PACKAGE)).encode() + b"\0" + source.read_bytes() + b"\0")
    return f"{_version()}+{digest.hexdigest()[:16]}"


def _version() -> str:
    try:
        return version("matchledger")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree that is not installed
        return "unknown"
