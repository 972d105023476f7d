"""The tamper-evident log: framed segments, an RFC 6962 Merkle tree stored as C2SP tlog-tiles,
signed checkpoints, a stream index and proofs.

This module is the ledger's facade: the other packages use only what it exports.
"""

from ledger.bundle import (
    BundleCheck,
    BundleError,
    ConsistencyProof,
    EvidenceBundle,
    check_bundle,
    check_consistency,
    load_bundle,
    prove,
    prove_consistency,
)
from ledger.checkpoints import Checkpoint, newest_checkpoint
from ledger.commitments import check_heads
from ledger.errors import CheckpointError, LedgerCorrupt, LedgerError, LedgerLocked, LedgerNotFound, SequenceError, SignatureError
from ledger.export import export_jsonl, export_tiles
from ledger.frames import StoredEntries, read_entries
from ledger.index import check_index
from ledger.layout import CONFIG, PRIVATE_KEY, PUBLIC_KEY, load_config
from ledger.notes import Signer, Verifier, sign_note, verify_note
from ledger.outputs import OutputRefused, check_output, write_output
from ledger.read import read_events, read_stream_events
from ledger.recorder import record
from ledger.store import AppendResult, Ledger, Pending, init, load_verifier
from ledger.tamper import flip_byte
from ledger.verify import VerifyReport, verify

__all__ = [
    "CONFIG", "PRIVATE_KEY", "PUBLIC_KEY", "AppendResult", "BundleCheck", "BundleError", "Checkpoint", "CheckpointError", "ConsistencyProof",
    "EvidenceBundle", "Ledger", "LedgerCorrupt", "LedgerError", "LedgerLocked", "LedgerNotFound", "OutputRefused", "Pending",
    "SequenceError", "SignatureError", "Signer", "StoredEntries", "Verifier", "VerifyReport", "check_bundle", "check_consistency", "check_heads",
    "check_index", "check_output", "export_jsonl", "export_tiles", "flip_byte", "init", "load_bundle", "load_config", "load_verifier",
    "newest_checkpoint", "prove", "prove_consistency", "read_entries", "read_events", "read_stream_events", "record", "sign_note",
    "verify", "verify_note", "write_output",
]
