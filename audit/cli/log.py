"""Commands on the log itself: create, record, verify, export, prove, check proofs, keys and co-signatures."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, BinaryIO, cast

import msgspec
import typer

import ledger as ledger_api
from audit.cli.base import (
    DEFAULT_LEDGER,
    ExitCode,
    ForceOpt,
    JsonOpt,
    LedgerOpt,
    LogKeyOpt,
    QuietOpt,
    UsageError,
    command,
    existing_ledger,
    key_option,
    say_trust,
    trust_document,
)
from audit.cli.inputs import read_input
from audit.cli.results import (
    BundleChecked,
    Consistent,
    Cosigned,
    Damaged,
    EntriesExported,
    Initialised,
    KeyMade,
    ParquetExported,
    Proved,
    ReceiptChecked,
    ReceiptsChecked,
    Recorded,
    RecordsExported,
    Repaired,
    TilesExported,
    Verified,
)
from audit.presentation.output import PROGRESS_BYTES, ProgressReader, Result, chosen, emit, fail, fail_note, progress_bar, progress_steps
from ledger import Signer, Verifier, check_output, write_output
from ledger import bundle as ledger_bundle
from ledger import checkpoints as ledger_checkpoints
from ledger import export as ledger_export
from ledger import notes as ledger_notes
from ledger import outputs as ledger_outputs
from ledger import receipts as ledger_receipts
from ledger import repair as ledger_repair
from ledger import witness as ledger_witness


@command
def init(ledger: LedgerOpt = DEFAULT_LEDGER, origin: Annotated[str | None, typer.Option(help="Checkpoint origin line.")] = None,
         max_entry_bytes: Annotated[int, typer.Option(help="Largest event accepted, in bytes.")] = 64 * 1024,
         checkpoint_interval: Annotated[int, typer.Option(help="Sign a checkpoint at least every N entries.")] = 100_000,
         json: JsonOpt = False) -> None:
    """Create an empty ledger with a new Ed25519 signing key."""
    try:
        pub = ledger_api.init(ledger, origin, max_entry_bytes=max_entry_bytes, checkpoint_interval=checkpoint_interval)
    except ledger_api.LedgerError as exc:
        if (ledger / "ledger.json").exists():  # misuse, not damage: exit 2
            raise UsageError(str(exc)) from None
        raise
    emit(Initialised(ledger=str(ledger), public_key=str(pub), verifier=pub.read_text().strip()), chosen(json))


@command
def record(file: Annotated[str, typer.Argument(help="JSONL file of events, or - for stdin.")],
           ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Append the events of a JSONL file, all or nothing, and sign a checkpoint."""
    source = sys.stdin.buffer if file == "-" else open(file, "rb")
    size = os.fstat(source.fileno()).st_size if file != "-" else 0
    with source, progress_bar(f"recording {file}", size, quiet=quiet or size < PROGRESS_BYTES) as advance:
        result = ledger_api.record(ledger, cast(BinaryIO, ProgressReader(source, advance)))
    if result.recovered:
        fail_note(result.recovered)
    emit(Recorded(appended=result.appended, duplicates=result.duplicates, size=result.size, recovered=result.recovered), chosen(json))


@command
def verify(ledger: LedgerOpt = DEFAULT_LEDGER,
           witness_key: Annotated[list[Path] | None, key_option(help="An arbiter's verifier key to check co-signatures of (repeatable).")] = None,
           key: LogKeyOpt = None, json: JsonOpt = False) -> None:
    """Re-read every frame, recompute the tree and tiles, check the index, every checkpoint and signature."""
    witnesses = [Verifier.load(k) for k in witness_key or []]
    with ledger_api.pinned_key(key):
        report = ledger_api.verify(existing_ledger(ledger), witness_keys=witnesses)
        trust = trust_document(ledger, report=report)
    cosigners = {name for note in report.notes if "co-signed by " in note for name in note.split("co-signed by ", 1)[1].split(", ")}
    silent = [f"{w.name} (key id {w.key_id.hex()})" for w in witnesses if w.name not in cosigners]  # asked for, never seen: not ok
    if not json:
        say_trust(trust)
    result = Verified(ok=not silent, size=report.size, root=report.root, unsigned=report.unsigned, checkpoints=report.checkpoints,
                      notes=report.notes, not_cosigned=silent, trust=trust) if report.ok else \
        Damaged(ok=False, index=report.index, error=report.error, trust=trust)
    emit(result, chosen(json))
    if not json and report.ok:  # what failed goes to stderr
        for absent in silent:
            fail(f"该仲裁员未联署任何检查点，无从核对 / --witness-key {absent} co-signed no checkpoint: none of its co-signatures could be checked")
    elif not json:
        where = f"entry {report.index}: " if report.index is not None else ""
        fail(f"账本受损 / ledger damaged: {where}{report.error}")
    if not report.ok or silent:
        raise ExitCode(1)


@command
def repair(ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Rebuild the tiles, stream index and head from the entries (checked against the signed checkpoints), then verify."""
    with progress_steps(quiet=quiet or json) as step:
        report = ledger_repair.repair(ledger, lambda label: step(label, 0))
    verified = report.verified
    ok = verified is not None and verified.ok and report.refused is None
    emit(Repaired(ok=ok, entries=report.entries, missing=report.missing, differed=report.differed,
                  kept=str(report.kept) if report.kept else None, refused=report.refused,
                  error=None if ok or verified is None else verified.error).told(verified=verified), chosen(json))
    if not json and report.refused is not None:
        fail(f"nothing rebuilt: the entries do not match the signed checkpoints ({report.refused}); every file is as it was")
    elif not json and not ok:
        fail(f"still damaged: {verified.error if verified else 'not verified'}")
    if not ok:
        raise ExitCode(1)


class ExportFormat(str, Enum):
    """What `export --game/--tournament` writes: a game's text record (PGN-like)."""

    record = "record"


@command
def export(ledger: LedgerOpt = DEFAULT_LEDGER,
           jsonl: Annotated[Path | None, typer.Option(help="Write the entries as stored, one per line.")] = None,
           parquet: Annotated[Path | None, typer.Option(help="Write the projection as Parquet for a data lake (by tournament and round), "
                                                        "with a manifest and trino.sql.")] = None,
           location: Annotated[str | None, typer.Option(help="With --parquet: the URI trino.sql registers the export at "
                                                        "(e.g. s3://lake/cup-1); default its file:// path.")] = None,
           tiles: Annotated[Path | None, typer.Option(help="Lay out checkpoint, hash tiles and entry bundles for tlog-tiles clients.")] = None,
           game: Annotated[str | None, typer.Option(help="With --format record: the game stream whose record to write.")] = None,
           tournament: Annotated[str | None, typer.Option(help="With --format record: every game of this tournament, one file "
                                                          "each in --out DIR.")] = None,
           format_: Annotated[ExportFormat | None, typer.Option("--format", help="record: a game's text record (tags, moves, "
                                                                "clock times).")] = None,
           out: Annotated[Path | None, typer.Option(help="With --format record: the file (--game; stdout without it) or "
                                                    "directory (--tournament).")] = None,
           key: LogKeyOpt = None, force: ForceOpt = False, json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """Export the entries as stored (--jsonl), the projection as Parquet (--parquet), the log as tlog-tiles (--tiles) or game
    records (--format record)."""
    with ledger_api.pinned_key(key):  # every export is of the signed log, checked under the pinned key
        _export(ledger, jsonl, parquet, location, tiles, game, tournament, format_, out, force, json, quiet)


def _export(ledger: Path, jsonl: Path | None, parquet: Path | None, location: str | None, tiles: Path | None, game: str | None,
            tournament: str | None, format_: ExportFormat | None, out: Path | None, force: bool, json: bool, quiet: bool) -> None:
    """Runs `export` under the key it was given; says the key and the signed size the export was checked against."""
    if location is not None and parquet is None:
        raise typer.BadParameter("--location goes with --parquet", param_hint="--location")
    if format_ is not None or game is not None or tournament is not None:
        if any(x is not None for x in (jsonl, parquet, tiles)) or format_ is None or (game is None) == (tournament is None):
            raise typer.BadParameter("a record export takes --format record with exactly one of --game ID or --tournament ID")
        (games, written), signed = _export_records(ledger, game, tournament, out, force)
        trust = trust_document(ledger, signed)
        summary: Result = RecordsExported(games=games, out=written, trust=trust).told(game=game, tournament=tournament)
    elif sum(x is not None for x in (jsonl, parquet, tiles)) != 1:
        raise typer.BadParameter("give exactly one of --jsonl FILE, --parquet DIR, --tiles DIR or --format record")
    elif jsonl is not None:
        signed = ledger_export.export_jsonl(ledger, jsonl, force)
        trust = trust_document(ledger, signed)
        summary = EntriesExported(entries=signed.size, jsonl=str(jsonl), trust=trust)
    elif tiles is not None:
        signed = ledger_export.export_tiles(ledger, tiles, force)
        trust = trust_document(ledger, signed)
        summary = TilesExported(size=signed.size, tiles=str(tiles), trust=trust)
    else:
        from audit.lake.export import export_parquet
        from audit.query.projection_cache import projection_of

        assert parquet is not None
        check_output(parquet, force, directory=True)
        with progress_bar("replaying games", 0, quiet=quiet or json) as advance:
            # `events.body` is read from the log as it is written, checked against the signed root (issue 32.1)
            projection, db, _, signed = projection_of(ledger, None, advance, body=False)
        trust = trust_document(ledger, signed)
        manifest = export_parquet(ledger, projection, parquet, db, location, force=force)
        summary = ParquetExported(files=len(manifest["files"]), parquet=str(parquet), checkpoint=manifest["checkpoint"],
                                  trust=trust).told(documents=manifest["documents"])
    emit(summary, chosen(json))
    if not json:
        say_trust(trust, table=bool(summary.lines()))  # (a record written to stdout keeps stdout to itself)


def _export_records(ledger: Path, game: str | None, tournament: str | None, out: Path | None,
                    force: bool) -> tuple[tuple[int, str | None], ledger_api.Checkpoint]:
    """Writes one game's record (to `out` or stdout) or every game of a tournament (one file each in
    `out`), read from the signed log (LogReader.checked_events); returns the games written and where, and
    the checkpoint it was checked against."""
    from audit.presentation.record_format import game_record, game_streams, record_file_name
    from audit.query.arbitration import LogRulings

    if tournament is not None and out is None:
        raise typer.BadParameter("a tournament's records go one file per game into a directory: give --out DIR", param_hint="--out")
    if out is not None:
        check_output(out, force, directory=game is None)
    if game is not None:
        events, signed = ledger_api.LogReader(ledger).checked_events(game)
        if not events:
            raise ValueError(f"no game stream {game!r} in {ledger}")
        record = game_record(events, _tournament_name(ledger, events[0]), LogRulings(ledger_api.LogReader(ledger)).of_stream(game))
        if out is None:
            sys.stdout.write(record)
            return (1, None), signed
        write_output(out, record.encode(), force)
        return (1, str(out)), signed
    assert tournament is not None and out is not None
    log, signed = ledger_api.LogReader(ledger).checked_events()
    streams = game_streams(log, tournament)
    if not streams:
        raise ValueError(f"no games of tournament {tournament!r} in {ledger}")
    by_stream: dict[str, list[Any]] = {}
    for event in log:
        by_stream.setdefault(event.stream, []).append(event)
    name = None
    rulings = LogRulings(ledger_api.LogReader(ledger), signed.size)
    with ledger_outputs.output_directory(out, force) as tree:
        for stream in streams:
            events = by_stream[stream]
            name = name or _tournament_name(ledger, events[0], by_stream.get(tournament))
            tree.write(record_file_name(stream), game_record(events, name, rulings.of_stream(stream)).encode())
    return (len(streams), str(out)), signed


def _tournament_name(ledger: Path, start: Any, opened: list[Any] | None = None) -> str | None:
    """Returns the name the tournament of a game was opened with, if the game has one (from the
    tournament's signed events, read here unless given)."""
    from schemas.common import TournamentOpened

    if start.tournament is None:
        return None
    if opened is None:
        opened = ledger_api.LogReader(ledger).checked_events(start.tournament)[0]
    return opened[0].name if opened and isinstance(opened[0], TournamentOpened) else None


@command
def prove(stream: Annotated[str, typer.Option(help="Stream (game or tournament) id.")],
          out: Annotated[Path, typer.Option(help="Where to write the evidence bundle.")],
          ledger: LedgerOpt = DEFAULT_LEDGER, key: LogKeyOpt = None,
          size: Annotated[int | None, typer.Option(help="Prove against the kept checkpoint of this tree size "
                                                   "(e.g. one an arbiter co-signed).")] = None,
          cosigned: Annotated[bool, typer.Option("--cosigned", help="Prove against the newest checkpoint an arbiter co-signed.")] = False,
          force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Write an evidence bundle: a stream's entries with inclusion proofs and a signed checkpoint."""
    check_output(out, force)
    with ledger_api.pinned_key(key):
        built = ledger_api.prove(existing_ledger(ledger), stream, size, cosigned)
        try:  # a bundle handed on is one `check-proof` accepts: an entry edited in the signed range is refused here
            checked = ledger_api.check_bundle(built, ledger_api.load_verifier(ledger))
        except ledger_api.LedgerError as exc:
            raise ledger_api.LedgerCorrupt(None, f"账本已签名部分被改动，拒绝出具证据 / stream {stream!r} does not match the signed tree: "
                                           f"{exc} (run `matchledger verify`)") from None
        trust = trust_document(ledger, checked.checkpoint)
    write_output(out, msgspec.json.format(msgspec.json.encode(built)) + b"\n", force)
    emit(Proved(stream=stream, entries=len(built.entries), out=str(out), trust=trust), chosen(json))
    if not json:
        say_trust(trust)


@command
def check_proof(file: Annotated[Path, typer.Argument(help="Evidence bundle or receipt file.")],
                key: Annotated[Path, key_option(help="The ledger's verifier key (signer.pub).")],
                witness_key: Annotated[list[Path] | None, key_option(help="An arbiter's verifier key whose co-signature the "
                                                                       "checkpoint must carry (repeatable).")] = None,
                witness_threshold: Annotated[int | None, typer.Option(min=1, help="How many of the --witness-key arbiters must "
                                                                      "have co-signed (all of them by default).")] = None,
                json: JsonOpt = False) -> None:
    """Verify an evidence bundle, or a receipt of the live service, offline with the public key alone (and arbiters' co-signatures)."""
    what = "an evidence bundle, as `matchledger prove --out` writes, or a receipt of the live service"
    loaded = ledger_receipts.load_evidence(file, read_input(file, what))
    if isinstance(loaded, ledger_api.Receipt):
        _check_receipt(loaded, key, json)
        return
    if isinstance(loaded, list):
        _check_receipts(file, loaded, key, json)
        return
    witnesses = [Verifier.load(k) for k in witness_key or []]
    threshold = len(witnesses) if witness_threshold is None else witness_threshold
    if threshold > len(witnesses):
        raise typer.BadParameter(f"{threshold} co-signatures required of {len(witnesses)} --witness-key given", param_hint="--witness-threshold")
    checked = ledger_api.check_bundle(loaded, Verifier.load(key))
    cosigned = ledger_notes.cosigners(checked.checkpoint.note, witnesses)
    if len(cosigned) < threshold:
        missing = sorted({w.name for w in witnesses} - set(cosigned))
        raise ledger_api.BundleError(f"the checkpoint of size {checked.checkpoint.size} carries {len(cosigned)} of the {threshold} "
                                     f"co-signatures required; missing: {', '.join(missing)}")
    proved = checked.statement(loaded) + (f"；检查点由 {'、'.join(cosigned)} 联署 / the checkpoint is co-signed by {', '.join(cosigned)}"
                                          if cosigned else "")
    emit(BundleChecked(ok=True, stream=loaded.stream, entries=len(loaded.entries), size=checked.checkpoint.size,
                       root=checked.checkpoint.root.hex(), complete=checked.complete, cosigners=cosigned, proved=proved), chosen(json))


def _check_receipts(file: Path, receipts: list[ledger_api.Receipt], key: Path, json: bool) -> None:
    """Checks a file of receipts (`send --receipts`), one a line.

    :raises BundleError: naming the line of the first receipt that does not verify.
    """
    verifier, sizes, entries = Verifier.load(key), [], 0
    for number, receipt in enumerate(receipts, start=1):
        try:
            sizes.append(ledger_api.check_receipt(receipt, verifier).size)
        except ledger_api.BundleError as exc:
            raise ledger_api.BundleError(f"{file} line {number}: {exc}") from None
        entries += len(receipt.entries)
    proved = (f"{len(receipts)} 张回执、{entries} 个事件，每批的条目均在 {verifier.name} 签名的检查点中得到证明 / "
              f"{len(receipts)} receipts, {entries} events, each batch's entries proved in a checkpoint signed by {verifier.name}")
    emit(ReceiptsChecked(ok=True, receipts=len(receipts), entries=entries, size=max(sizes, default=0), proved=proved), chosen(json))


def _check_receipt(receipt: ledger_api.Receipt, key: Path, json: bool) -> None:
    checkpoint = ledger_api.check_receipt(receipt, Verifier.load(key))
    indexes = [e.index for e in receipt.entries]
    proved = (f"来源 {receipt.source} 的这批 {len(indexes)} 个事件是大小为 {checkpoint.size}、由 {checkpoint.origin} 签名的日志中的"
              f"第 {'、'.join(map(str, indexes))} 号条目，该批的记录在第 {receipt.batch.index} 号条目 / "
              f"the {len(indexes)} events of source {receipt.source}'s batch (sha256 {receipt.digest}) are entries "
              f"{', '.join(map(str, indexes))} of the log of size {checkpoint.size} (root {checkpoint.root.hex()}), signed by "
              f"{checkpoint.origin}, with the batch's record at entry {receipt.batch.index}")
    emit(ReceiptChecked(ok=True, source=receipt.source, entries=len(indexes), size=checkpoint.size, root=checkpoint.root.hex(),
                        proved=proved), chosen(json))


@command
def consistency(old: Annotated[int, typer.Option(help="Tree size of the earlier checkpoint.")],
                ledger: LedgerOpt = DEFAULT_LEDGER,
                new: Annotated[int | None, typer.Option(help="Tree size of the later checkpoint (the latest by default).")] = None,
                out: Annotated[Path | None, typer.Option(help="Also write the proof to this file, for check-consistency.")] = None,
                key: LogKeyOpt = None, force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Prove that an earlier signed checkpoint is a prefix of a later one (RFC 6962 consistency proof)."""
    if out is not None:
        check_output(out, force)
    with ledger_api.pinned_key(key):
        try:
            item = ledger_bundle.prove_consistency(existing_ledger(ledger), old, new)
        except ledger_api.LedgerError as exc:
            sizes = set(ledger_checkpoints.checkpoint_sizes(ledger))
            if old not in sizes or (new is not None and new not in sizes):  # a size that has no checkpoint: misuse, exit 2
                raise UsageError(str(exc)) from None
            raise
        first, last = ledger_bundle.check_consistency(item, ledger_api.load_verifier(ledger))
        trust = trust_document(ledger, last)
    if out is not None:
        write_output(out, ledger_witness.encode_consistency(ledger_witness.ConsistencyFile(ledger_witness.CONSISTENCY_FORMAT, first.size,
                                                                                     last.size, item.proof)), force)
    emit(Consistent(old=first.size, new=last.size, old_root=first.root.hex(), new_root=last.root.hex(), proof=list(item.proof),
                    out=str(out) if out else None, trust=trust), chosen(json))
    if not json:
        say_trust(trust)


@command
def keygen(name: Annotated[str, typer.Option(help="Key name, e.g. arbiter-zhang.")],
           out: Annotated[Path, typer.Option(help="Private key file to create (mode 600).")],
           json: JsonOpt = False) -> None:
    """Create an arbiter's Ed25519 key pair for co-signing checkpoints."""
    pub = out.with_suffix(".pub")
    if out.suffix == ".pub":
        raise typer.BadParameter("give the private key's file name (its public key goes beside it as NAME.pub), not a .pub file", param_hint="--out")
    for path in (out, pub):
        if path.exists() or path.is_symlink():  # a key is never replaced: the old one would be lost with what it signed
            raise UsageError(f"{path} exists: a key file is never replaced; give another --out")
        check_output(path)
    signer = Signer.generate(name)
    signer.save(out)
    write_output(pub, (str(signer.verifier) + "\n").encode())
    emit(KeyMade(private_key=str(out), public_key=str(pub), verifier=str(signer.verifier)), chosen(json))


@command
def cosign(key: Annotated[Path, key_option(help="The arbiter's private key.")],
           ledger: LedgerOpt = DEFAULT_LEDGER,
           size: Annotated[int | None, typer.Option(help="Tree size of the checkpoint; the latest by default.")] = None,
           json: JsonOpt = False) -> None:
    """Add an arbiter's co-signature to a checkpoint."""
    arbiter = Signer.load(key)  # a bad key is refused before the ledger is opened (opening may lay out new files)
    with ledger_api.Ledger.open(ledger) as writer:
        checkpoint = writer.cosign(arbiter, size)
    emit(Cosigned(size=checkpoint.size, root=checkpoint.root.hex(), note=checkpoint.note), chosen(json))
