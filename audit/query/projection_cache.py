"""The projection kept beside the log (`derived/projection/`), so that `standings`, `query`,
`appeals` and `export` cost what changed since the last of them, not a replay of the season.

What is kept: each projection table as an Arrow IPC file (zstd), `events` without its `body` (the
log's own bytes), the tables the database builds from them at load (the `CREATE TABLE`s of
`audit/query/sql/views/`), the engines' findings and their places in the log, and the stored bytes of the
few entries the projection decodes beside the games (every entry of a stream that is no game's,
the arbitration events, the games' openings), with each one's kind and stream. A table whose kept
rows lead an extension's unchanged (`events`, `steps`, a new game's `games` and `seats`, the
per-stream built tables), and the held bytes, keep their files: what the extension adds is one more
part beside them (up to `MAX_PARTS`). The state (see `audit.query.signed_state`) names the code
that derived them, the signed checkpoint (size, root) the entries were checked against, that
tree's compact range (its right frontier), and each file's name and SHA-256; it is signed by the
log's key. Nothing unsigned is projected: the kept projection is of the signed entries only.

- The newest checkpoint is the kept one: the projection is used as kept, without reading the log.
- A newer checkpoint: the projection is extended. Only the new entries are read; their leaf hashes,
  appended to the kept frontier, must give the new checkpoint's root, which proves the kept entries
  a prefix of the log signed now. The games they touch are folded again (a game under way reads its
  earlier entries through the stream index, each proved in the kept tree), their rows replaced, the
  tournaments, arbitration and orphans tabled again from the kept entries, and the database's
  per-stream tables (claims, timings) patched stream by stream; the rest it builds at load by SQL.
- Anything else (other code, a file altered, a state not signed by the log's key, a signed prefix
  that changed) and the projection is built from the whole log, checked first, saying why.

`events.body` is read only when asked for (`Projection.body`): the whole log, checked against the
kept checkpoint. The files are named by their content, so two commands keeping a projection at
once never write the same name with different bytes; the state is replaced last, whole. `audit`
never reads them: a certification derives everything from the log.
"""

from __future__ import annotations

import hashlib
import heapq
import os
import stat
from array import array
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import msgspec
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds

from audit.query.arbitration import KINDS as ARBITRATION_KINDS
from audit.query.arbitration import RulingSigners
from audit.query.db import AuditDB, per_stream_rows
from audit.query.kept_read import batches, count_rows, matching, read, rows_without
from audit.query.projection import (
    GAME_OPENER,
    HELD_KINDS,
    Held,
    OnDisk,
    Projection,
    _GameRows,
    _steps_table,
    assemble_others,
    events_of_steps,
    heads_table,
    project,
    sources,
)
from audit.query.signed_state import StateRefused, code_fingerprint, load_signer, open_state, sign_state
from audit.query.spill import Spill
from ledger import Checkpoint, LedgerCorrupt, LedgerError, LogReader
from ledger.derived import DerivedFiles, HashingFile
from ledger.fastscan import extend, leaf_hashes
from ledger.frames import decode_keys
from ledger.merkle import CompactRange, ProofError, inclusion_proof, leaf_hash, verify_inclusion
from ledger.reader import StoredEntries
from ledger.tiles import TileReader
from replay.protocol import Finding
from replay.run import replay_game
from schemas import decode_stored_array
from schemas.common import GameStarted

NAME = "projection"
STATE = "state"
KIND = "matchledger-projection/2"
BUILT = "built."
"""The prefix of the tables the database built at load (`audit/query/sql/views/`), kept beside the projection's."""
FINDINGS, PLACES, TOURNAMENT = "engine.findings", "engine.places", "engine.tournament_entries"
"""The findings (JSON), the log place of each engine finding among them (int64), and the entries of
the tournament events in the projection's order (int64), kept beside the tables."""
HELD, HELD_ENDS, HELD_ENTRIES, HELD_HEADS = "held.data", "held.ends", "held.entries", "held.heads"
"""The stored bytes of the entries the projection decodes beside the games, back to back, their
boundaries, their entry numbers (int64), and each one's kind and stream (JSON)."""
CLOCK = "competition_clock"
"""The database's table of the competition's latest event time: an extension takes the later of the
kept one and the new entries' (`_clock`) instead of having it built again from every event."""
_HELD_KINDS = HELD_KINDS
MAX_PARTS = 16
"""Parts a kept table may have (one per extension that only added rows); then it is written whole again."""
_IPC = pa.ipc.IpcWriteOptions(compression="zstd")
BATCH_ROWS = 1 << 16
"""Rows per record batch of a kept table: DuckDB scans a kept table from its file batch by batch, so
one batch is what a scan holds of it (issue 32.1)."""


class Kept(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a kept projection was derived from, and its files."""

    kind: str
    code: str
    files: dict[str, str]
    """The file of each table and of the other kept parts: its name, then its SHA-256."""
    sizes: dict[str, int]
    """Each file's size (checked before it is read: a file replaced by a huge one is not read)."""
    signed: tuple[int, str]
    """The signed checkpoint (size, root hex) the entries were checked against before they were projected."""
    frontier: list[str]
    """That tree's compact range (hex, left to right): the new entries' leaf hashes extend it to a newer root."""


class Named(Protocol):
    """What names kept files: each file's name (`name-sha256`) and size, by name (`Kept`, and the audit's state)."""

    @property
    def files(self) -> dict[str, str]: ...

    @property
    def sizes(self) -> dict[str, int]: ...


# -- reading the log: through the one reader (ledger/reader.py) -----------------------------------------

def _whole_log(root: Path) -> StoredEntries:
    """Returns the signed entries of the whole log in one buffer."""
    return LogReader(root).packed()


def _entries(root: Path, start: int, stop: int) -> Iterator[tuple[int, bytes]]:
    """Yields (index, stored bytes) of the signed entries start…stop−1, reading only the segments that hold them.

    :raises LedgerCorrupt: when the log does not hold them all.
    """
    at = start
    for at, data in LogReader(root).entries(start, stop - start):
        yield at, data
        at += 1
    if at < stop:
        raise LedgerCorrupt(at, f"the log ends at entry {at}; checkpoint {stop} signs {stop}")


def _stream_entries(root: Path, streams: list[str], size: int) -> dict[str, list[tuple[int, bytes]]]:
    """Returns each stream's (entry, stored bytes) among the first `size` entries, through the stream index."""
    return LogReader(root).streams(streams, size)


# -- the projection had ----------------------------------------------------------------------------

def projection_of(root: Path, log: StoredEntries | None = None, on_game: Callable[[int], None] | None = None,
                  body: bool = True) -> tuple[Projection, AuditDB, str, Checkpoint]:
    """Returns the projection of a ledger's signed entries and its database (kept in the ledger:
    used again, or extended by the entries signed since), how they were had (reused, extended, or
    built and why), and the signed checkpoint the entries were checked against. Without `body` the
    database's `events` has no `body` column (the projection reads it when asked: `Projection.body`),
    so nothing kept is read again from the log; `log`, when the caller read it already, is used.

    :raises LedgerCorrupt: when the entries read do not give the newest signed root.
    """
    signed = LogReader(root).signed()
    try:
        files = DerivedFiles(root, NAME)
        kept = _open(files, root)
        if kept.signed[0] > signed.size:
            raise StateRefused(f"it was derived at checkpoint {kept.signed[0]}; the newest is {signed.size}")
        projection, built, held = load(files, kept)
        if tuple(kept.signed) == (signed.size, signed.root.hex()):
            projection.body = _body_reader(root, kept.signed, log)
            return projection, database(projection, built, body), "reused", signed
        projection, built, frontier, held, new, kept_rows = extended(root, kept, held, projection, built, signed, on_game)
        origin = f"extended ({new} entries signed since checkpoint {kept.signed[0]})"
        projection.body = _body_reader(root, (signed.size, signed.root.hex()), log)
        db = database(projection, built, body)
        return projection, db, _kept(root, projection, db, signed, frontier, origin, held, (kept, kept_rows), built.tails), signed
    except StateRefused as exc:
        why = str(exc)
    except OSError as exc:  # a link or a directory where a file belongs: what someone else put there is not read
        why = f"its files cannot be read ({exc})"
    log = log if log is not None else _whole_log(root)
    signed, tree = _checked(root, log)  # before the replay: an edited signed range is refused, never shown
    projection = project(log, on_game, signers=RulingSigners.of(LogReader(root), len(log)))
    db = AuditDB(projection.sources(), holds=projection.arrow)
    return projection, db, _kept(root, projection, db, signed, tree, f"built ({why})", projection.held or log), signed


def database(projection: Projection, built: dict[str, pa.Table], body: bool, bodies: pa.Table | None = None) -> AuditDB:
    """Returns the database of a kept projection: `events` without `body` unless it is asked for,
    and then, with `bodies` (entry, body), only those entries' bytes, joined in DuckDB (`AuditDB`):
    `events` itself is scanned from its files, never read whole."""
    if body and bodies is None:
        projection.with_body()
    return AuditDB(sources(projection.arrow), built=sources(built), holds=(projection.arrow, built), bodies=bodies if body else None)


def _kept(root: Path, projection: Projection, db: AuditDB, signed: Checkpoint, tree: CompactRange, origin: str,
          log: StoredEntries | Held | None = None, before: tuple[Kept, dict[str, int]] | None = None,
          built_tails: Mapping[str, pa.Table] | None = None) -> str:
    """Keeps a projection; returns how it was had, with why it was not kept where it was not."""
    try:
        keep(DerivedFiles(root, NAME), root, projection, db.built_tables(), signed, tree, log, before, built_tails)
    except (OSError, LedgerError) as exc:  # a read-only ledger, or no key: nothing is kept
        return f"{origin}; not kept: {exc}"
    return origin


def _checked(root: Path, log: StoredEntries) -> tuple[Checkpoint, CompactRange]:
    """Checks that the entries read give the newest signed root; returns it and the tree's compact range.

    :raises LedgerCorrupt: naming the first changed entry when they do not.
    """
    signed = LogReader(root).signed()
    tree = tree_of(log, signed.size) if len(log) >= signed.size else CompactRange()
    if tree.size != signed.size or tree.root() != signed.root:
        LogReader(root).check(log)  # names the changed entry
        raise LedgerCorrupt(None, f"the log read does not give the root of checkpoint {signed.size}")
    return signed, tree


HASHED = 1 << 16
"""Entries hashed at a time: their bytes are copied out of the log to be hashed, a piece at a time."""


def tree_of(log: StoredEntries, size: int) -> CompactRange:
    """Returns the tree of a log's first `size` entries, hashed a piece at a time (issue 32.1: the
    entries copied whole beside the log had doubled the memory of reading it)."""
    tree = CompactRange()
    data, ends = log.data, log.ends
    for low in range(0, size, HASHED):
        extend(tree, leaf_hashes([bytes(data[ends[i]:ends[i + 1]]) for i in range(low, min(low + HASHED, size))]))
    return tree


def _body_reader(root: Path, signed: tuple[int, str], log: StoredEntries | None) -> Callable[[], pa.Array]:
    """Returns what reads the `body` of the first `size` entries: the whole log, checked against the checkpoint."""
    size, root_hex = signed

    def read() -> pa.Array:
        whole = log if log is not None else _whole_log(root)
        if len(whole) < size:
            raise LedgerCorrupt(len(whole), f"the log holds {len(whole)} entries, but checkpoint {size} signs {size}: entries were removed")
        if tree_of(whole, size).root().hex() != root_hex:
            LogReader(root).check(whole)  # names the changed entry where the newest checkpoint is this one
            raise LedgerCorrupt(None, f"账本已签名部分被改动，拒绝显示 / the signed range was changed: entries 0–{size - 1} do not give "
                                      f"the root checkpoint {size} signs (run `matchledger verify`)")
        return pa.LargeStringArray.from_buffers(size, pa.py_buffer(whole.ends[:size + 1]), pa.py_buffer(whole.data[:whole.ends[size]]))

    return read


# -- extending ----------------------------------------------------------------------------------

def extended(root: Path, kept: Kept, held: Held, projection: Projection, built: dict[str, pa.Table], signed: Checkpoint,
              on_game: Callable[[int], None] | None,
              on_new: Callable[[list[tuple[int, bytes]], list[Any]], None] | None = None,
              ) -> tuple[Projection, OnDisk, CompactRange, Held, int, dict[str, int]]:
    """Extends a kept projection by the entries signed since its checkpoint; returns it, the
    database's tables it patched (the others are built at load), the new tree's compact range, the
    entries it holds now, how many entries were new, and the tables whose kept rows lead the new
    ones unchanged, with how many (their kept files are kept, the rows after them added as a part).
    `on_new` is given the new entries and their events once they are proved (the incremental audit keeps more of them).

    :raises StateRefused: when the log signed now does not extend the kept one, or its entries cannot be read.
    """
    size, old_root = kept.signed[0], bytes.fromhex(kept.signed[1])
    tree = CompactRange()
    tree.size, tree._stack = size, [bytes.fromhex(h) for h in kept.frontier]  # the kept frontier, as the tree left it
    if tree.root() != old_root:
        raise StateRefused("its compact range does not give its checkpoint's root")
    try:
        new = list(_entries(root, size, signed.size))
    except LedgerError as exc:
        raise StateRefused(f"the entries signed since cannot be read ({exc})") from None
    extend(tree, leaf_hashes([stored for _, stored in new]))
    if tree.root() != signed.root:
        raise StateRefused(f"账本已签名部分与所保存的不一致 / the log signed at {signed.size} does not extend checkpoint {size} "
                           f"it was derived at (its entries {size}–{signed.size - 1} do not give the signed root)")
    events = decode_stored_array(b"[" + b",".join(stored for _, stored in new) + b"]")
    if on_new is not None:
        on_new(new, events)
    games = set(projection.column("games", "stream").to_pylist())
    firsts: dict[str, Any] = {}
    for event in events:
        firsts.setdefault(event.stream, event)
    touched = [s for s, first in firsts.items() if s in games or (first.seq == 0 and isinstance(first, GameStarted))]
    ongoing = [s for s in touched if firsts[s].seq > 0]
    earlier = _proved_streams(root, ongoing, size, old_root)
    for stream in ongoing:
        if len(earlier[stream]) != firsts[stream].seq:
            raise StateRefused(f"the stream index holds {len(earlier[stream])} earlier entries of {stream!r}, not {firsts[stream].seq}")
    new_of: dict[str, list[tuple[int, bytes]]] = {s: [] for s in touched}
    for (entry, stored), event in zip(new, events):
        if event.stream in new_of:
            new_of[event.stream].append((entry, stored))
    rows = _GameRows()
    whole: dict[str, list[tuple[int, bytes]]] = {}
    signers = RulingSigners.of(LogReader(root), signed.size)
    for stream in touched:
        whole[stream] = earlier.get(stream, []) + new_of[stream]
        stored, entries = b"[" + b",".join(d for _, d in whole[stream]) + b"]", array("q", [e for e, _ in whole[stream]])
        rows.add(replay_game(decode_stored_array(stored), rulings=signers.check_array(stored, entries)), entries)
    if on_game:
        on_game(len(touched))
    kept_events = sources(projection.arrow)["events"]
    heads = heads_table(events, size)  # only the new entries' rows: the kept ones stay in their files (issue 32.2)
    kept_held = len(held.data)  # the held bytes lead the new ones unchanged: kept as they are (`kept_files`)
    now_held = [(entry, stored, event) for (entry, stored), event in zip(new, events)
                if event.stream not in games and event.stream not in new_of or event.kind in _HELD_KINDS]
    held = held.with_entries([(entry, stored) for entry, stored, _ in now_held], signed.size,
                             [(event.kind, event.stream) for _, _, event in now_held])
    held_heads = _held_heads(held)
    streams = _held_streams(held, held_heads)
    streams.update({s: (GAME_OPENER, array("q", [e for e, _ in whole[s]])) for s in touched})
    fresh = rows.tables()
    # Where every game touched is new, the kept games and seats lead unchanged: they stay in their
    # files and the new games' rows follow them (issue 32.2), neither read nor written again.
    kept_games = {name: sources(projection.arrow)[name] for name in ("games", "seats")}
    appended = [name for name, table in kept_games.items() if isinstance(table, ds.Dataset) and games.isdisjoint(touched)]
    arrow = {name: fresh[name] if name in appended else pa.concat_tables([rows_without(projection.arrow[name], "stream", touched), fresh[name]])
             for name in ("games", "seats", "findings")}  # (an appended table's kept rows are joined below, in its place)
    arrow["findings"] = arrow["findings"].filter(pc.equal(arrow["findings"]["source"], "replay"))  # the orphans are found again
    # A fold's step for an entry depends on that entry and those before it only (a fold never reads
    # ahead: replay/fold.py), so a game under way keeps its kept steps; the new entries' are added.
    new_steps = fresh["steps"].filter(pc.greater_equal(fresh["steps"]["entry"], size)) if ongoing else fresh["steps"]
    steps = _steps_table(new_steps, events_of_steps(new_steps, heads, size))
    kept_steps = sources(projection.arrow)["steps"]
    grown = assemble_others(held, streams, arrow, rows.findings, heads, _held_arbitration(held, held_heads))
    grown.arrow = OnDisk.of(grown.arrow, projection.arrow)  # the kept `steps` and `events` stay in their files (issue 32.1)
    grown.arrow.append("steps", kept_steps, steps)
    grown.arrow.append("events", kept_events, heads)
    for name in appended:
        grown.arrow.append(name, kept_games[name], fresh[name])
    kept_found = [(place, f.stream, f) for place, f in zip(projection.places, projection.findings) if f.stream not in new_of]
    found = list(heapq.merge(kept_found, [(place, f.stream, f) for place, f in zip(grown.places, grown.findings)], key=lambda k: k[:2]))
    grown.findings = [f for _, _, f in found] + grown.findings[len(grown.places):]
    grown.places = [place for place, _, _ in found]
    changed = [*touched, *(s for s in firsts if s not in new_of)]
    patched = _patched(built, changed, [s for s in changed if firsts[s].seq > 0], whole, held, streams)
    if CLOCK in built:
        patched[CLOCK] = _clock(built[CLOCK], events)
    kept_rows = {"events": size, "steps": count_rows(kept_steps)}  # row i of `events` is entry i; no kept step changes
    kept_rows.update({name: count_rows(kept_games[name]) for name in appended})
    kept_rows.update({f"{BUILT}{name}": count_rows(sources(built)[name]) for name in patched.tails})
    kept_rows[HELD] = kept_held
    return grown, patched, tree, held, len(new), kept_rows


def _proved_streams(root: Path, streams: list[str], size: int, tree_root: bytes) -> dict[str, list[tuple[int, bytes]]]:
    """Returns the entries of some streams among the first `size`, read through the stream index,
    each proved included in the kept tree (the tiles give the proofs, the kept root checks them).

    :raises StateRefused: when they cannot be read or a proof fails.
    """
    if not streams:
        return {}
    try:
        found = _stream_entries(root, streams, size)
        tiles = TileReader(root)
        for entries in found.values():
            for entry, stored in entries:
                verify_inclusion(leaf_hash(stored), entry, size, inclusion_proof(entry, size, tiles.subtree), tree_root)
    except (LedgerError, ProofError, OSError) as exc:
        raise StateRefused(f"the earlier entries of a game under way cannot be proved in the kept tree ({exc})") from None
    return found


class _Head(msgspec.Struct, frozen=True):
    """An entry's kind and stream: all an extension reads of each held entry (not the whole event)."""

    kind: str
    stream: str


_HEADS = msgspec.json.Decoder(list[_Head])


def _held_heads(held: Held) -> list[tuple[str, str]]:
    """Returns the kind and stream of every held entry: as kept, or decoded (then kept with them)."""
    if held.heads is None:
        held.heads = [(h.kind, h.stream) for h in _HEADS.decode(held.json_array(held.entries))] if len(held.entries) else []
    return held.heads


def _held_arbitration(held: Held, heads: list[tuple[str, str]]) -> array:
    """Returns the entries of the arbitration's events, which are all held (`HELD_KINDS`)."""
    return array("q", (entry for entry, (kind, _) in zip(held.entries, heads) if kind in ARBITRATION_KINDS))


def _held_streams(held: Held, heads: list[tuple[str, str]]) -> dict[str, tuple[str, array]]:
    """Returns the first kind and held entries of every stream with a held entry, in order of first appearance."""
    streams: dict[str, tuple[str, array]] = {}
    for entry, (kind, stream) in zip(held.entries, heads):
        if stream not in streams:
            streams[stream] = (kind, array("q"))
        streams[stream][1].append(entry)
    return streams


def _patched(built: dict[str, pa.Table], streams: list[str], earlier: list[str], whole: dict[str, list[tuple[int, bytes]]],
             held: Held, held_streams: dict[str, tuple[str, array]]) -> OnDisk:
    """Returns the database's per-stream tables with the rows of some streams built again from
    their events (the games' from `whole`, the others' from the held entries). Where no kept row
    is of those streams (new games: the usual extension; only the `earlier` streams, which had
    entries before, can have any), the kept files stay as they are and the new rows follow them
    (`tails`), so the kept rows are neither read nor written again (issue 32.2)."""
    stored: list[tuple[int, bytes]] = []
    for stream in streams:
        if stream in whole:
            stored += whole[stream]
        elif stream in held_streams:
            entries = held_streams[stream][1]
            stored += [(e, s[1:-1]) for e, s in zip(entries, [held.json_array(array("q", [e])) for e in entries])]
    events = decode_stored_array(b"[" + b",".join(s for _, s in stored) + b"]") if stored else []
    table = pa.table({"entry": pa.array([e for e, _ in stored], pa.int64()), "stream": pa.array([e.stream for e in events], pa.string()),
                      "seq": pa.array([e.seq for e in events], pa.int64()), "ts": pa.array([e.ts for e in events], pa.int64()),
                      "kind": pa.array([e.kind for e in events], pa.string()), "seat": pa.array([e.seat for e in events], pa.int8()),
                      "body": pa.array([s.decode() for _, s in stored], pa.large_string())})
    out = OnDisk.of({}, built)
    for name, rows in per_stream_rows(table).items():
        kept = sources(built)[name]
        if isinstance(kept, ds.Dataset) and not _holds_any(kept, earlier):
            out.append(name, kept, rows.cast(kept.schema))
            continue
        if isinstance(kept, ds.Dataset):  # a ruled earlier game's: the other kept rows copied a batch at a time, never read whole (issue 32)
            out.open(name, [_spilled_without(kept, streams, rows.cast(kept.schema))])
            continue
        old = built[name]
        out[name] = pa.concat_tables([rows_without(old, "stream", streams), rows.cast(old.schema)]).replace_schema_metadata(old.schema.metadata)
    return out


def _spilled_without(kept: ds.Dataset, streams: list[str], rows: pa.Table) -> tuple[str, Any]:
    """Returns a spill file (path, open file) of a kept table's rows but those of some streams, followed by `rows`."""
    with Spill(kept.schema) as spill:
        spill.write_batches(matching(kept, "stream", streams, keep=False))
        spill.write(rows)
    return spill.file


def _clock(kept: pa.Table, events: list[Any]) -> pa.Table:
    """Returns `competition_clock` (`audit/query/sql/views/10_clock.sql`) after some new events: the
    later of its kept time and theirs, the log's own log.* streams left out as the SQL leaves them."""
    times = [t for t in [*kept["now_ts"].to_pylist(), *(e.ts for e in events if not e.stream.startswith("log."))] if t is not None]
    return pa.table({"now_ts": pa.array([max(times, default=None)], pa.int64())}).replace_schema_metadata(kept.schema.metadata)


def _holds_any(table: ds.Dataset, streams: list[str]) -> bool:
    """Tells whether a kept table has rows of some streams, reading only its `stream` column."""
    return bool(streams) and any(batch.num_rows for batch in matching(table, "stream", streams, ["stream"]))


# -- keeping and loading ---------------------------------------------------------------------------

def keep(files: DerivedFiles, root: Path, projection: Projection, built: Mapping[str, pa.Table], signed: Checkpoint,
         tree: CompactRange, log: StoredEntries | Held | None = None, before: tuple[Kept, dict[str, int]] | None = None,
         built_tails: Mapping[str, pa.Table] | None = None) -> None:
    """Writes a projection's files and the tables its database built (`AuditDB.built_tables`), then
    their signed state, naming the checkpoint its entries were checked against and that tree's
    compact range (files no state names are removed). The held entries are taken from `log`.
    `before`: the state extended, and the tables whose kept rows lead the new ones unchanged, with
    how many: their kept files stay, and the rows after them are kept as one more part (for a
    built table, its rows after them are `built_tails`, or `built`'s own `tails`).

    :raises LedgerError: when the ledger's key cannot be read.
    :raises OSError: when the files cannot be written.
    """
    signer = load_signer(root)  # first: without the key nothing is written
    kept: dict[str, str] = {}
    sizes: dict[str, int] = {}

    def put(name: str, fill: Fill) -> None:  # written as made, not held until all are (issue 32.1)
        kept[name], sizes[name] = files.write_named(name, fill)

    reused = kept_files(put, projection, built, log, before, built_tails)
    kept.update({part: file for part, (file, _) in reused.items()})
    sizes.update({part: size for part, (_, size) in reused.items()})
    state = msgspec.json.encode(Kept(kind=KIND, code=code_fingerprint(), files=kept, sizes=sizes,
                                     signed=(signed.size, signed.root.hex()), frontier=[h.hex() for h in tree._stack]))
    files.replace(STATE, sign_state(signer, KIND, state))
    for stale in set(files.names()) - {STATE, *kept.values()}:
        files.remove(stale)


Fill = Callable[[HashingFile], object]
"""Writes one kept file to the sink it is given (`DerivedFiles.write_named`)."""


def kept_files(put: Callable[[str, Fill], None], projection: Projection, built: Mapping[str, pa.Table],
               log: StoredEntries | Held | None = None, before: tuple[Kept, dict[str, int]] | None = None,
               built_tails: Mapping[str, pa.Table] | None = None) -> dict[str, tuple[str, int]]:
    """Gives `put` the writer of each file a projection is kept in, by name, one at a time (a built
    table is read from `built` only then: one held at a time), and returns
    the kept parts reused as they are, with their file names and sizes (see `keep`); the incremental
    audit keeps the same files in its state.

    :raises LedgerError: when `log` is None and the held entries are not the projection's.
    """
    reader, projection.body = projection.body, None  # what is kept is `events` without its body: not read for it
    built_tails = built_tails if built_tails is not None else getattr(built, "tails", {})
    tails: dict[str, pa.Table] = {**getattr(projection.arrow, "tails", {}), **{f"{BUILT}{name}": t for name, t in built_tails.items()}}
    previous, leading = before if before is not None else (None, {})
    spilled = {name: table for name, table in projection.sources().items() if isinstance(table, ds.Dataset) and name not in leading}
    try:  # a table with rows added after its kept files is not read: its new rows are kept as a part; one on disk is copied batch by batch
        tables: dict[str, pa.Table | ds.Dataset | None] = {name: None if name in tails else spilled[name] if name in spilled
                                                           else projection.table(name) for name in projection.arrow}
        events = tables["events"]
        if events is None and not isinstance(log, Held):  # only to find the held entries: an extension has them
            events = projection.table("events")
        if isinstance(events, pa.Table) and "body" in events.column_names:
            events = events.drop_columns(["body"])
        held = log if isinstance(log, Held) else _held_of(events, projection.table("games"), log)
    finally:
        projection.body = reader

    def whole() -> Iterator[tuple[str, pa.Table | ds.Dataset | None]]:
        yield from ((name, events if name == "events" else table) for name, table in tables.items())
        kept_built = built.sources() if isinstance(built, OnDisk) else built  # one on disk is copied batch by batch, not read whole
        yield from ((f"{BUILT}{name}", None if f"{BUILT}{name}" in tails else kept_built[name]) for name in built)  # a tail's table is not read

    reused: dict[str, tuple[str, int]] = {}
    for name, table in whole():
        parts = _parts(previous.files, name) if previous is not None else []
        if name in leading and 0 < len(parts) < MAX_PARTS:
            assert previous is not None
            reused.update({part: (previous.files[part], previous.sizes[part]) for part in parts})
            if name in tails:
                rest = tails[name]
            else:  # a table whose rows are not a tail here is one of the projection's, not None
                assert table is not None
                rest = table.slice(leading[name])
            put(f"{name}+{len(parts)}", _ipc(rest))
        else:
            whole_table = table if table is not None else built[name[len(BUILT):]] if name.startswith(BUILT) else projection.table(name)
            if isinstance(whole_table, pa.Table) and "body" in whole_table.column_names:  # `events` is kept without it
                whole_table = whole_table.drop_columns(["body"])
            put(name, _ipc(whole_table))
        del table  # a built table let go before the next is read
    put(FINDINGS, given(msgspec.json.encode(projection.findings)))
    put(PLACES, given(array("q", projection.places)))
    put(TOURNAMENT, given(array("q", _tournament_entries(held, projection))))
    held_parts = _parts(previous.files, HELD) if previous is not None else []
    if HELD in leading and 0 < len(held_parts) < MAX_PARTS:  # the season's 155 MB not written again for a game's few entries
        assert previous is not None
        reused.update({part: (previous.files[part], previous.sizes[part]) for part in held_parts})
        if len(held.data) > leading[HELD]:
            put(f"{HELD}+{len(held_parts)}", given(memoryview(held.data)[leading[HELD]:]))
    else:
        put(HELD, given(held.data))
    for name, data in ((HELD_ENDS, held.ends), (HELD_ENTRIES, held.entries)):
        put(name, given(data))
    put(HELD_HEADS, given(msgspec.json.encode(_held_heads(held))))
    return reused


def given(data: bytes | memoryview | array) -> Fill:
    """The writer of a file whose bytes are at hand."""
    return lambda out: out.write(memoryview(data))


def _open(files: DerivedFiles, root: Path) -> Kept:
    """Returns the kept state, signed by the log's key and of this code.

    :raises StateRefused: naming why it cannot be used.
    """
    try:
        kept = msgspec.json.decode(open_state(root, KIND, files.read(STATE)), type=Kept)
    except msgspec.DecodeError as exc:
        raise StateRefused(f"the state is unreadable ({exc})") from None
    if kept.code != code_fingerprint():
        raise StateRefused(f"it was derived by other code ({kept.code}; this is {code_fingerprint()})")
    return kept


def kept_file(files: DerivedFiles, kept: Named, name: str) -> bytes:
    """Returns a kept file's bytes, which must be those its state names.

    :raises StateRefused: when they are not.
    """
    file = kept.files.get(name, "")
    data = files.read(file) if file and files.size(file) == kept.sizes.get(name) else b""
    if f"{name}-{hashlib.sha256(data).hexdigest()}" != file:
        raise StateRefused(f"its {name} file is missing or does not match its state (SHA-256)")
    return data


def load(files: DerivedFiles, kept: Kept) -> tuple[Projection, OnDisk, Held]:
    """Returns the kept projection (its `events` without `body`), the tables its database built, each
    table opened from its files (`OnDisk`): DuckDB scans them there, and a table is read whole only
    where an extension asks for it by name; and the entries it holds (read and checked once: the
    season's are 155 MB).

    :raises StateRefused: naming why it cannot be used.
    """
    others = (FINDINGS, PLACES, TOURNAMENT, HELD, HELD_ENDS, HELD_ENTRIES, HELD_HEADS)
    held = {name: kept_file(files, kept, name) for name in others if name != HELD}
    held[HELD] = b"".join(kept_file(files, kept, part) for part in _parts(kept.files, HELD))  # its first file, then each extension's
    names = [name for name in kept.files if name not in others and "+" not in name]
    opened = OnDisk()
    for name in names:
        opened.open(name, [_opened(files, kept, part) for part in _parts(kept.files, name)])
    built = OnDisk()
    for name in [name for name in names if name.startswith(BUILT)]:
        built.adopt(name[len(BUILT):], opened, name)
    places, tournament, entries, ends = array("q"), array("q"), array("q"), array("q")
    places.frombytes(held[PLACES])
    tournament.frombytes(held[TOURNAMENT])
    entries.frombytes(held[HELD_ENTRIES])
    ends.frombytes(held[HELD_ENDS])
    try:
        heads = msgspec.json.decode(held[HELD_HEADS], type=list[tuple[str, str]])
    except msgspec.DecodeError as exc:
        raise StateRefused(f"its {HELD_HEADS} file is unreadable ({exc})") from None
    if len(heads) != len(entries):
        raise StateRefused(f"its {HELD_HEADS} file names {len(heads)} entries, not the {len(entries)} held")
    stored = Held(kept.signed[0], entries, held[HELD], ends, heads)
    return Projection(opened, findings=msgspec.json.decode(held[FINDINGS], type=list[Finding]), places=list(places),
                      tournament_events=decode_stored_array(stored.json_array(tournament)) if tournament else [],
                      tournament_entries=list(tournament)), built, stored


def _opened(files: DerivedFiles, kept: Kept, name: str) -> tuple[str, Any]:
    """Opens a kept file once its size and SHA-256 are those its state names (hashed as it is read
    in pieces, never held whole); returns the path that reads this very file (the open descriptor's,
    where there is one: a file swapped after the check is not the one read) and the open file.

    :raises StateRefused: when they are not.
    """
    file = kept.files.get(name, "")
    refused = StateRefused(f"its {name} file is missing or does not match its state (SHA-256)")
    if not file or "/" in file:
        raise refused
    try:
        fd = os.open(files.directory / file, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise refused from None
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode) or os.fstat(fd).st_size != kept.sizes.get(name):
        f.close()
        raise refused
    if f"{name}-{hashlib.file_digest(f, 'sha256').hexdigest()}" != file:
        f.close()
        raise refused
    proc = f"/proc/self/fd/{fd}"
    return (proc if os.path.exists(proc) else str(files.directory / file)), f


def _parts(files: dict[str, str], name: str) -> list[str]:
    """Returns the kept parts of a table (or of the held bytes), in order: its first file, then what each extension added."""
    return [name, *(f"{name}+{k}" for k in range(1, MAX_PARTS + 1) if f"{name}+{k}" in files)] if name in files else []


def _held_of(events: pa.Table, games: pa.Table, log: StoredEntries | None) -> Held:
    """Returns the entries the projection decodes beside the games, taken from the log read."""
    if log is None:
        raise LedgerError("the projection's entries were not read: nothing to keep")
    if isinstance(events, ds.Dataset):
        events = read(events, ["entry", "stream", "kind"])
    stream = events["stream"].combine_chunks()
    if not isinstance(stream, pa.DictionaryArray):
        stream = stream.dictionary_encode()
    other = pc.invert(pc.is_in(stream.dictionary, value_set=games["stream"].combine_chunks().cast(pa.string())))
    kinds = events["kind"].combine_chunks()
    wanted = pc.is_in(kinds.dictionary, value_set=pa.array(_HELD_KINDS))
    mask = pc.or_(pc.take(other, stream.indices), pc.take(wanted, kinds.indices))
    entries = array("q", pc.filter(events["entry"], mask).to_pylist())
    ends = array("q", [0])
    data = bytearray()
    for i in entries:
        data += log.data[log.ends[i]:log.ends[i + 1]]
        ends.append(len(data))
    return Held(len(log), entries, bytes(data), ends)


def _tournament_entries(held: Held, projection: Projection) -> list[int]:
    """Returns the entry of each of the projection's tournament events, in its order (they are held):
    as the projection knew them, or found among the held entries (every held entry's key decoded)."""
    if not projection.tournament_events:
        return []
    if projection.tournament_entries is not None and len(projection.tournament_entries) == len(projection.tournament_events):
        return projection.tournament_entries
    keys = decode_keys([held.stored(k) for k in range(len(held.entries))], 0)
    where = {(key.stream, key.seq): entry for key, entry in zip(keys, held.entries)}
    return [where[(e.stream, e.seq)] for e in projection.tournament_events]


def _ipc(table: pa.Table | ds.Dataset) -> Fill:
    """The writer of a table as an Arrow IPC file (one dictionary per column: the file format keeps
    one), straight to the kept file's sink; a table on disk (`events` without its body) is copied a
    batch at a time (one dictionary a column there too). Never held whole (issue 32.1)."""

    def fill(out: HashingFile) -> None:
        sink = pa.PythonFile(out, mode="w")
        if isinstance(table, ds.Dataset):
            columns = [name for name in table.schema.names if name != "body"]
            schema = pa.schema([table.schema.field(c) for c in columns], metadata=table.schema.metadata)  # a built table's types
            with pa.ipc.new_file(sink, schema, options=_IPC) as writer:
                for batch in batches(table, columns):
                    writer.write_batch(batch)
                    pa.default_memory_pool().release_unused()  # the batch read and compressed: its memory back to the system
            return
        unified = table.unify_dictionaries()
        with pa.ipc.new_file(sink, unified.schema, options=_IPC) as writer:
            for batch in _coalesced(unified):
                writer.write_batch(batch)

    return fill


def _coalesced(table: pa.Table) -> Iterator[pa.RecordBatch]:
    """Yields a table's rows in batches of `BATCH_ROWS` (the last fewer): a table made of many small
    chunks (a game's rows each, as the workers gave them) is written in few batches, for DuckDB's
    scans of the file read a batch and each column of it at a time; one batch is held at a time."""
    if not table.num_rows:
        yield from table.to_batches()
    for start in range(0, table.num_rows, BATCH_ROWS):
        yield from table.slice(start, BATCH_ROWS).combine_chunks().to_batches()
