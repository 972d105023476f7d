"""The tamper-evident log: framed segments, an RFC 6962 Merkle tree stored as C2SP tlog-tiles,
signed checkpoints, a stream index and proofs.

This module is the ledger's facade: what most callers outside `ledger/` need (write, read through
the one reader, verify, prove, the keys and the errors). Everything else is imported from the
submodule that owns it (the live service's sources, group commit and tiles, witnessing, exports);
tests/test_one_reader.py pins these names, so that growing them is a decision.
"""

from ledger.anchor import pinned_key
from ledger.batch import Pending
from ledger.bundle import BundleError, EvidenceBundle, check_bundle, prove
from ledger.checkpoints import Checkpoint, newest_checkpoint
from ledger.errors import LedgerCorrupt, LedgerError, LedgerNotFound
from ledger.notes import Signer, Verifier
from ledger.outputs import check_output, write_output
from ledger.reader import LogReader
from ledger.receipts import Receipt, check_receipt
from ledger.recorder import record
from ledger.store import AppendResult, Ledger, init, load_verifier
from ledger.verify import VerifyReport, verify

__all__ = [
    # write
    "AppendResult", "Ledger", "Pending", "init", "record",
    # read: the one reader (ledger/reader.py)
    "LogReader",
    # check and prove
    "BundleError", "Checkpoint", "EvidenceBundle", "Receipt", "VerifyReport", "check_bundle", "check_receipt", "newest_checkpoint",
    "prove", "verify",
    # keys
    "Signer", "Verifier", "load_verifier", "pinned_key",
    # outputs a command writes
    "check_output", "write_output",
    # errors
    "LedgerCorrupt", "LedgerError", "LedgerNotFound",
]
