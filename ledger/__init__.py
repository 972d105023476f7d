"""The tamper-evident log: framed segments, an RFC 6962 Merkle tree stored as C2SP tlog-tiles,
signed checkpoints, a stream index and proofs.

This module is the ledger's facade: the other packages use only what it exports.
"""

from ledger.batch import Pending
from ledger.bundle import (
    BundleCheck,
    BundleError,
    ConsistencyProof,
    EvidenceBundle,
    check_bundle,
    check_consistency,
    prove,
    prove_consistency,
    verify_senders,
)
from ledger.checkpoints import Checkpoint, checkpoint_sizes, newest_checkpoint, stored_checkpoint
from ledger.commitments import check_heads
from ledger.derived import DerivedFiles, indexed_size, read_stream_entries, read_streams, tree_root
from ledger.errors import CheckpointError, LedgerCorrupt, LedgerError, LedgerLocked, LedgerNotFound, SequenceError, SignatureError
from ledger.export import export_jsonl, export_tiles
from ledger.fastscan import verify_each, verify_signatures
from ledger.frames import StoredEntries, read_entries
from ledger.index import check_index
from ledger.layout import CONFIG, PRIVATE_KEY, PUBLIC_KEY, load_config
from ledger.notes import Signer, Verifier, cosigners, sign_note, verify_note
from ledger.outputs import OutputDirectory, OutputRefused, check_output, output_directory, stream_file_name, write_output
from ledger.read import read_events, read_stream_events
from ledger.receipts import KeptNodes, ProvedEntry, Receipt, Subtrees, build_receipt, check_receipt, load_evidence, prove_entry
from ledger.recorder import record
from ledger.repair import RepairReport, repair
from ledger.sources import HEADER as SIGNATURE_HEADER
from ledger.sources import (
    AlreadyRegistered,
    Source,
    SourceBook,
    SourceRefused,
    bad_signature,
    change_sources,
    compress_runs,
    expand_runs,
    load_source_book,
    now_ms,
    parse_signature,
    read_verifier_key,
    registration,
    revocation,
    sign_batch,
    signed_message,
)
from ledger.store import AppendResult, IndexJob, Ledger, init, load_verifier
from ledger.tamper import flip_byte
from ledger.tiles import TileReader
from ledger.tlog import EntryReader, TilePathError, covered, entry_bundle, hash_tile, parse_tile_path
from ledger.verify import VerifyReport, verify
from ledger.witness import (
    CONSISTENCY_FORMAT,
    ConsistencyFile,
    Observation,
    WitnessError,
    check_growth,
    consistency_file,
    decode_consistency,
    encode_consistency,
    observe,
    read_checkpoint_note,
)

__all__ = [
    "CONFIG", "PRIVATE_KEY", "PUBLIC_KEY", "AppendResult", "BundleCheck", "BundleError", "Checkpoint", "CheckpointError", "ConsistencyProof",
    "EvidenceBundle", "Ledger", "LedgerCorrupt", "LedgerError", "LedgerLocked", "LedgerNotFound", "OutputRefused", "Pending",
    "SequenceError", "SignatureError", "Signer", "StoredEntries", "Verifier", "VerifyReport", "check_bundle", "check_consistency", "check_heads",
    "check_index", "check_output", "export_jsonl", "export_tiles", "flip_byte", "init", "load_config", "load_verifier",
    "newest_checkpoint", "prove", "prove_consistency", "read_entries", "read_events", "read_stream_events", "record", "sign_note",
    "verify", "verify_note", "write_output",
    # witnessing: consistency files and the last checkpoint seen
    "CONSISTENCY_FORMAT", "ConsistencyFile", "Observation", "WitnessError", "check_growth", "consistency_file", "cosigners",
    "decode_consistency", "encode_consistency", "observe", "read_checkpoint_note",
    # the live service (issue 14): sources, signed batches, receipts, the tlog-tiles read side
    "SIGNATURE_HEADER", "EntryReader", "ProvedEntry", "Receipt", "Source", "SourceBook", "SourceRefused", "Subtrees", "TilePathError", "TileReader",
    "build_receipt", "change_sources", "check_receipt", "checkpoint_sizes", "compress_runs", "expand_runs", "covered", "entry_bundle", "hash_tile",
    "load_evidence", "load_source_book", "now_ms", "parse_tile_path", "prove_entry", "read_verifier_key", "registration", "revocation",
    "bad_signature", "parse_signature", "sign_batch", "verify_senders", "signed_message", "stored_checkpoint", "KeptNodes",
    "verify_signatures", "verify_each", "IndexJob", "repair", "RepairReport",
    "DerivedFiles", "indexed_size", "read_stream_entries", "read_streams", "tree_root",  # derived files the service keeps (live findings)
    "OutputDirectory", "output_directory", "stream_file_name",  # directory outputs (exports): written fresh, renamed into place
    "AlreadyRegistered",  # a registration sent again: acknowledged, nothing appended
]
