"""Commands on the log itself: create, record, verify, export, prove, check proofs, keys and co-signatures."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import msgspec
import typer

import ledger as ledger_api
from audit.cli.base import DEFAULT_LEDGER, ExitCode, ForceOpt, JsonOpt, LedgerOpt, command
from audit.output import emit_json, fail, fail_note, say
from ledger import Signer, Verifier, check_output, write_output


@command
def init(ledger: LedgerOpt = DEFAULT_LEDGER, origin: Annotated[str | None, typer.Option(help="Checkpoint origin line.")] = None,
         max_entry_bytes: Annotated[int, typer.Option(help="Largest event accepted, in bytes.")] = 64 * 1024,
         checkpoint_interval: Annotated[int, typer.Option(help="Sign a checkpoint at least every N entries.")] = 100_000,
         json: JsonOpt = False) -> None:
    """Create an empty ledger with a new Ed25519 signing key."""
    pub = ledger_api.init(ledger, origin, max_entry_bytes=max_entry_bytes, checkpoint_interval=checkpoint_interval)
    if json:
        emit_json({"ledger": str(ledger), "public_key": str(pub), "verifier": pub.read_text().strip()})
    else:
        say(f"created ledger {ledger}\npublic key: {pub}")


@command
def record(file: Annotated[str, typer.Argument(help="JSONL file of events, or - for stdin.")],
           ledger: LedgerOpt = DEFAULT_LEDGER, json: JsonOpt = False) -> None:
    """Append the events of a JSONL file, all or nothing, and sign a checkpoint."""
    source = sys.stdin.buffer if file == "-" else open(file, "rb")
    with source:
        result = ledger_api.record(ledger, source)
    if result.recovered:
        fail_note(result.recovered)
    if json:
        emit_json({"appended": result.appended, "duplicates": result.duplicates, "size": result.size, "recovered": result.recovered})
    else:
        say(f"appended {result.appended} events, {result.duplicates} already present; tree size {result.size}")


@command
def verify(ledger: LedgerOpt = DEFAULT_LEDGER,
           witness_key: Annotated[list[Path] | None, typer.Option(help="An arbiter's verifier key to check co-signatures of (repeatable).")] = None,
           json: JsonOpt = False) -> None:
    """Re-read every frame, recompute the tree and tiles, check the index, every checkpoint and signature."""
    report = ledger_api.verify(ledger, witness_keys=[Verifier.load(k) for k in witness_key or []])
    if json:
        emit_json({"ok": True, "size": report.size, "root": report.root, "checkpoints": report.checkpoints, "notes": report.notes}
                  if report.ok else {"ok": False, "index": report.index, "error": report.error})
    elif report.ok:
        say(f"ok: tree size {report.size}, root {report.root}, {report.checkpoints} checkpoints verified")
        for note in report.notes:
            say(f"note: {note}")
    else:
        where = f"entry {report.index}: " if report.index is not None else ""
        fail(f"ledger damaged: {where}{report.error}")
    if not report.ok:
        raise ExitCode(1)


@command
def export(ledger: LedgerOpt = DEFAULT_LEDGER,
           jsonl: Annotated[Path | None, typer.Option(help="Write the entries as stored, one per line.")] = None,
           parquet: Annotated[Path | None, typer.Option(help="Write the projection as Hive-partitioned Parquet with a manifest.")] = None,
           tiles: Annotated[Path | None, typer.Option(help="Lay out checkpoint, hash tiles and entry bundles for tlog-tiles clients.")] = None,
           force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Export the entries as stored (--jsonl), the projection as Parquet (--parquet) or the log as tlog-tiles (--tiles)."""
    from audit.export import export_parquet
    from audit.projection import project_ledger

    if sum(x is not None for x in (jsonl, parquet, tiles)) != 1:
        raise typer.BadParameter("give exactly one of --jsonl FILE, --parquet DIR or --tiles DIR")
    if jsonl is not None:
        count = ledger_api.export_jsonl(ledger, jsonl, force)
        summary: dict[str, Any] = {"entries": count, "jsonl": str(jsonl)}
        text = f"wrote {count} entries to {jsonl}"
    elif tiles is not None:
        size = ledger_api.export_tiles(ledger, tiles, force)
        summary = {"size": size, "tiles": str(tiles)}
        text = f"wrote the checkpoint, tiles and entry bundles of the log at size {size} to {tiles} (serve it as static files)"
    else:
        assert parquet is not None
        check_output(parquet, force, directory=True)
        manifest = export_parquet(ledger, project_ledger(ledger), parquet)
        summary = {"files": len(manifest["files"]), "parquet": str(parquet), "checkpoint": manifest["checkpoint"]}
        text = f"wrote {len(manifest['files'])} Parquet files, {parquet / 'manifest.json'} and its signed note"
    if json:
        emit_json(summary)
    else:
        say(text)


@command
def prove(stream: Annotated[str, typer.Option(help="Stream (game or tournament) id.")],
          out: Annotated[Path, typer.Option(help="Where to write the evidence bundle.")],
          ledger: LedgerOpt = DEFAULT_LEDGER, force: ForceOpt = False, json: JsonOpt = False) -> None:
    """Write an evidence bundle: a stream's entries with inclusion proofs and a signed checkpoint."""
    check_output(out, force)
    built = ledger_api.prove(ledger, stream)
    write_output(out, msgspec.json.format(msgspec.json.encode(built)) + b"\n", force)
    if json:
        emit_json({"stream": stream, "entries": len(built.entries), "out": str(out)})
    else:
        say(f"wrote {len(built.entries)} entries of {stream} with inclusion proofs to {out}")


@command
def check_proof(file: Annotated[Path, typer.Argument(help="Evidence bundle or receipt file.")],
                key: Annotated[Path, typer.Option(help="The ledger's verifier key (signer.pub).")],
                json: JsonOpt = False) -> None:
    """Verify an evidence bundle, or a receipt of the live service, offline with the public key alone."""
    if _is_receipt(file):
        _check_receipt(file, key, json)
        return
    loaded = ledger_api.load_bundle(file)
    checkpoint = ledger_api.check_bundle(loaded, Verifier.load(key))
    proved = (f"seq 0–{len(loaded.entries) - 1} of {loaded.stream}, in order and without a gap, are entries of the log of "
              f"size {checkpoint.size} (root {checkpoint.root.hex()}), signed by {checkpoint.origin}; inclusion proofs do not show "
              f"that the stream has no later entries")
    if json:
        emit_json({"ok": True, "stream": loaded.stream, "entries": len(loaded.entries), "size": checkpoint.size,
                   "root": checkpoint.root.hex(), "proved": proved})
    else:
        say(f"ok: {proved}")


def _is_receipt(file: Path) -> bool:
    class Format(msgspec.Struct):
        format: str = ""

    try:
        return msgspec.json.decode(file.read_bytes(), type=Format).format.startswith("matchledger-receipt/")
    except msgspec.DecodeError:
        return False


def _check_receipt(file: Path, key: Path, json: bool) -> None:
    receipt = ledger_api.load_receipt(file)
    checkpoint = ledger_api.check_receipt(receipt, Verifier.load(key))
    indexes = [e.index for e in receipt.entries]
    proved = (f"the {len(indexes)} events of source {receipt.source}'s batch (sha256 {receipt.digest}) are entries "
              f"{', '.join(map(str, indexes))} of the log of size {checkpoint.size} (root {checkpoint.root.hex()}), signed by "
              f"{checkpoint.origin}, with the batch's record at entry {receipt.batch.index}")
    if json:
        emit_json({"ok": True, "source": receipt.source, "entries": len(indexes), "size": checkpoint.size,
                   "root": checkpoint.root.hex(), "proved": proved})
    else:
        say(f"ok: {proved}")


@command
def consistency(old: Annotated[int, typer.Option(help="Tree size of the earlier checkpoint.")],
                ledger: LedgerOpt = DEFAULT_LEDGER,
                new: Annotated[int | None, typer.Option(help="Tree size of the later checkpoint (the latest by default).")] = None,
                json: JsonOpt = False) -> None:
    """Prove that an earlier signed checkpoint is a prefix of a later one (RFC 6962 consistency proof)."""
    item = ledger_api.prove_consistency(ledger, old, new)
    first, last = ledger_api.check_consistency(item, ledger_api.load_verifier(ledger))
    if json:
        emit_json({"old": first.size, "new": last.size, "old_root": first.root.hex(), "new_root": last.root.hex(), "proof": item.proof})
    else:
        say(f"ok: the log at {first.size} entries (root {first.root.hex()}) is a prefix of the log at {last.size} "
            f"(root {last.root.hex()}); proof of {len(item.proof)} hashes:")
        for h in item.proof:
            say(f"  {h}")


@command
def keygen(name: Annotated[str, typer.Option(help="Key name, e.g. arbiter-zhang.")],
           out: Annotated[Path, typer.Option(help="Private key file to create (mode 600).")],
           json: JsonOpt = False) -> None:
    """Create an arbiter's Ed25519 key pair for co-signing checkpoints."""
    pub = out.with_suffix(".pub")
    if out.suffix == ".pub":
        raise typer.BadParameter("give the private key's file name (its public key goes beside it as NAME.pub), not a .pub file", param_hint="--out")
    for path in (out, pub):
        check_output(path)
    signer = Signer.generate(name)
    signer.save(out)
    write_output(pub, (str(signer.verifier) + "\n").encode())
    if json:
        emit_json({"private_key": str(out), "public_key": str(pub), "verifier": str(signer.verifier)})
    else:
        say(f"private key: {out}\npublic key: {pub}")


@command
def cosign(key: Annotated[Path, typer.Option(help="The arbiter's private key.")],
           ledger: LedgerOpt = DEFAULT_LEDGER,
           size: Annotated[int | None, typer.Option(help="Tree size of the checkpoint; the latest by default.")] = None,
           json: JsonOpt = False) -> None:
    """Add an arbiter's co-signature to a checkpoint."""
    with ledger_api.Ledger.open(ledger) as writer:
        checkpoint = writer.cosign(Signer.load(key), size)
    if json:
        emit_json({"size": checkpoint.size, "root": checkpoint.root.hex(), "note": checkpoint.note})
    else:
        say(checkpoint.note)
