"""The tamper-evident log: framed segments, an RFC 6962 Merkle tree stored as C2SP tlog-tiles,
signed checkpoints, a stream index and proofs.

This module is the ledger's facade: the other packages use only what it exports.
"""

from typing import TYPE_CHECKING, Any

from ledger.anchor import ENV as LOG_KEY_ENV
from ledger.anchor import LogKey, log_key, pinned_key
from ledger.batch import Pending
from ledger.bundle import BundleError, ConsistencyProof, EvidenceBundle, check_bundle, check_consistency, prove, prove_consistency, verify_senders
from ledger.checkpoints import Checkpoint, checkpoint_sizes, newest_checkpoint, stored_checkpoint
from ledger.commitments import check_heads
from ledger.derived import DerivedFiles, indexed_size, read_streams, tree_root
from ledger.errors import CheckpointError, LedgerCorrupt, LedgerError, LedgerLocked, LedgerNotFound, SequenceError, SignatureError
from ledger.export import export_jsonl, export_tiles
from ledger.fastscan import verify_each
from ledger.frames import StoredEntries, read_entries, signed_extent, signed_size
from ledger.index import check_index
from ledger.layout import CONFIG, PRIVATE_KEY, PUBLIC_KEY, load_config
from ledger.notes import Signer, Verifier, cosigners, sign_note, verify_note
from ledger.outputs import OutputDirectory, OutputRefused, check_output, output_directory, stream_file_name, write_output
from ledger.read import read_events, read_stream_events
from ledger.receipts import KeptNodes, ProvedEntry, Receipt, Subtrees, check_receipt, load_evidence, prove_entry
from ledger.recorder import record
from ledger.repair import repair
from ledger.signed import check_signed, newest_signed, signed_events, signed_stream
from ledger.sources import HEADER as SIGNATURE_HEADER
from ledger.sources import (
    AlreadyRegistered,
    Source,
    SourceBook,
    SourceRefused,
    change_sources,
    log_identity,
    note_identity,
    parse_signature,
    read_verifier_key,
    registration,
    revocation,
    sign_batch,
    signature_refusal,
    signed_message,
)
from ledger.store import AppendResult, Ledger, init, load_verifier
from ledger.tiles import TileReader
from ledger.tlog import EntryReader, TilePathError, covered, entry_bundle, hash_tile, parse_tile_path
from ledger.verify import VerifyReport, verify
from ledger.witness import (
    CONSISTENCY_FORMAT,
    ConsistencyFile,
    WitnessError,
    check_growth,
    consistency_file,
    consistency_from_tiles,
    decode_consistency,
    encode_consistency,
    observe,
    read_checkpoint_note,
)

if TYPE_CHECKING:  # imported on first use (`__getattr__`)
    from ledger.group_commit import Batch, Change, Refusal, Writer, digest_of, refusal_of

__all__ = [
    "CONFIG", "PRIVATE_KEY", "PUBLIC_KEY", "AppendResult", "BundleError", "Checkpoint", "CheckpointError", "ConsistencyProof",
    "EvidenceBundle", "Ledger", "LedgerCorrupt", "LedgerError", "LedgerLocked", "LedgerNotFound", "OutputRefused", "Pending",
    "SequenceError", "SignatureError", "Signer", "StoredEntries", "Verifier", "VerifyReport", "check_bundle", "check_consistency", "check_heads",
    "check_index", "check_output", "export_jsonl", "export_tiles", "init", "load_config", "load_verifier",
    "newest_checkpoint", "prove", "prove_consistency", "read_entries", "read_events", "read_stream_events", "record", "sign_note",
    "verify", "verify_note", "write_output",
    # witnessing: consistency files and the last checkpoint seen
    "CONSISTENCY_FORMAT", "ConsistencyFile", "WitnessError", "check_growth", "consistency_file", "consistency_from_tiles", "cosigners",
    "decode_consistency", "encode_consistency", "observe", "read_checkpoint_note",
    # the live service's one writer (group commit) and its refusals
    "Batch", "Change", "Refusal", "Writer", "digest_of", "refusal_of",
    # the live service (issue 14): sources, signed batches, receipts, the tlog-tiles read side
    "SIGNATURE_HEADER", "EntryReader", "ProvedEntry", "Receipt", "Source", "SourceBook", "SourceRefused", "Subtrees", "TilePathError", "TileReader",
    "change_sources", "check_receipt", "covered", "entry_bundle", "hash_tile",
    "load_evidence", "parse_tile_path", "prove_entry", "read_verifier_key", "registration", "revocation", "log_identity", "note_identity",
    "parse_signature", "sign_batch", "signature_refusal", "verify_senders", "signed_message", "stored_checkpoint", "checkpoint_sizes", "KeptNodes",
    "verify_each", "repair",
    "DerivedFiles", "indexed_size", "read_streams", "tree_root",  # derived files the service keeps (live findings)
    "signed_extent", "signed_size",  # nothing unsigned counts: readers read to the newest signed checkpoint
    "LOG_KEY_ENV", "LogKey", "log_key", "pinned_key",  # the trust anchor: the pinned log key (issue 28.4)
    "check_signed", "newest_signed", "signed_events", "signed_stream",  # readers check what they read against the signed tree (issue 28.6)
    "OutputDirectory", "output_directory", "stream_file_name",  # directory outputs (exports): written fresh, renamed into place
    "AlreadyRegistered",  # a registration sent again: acknowledged, nothing appended
]

_GROUP_COMMIT = frozenset({"Batch", "Change", "Refusal", "Writer", "digest_of", "refusal_of"})


def __getattr__(name: str) -> Any:
    """Gives the live service's writer on first use: it brings asyncio and threads, which no other
    command needs (60 ms of every command's start)."""
    if name in _GROUP_COMMIT:
        from ledger import group_commit

        return getattr(group_commit, name)
    raise AttributeError(f"module 'ledger' has no attribute {name!r}")
