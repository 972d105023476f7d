"""The projection kept beside the log (`derived/projection/`), so that `standings`, `query`,
`appeals` and `export` on a log that did not change since the last of them cost one read of the
log, not a replay of the season.

What is kept: each projection table as an Arrow IPC file (zstd), `events` without its `body` (the
log's own bytes, joined again on opening), the tables the database builds from them at load (the
`CREATE TABLE`s of `audit/sql/views/`), the engines' findings, and the entries of the tournament
events. The state (see `audit.signed_state`) names the code that derived them, the log's size and the
SHA-256 of its entries (bytes and boundaries), and each file's name and SHA-256; it is signed by
the log's key. A kept projection is used only when all of that holds for the log as read now: a
log that grew, an engine that changed, a file altered or a state not signed by the log's key, and
the projection is built again (and kept again, where the key can be read).

Before a projection is built, the entries read are checked against the newest signed checkpoint
(`ledger.reader.LogReader.check`): an entry edited in the signed range is refused, never projected. The state
records that checkpoint, and a kept projection is used only while it is still the newest: its
entries, the same bytes, were checked against it when it was kept.

The files are named by their content, so two commands keeping a projection at once never write
the same name with different bytes; the state is replaced last, whole. `audit` never reads them: a
certification derives everything from the log.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Callable
from pathlib import Path

import msgspec
import pyarrow as pa
import pyarrow.compute as pc

from audit.db import AuditDB
from audit.projection import Projection, events_table, project
from audit.signed_state import StateRefused, code_fingerprint, load_signer, open_state, sign_state
from ledger import Checkpoint, LedgerError, LogReader
from ledger.derived import DerivedFiles
from ledger.reader import StoredEntries
from replay.protocol import Finding
from schemas import decode_stored_array

NAME = "projection"
STATE = "state"
KIND = "matchledger-projection/1"
BUILT = "built."
"""The prefix of the tables the database built at load (`audit/sql/views/`), kept beside the projection's."""
FINDINGS, TOURNAMENT = "engine.findings", "engine.tournament_entries"
"""The engines' findings (JSON) and the entries of the tournament events (int64), kept beside the tables."""
_IPC = pa.ipc.IpcWriteOptions(compression="zstd")


class Kept(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a kept projection was derived from, and its files."""

    kind: str
    code: str
    size: int
    log_sha256: str
    files: dict[str, str]
    """The file of each table and of FINDINGS and TOURNAMENT: its name, then its SHA-256."""
    sizes: dict[str, int]
    """Each file's size (checked before it is read: a file replaced by a huge one is not read)."""
    signed: tuple[int, str]
    """The signed checkpoint (size, root hex) the entries were checked against before they were projected."""


def projection_of(root: Path, log: StoredEntries,
                  on_game: Callable[[int], None] | None = None) -> tuple[Projection, AuditDB, str, Checkpoint]:
    """Returns the projection of a ledger's log and its database (kept in the ledger and used again
    while the log and the code do not change), how they were had (reused, or built and why), and the
    signed checkpoint the entries were checked against.

    :raises LedgerCorrupt: when the entries read do not give the newest signed root.
    """
    digest = log_digest(log)
    signed = LogReader(root).signed()
    try:
        projection, built = load(DerivedFiles(root, NAME), root, log, digest, signed)
        return projection, AuditDB(projection.tables(), built=built), "reused", signed
    except StateRefused as exc:
        why = str(exc)
    except OSError as exc:  # a link or a directory where a file belongs: what someone else put there is not read
        why = f"its files cannot be read ({exc})"
    signed = LogReader(root).check(log)  # before the replay: an edited signed range is refused, never shown
    projection = project(log, on_game)
    db = AuditDB(projection.tables())
    try:
        keep(DerivedFiles(root, NAME), root, len(log), digest, projection, db.built_tables(), signed)
    except (OSError, LedgerError) as exc:  # a read-only ledger, or no key: nothing is kept
        return projection, db, f"built ({why}); not kept: {exc}", signed
    return projection, db, f"built ({why})", signed


def log_digest(log: StoredEntries) -> str:
    """Returns the SHA-256 of a log's entries: their bytes, then their boundaries."""
    digest = hashlib.sha256(log.data)
    digest.update(memoryview(log.ends).cast("B"))
    return digest.hexdigest()


def keep(files: DerivedFiles, root: Path, size: int, digest: str, projection: Projection, built: dict[str, pa.Table],
         signed: Checkpoint) -> None:
    """Writes a projection's files and the tables its database built (`AuditDB.built_tables`), then
    their signed state, naming the checkpoint its entries were checked against (files no state names are removed).

    :raises LedgerError: when the ledger's key cannot be read.
    :raises OSError: when the files cannot be written.
    """
    signer = load_signer(root)  # first: without the key nothing is written
    tables = projection.tables()
    named: dict[str, bytes] = {name: _ipc(table.drop_columns(["body"]) if name == "events" else table) for name, table in tables.items()}
    named.update({f"{BUILT}{name}": _ipc(table) for name, table in built.items()})
    named[FINDINGS] = msgspec.json.encode(projection.findings)
    named[TOURNAMENT] = array("q", _tournament_entries(tables["events"])).tobytes()
    kept = {name: f"{name}-{hashlib.sha256(data).hexdigest()}" for name, data in named.items()}
    for name, data in named.items():
        files.replace(kept[name], data)
    state = msgspec.json.encode(Kept(kind=KIND, code=code_fingerprint(), size=size, log_sha256=digest, files=kept,
                                     sizes={name: len(data) for name, data in named.items()},
                                     signed=(signed.size, signed.root.hex())))
    files.replace(STATE, sign_state(signer, KIND, state))
    for stale in set(files.names()) - {STATE, *kept.values()}:
        files.remove(stale)


def load(files: DerivedFiles, root: Path, log: StoredEntries, digest: str, signed: Checkpoint) -> tuple[Projection, dict[str, pa.Table]]:
    """Returns the kept projection of this log and the tables its database built: its entries, the
    same bytes as when it was kept, were checked then against `signed`, the newest checkpoint now.

    :raises StateRefused: naming why it cannot be used.
    """
    try:
        kept = msgspec.json.decode(open_state(root, KIND, files.read(STATE)), type=Kept)
    except msgspec.DecodeError as exc:
        raise StateRefused(f"the state is unreadable ({exc})") from None
    if kept.code != code_fingerprint():
        raise StateRefused(f"it was derived by other code ({kept.code}; this is {code_fingerprint()})")
    if (kept.size, kept.log_sha256) != (len(log), digest):
        raise StateRefused(f"it was derived from another log (size {kept.size}; the log holds {len(log)} entries)")
    if tuple(kept.signed) != (signed.size, signed.root.hex()):
        raise StateRefused(f"its entries were checked against checkpoint {kept.signed[0]}; the newest is {signed.size}")
    held = {}
    for name, file in kept.files.items():
        data = files.read(file) if files.size(file) == kept.sizes.get(name) else b""
        if f"{name}-{hashlib.sha256(data).hexdigest()}" != file:
            raise StateRefused(f"its {name} file is missing or does not match its state (SHA-256)")
        held[name] = data
    tables = {name: pa.ipc.open_file(pa.py_buffer(data)).read_all() for name, data in held.items() if name not in (FINDINGS, TOURNAMENT)}
    tables["events"] = events_table(tables["events"], log)
    built = {name[len(BUILT):]: tables.pop(name) for name in list(tables) if name.startswith(BUILT)}
    tournament = array("q")
    tournament.frombytes(held[TOURNAMENT])
    return Projection(tables, findings=msgspec.json.decode(held[FINDINGS], type=list[Finding]),
                      tournament_events=decode_stored_array(log.json_array(tournament)) if tournament else []), built


def _ipc(table: pa.Table) -> bytes:
    """Returns a table as an Arrow IPC file (one dictionary per column: the file format keeps one)."""
    table = table.unify_dictionaries()
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema, options=_IPC) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


def _tournament_entries(events: pa.Table) -> list[int]:
    """Returns the entries of every tournament event (the tournament checks read them decoded)."""
    kinds = events["kind"].combine_chunks()
    codes = [code for code, name in enumerate(kinds.dictionary.to_pylist()) if name.startswith("tournament.")]
    return pc.filter(events["entry"], pc.is_in(kinds.indices, value_set=pa.array(codes, pa.int32()))).to_pylist()
