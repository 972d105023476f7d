"""Commands a log's outside checkers run: check a consistency proof or an audit certificate offline,
and witness a log (remember the last checkpoint seen and prove at each visit that the log only grew)."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import msgspec
import typer

from audit.cli.base import JsonOpt, command, existing_ledger, export_trust, key_option, say_trust, trust_document
from audit.cli.inputs import read_input, read_text
from audit.cli.results import CertificateChecked, ConsistencyChecked, Witnessed
from audit.presentation.output import chosen, emit

if TYPE_CHECKING:
    from ledger import Verifier
    from ledger.witness import ConsistencyFile

KeyOpt = Annotated[Path, key_option("--key", help="The log's verifier key (signer.pub).")]
FETCH_TIMEOUT = 30.0
"""Seconds a witness waits for the log's server."""


@command
def check_consistency(old: Annotated[Path, typer.Argument(help="The earlier checkpoint (a signed note file).")],
                      new: Annotated[Path, typer.Argument(help="The later checkpoint (a signed note file).")],
                      proof: Annotated[Path, typer.Argument(help="The consistency proof (`consistency --out FILE`).")],
                      key: KeyOpt, json: JsonOpt = False) -> None:
    """Check offline, with the public key alone, that the log at OLD is a prefix of the log at NEW."""
    from ledger import Verifier
    from ledger import witness as ledger_witness

    verifier = Verifier.load(key)
    first, last = (ledger_witness.read_checkpoint_note(read_text(p, "a checkpoint (signed note)"), verifier, str(p)) for p in (old, new))
    try:
        ledger_witness.check_growth(first, last, ledger_witness.decode_consistency(read_input(proof, "a consistency proof"), str(proof)))
    except ledger_witness.WitnessError as exc:
        raise _fork_named(exc) from None
    emit(ConsistencyChecked(ok=True, old=first.size, new=last.size, old_root=first.root.hex(), new_root=last.root.hex())
         .told(origin=last.origin), chosen(json))


@command
def check_certificate(file: Annotated[Path, typer.Argument(help="The certificate (`audit --certificate FILE`).")],
                      auditor_key: Annotated[Path, key_option("--auditor-key", help="The auditor's public key (NAME.pub of keygen).")],
                      key: KeyOpt, json: JsonOpt = False) -> None:
    """Check an audit certificate offline: the auditor's signature, the statement, and the log's signed checkpoint it names."""
    from audit.certification.certificate import check_certificate as check
    from audit.certification.certificate import checked_lines, checked_record
    from ledger import Verifier

    checked = check(read_input(file, "an audit certificate (a DSSE envelope)"), Verifier.load(auditor_key), Verifier.load(key), str(file))
    emit(msgspec.convert(checked_record(checked), CertificateChecked).told(said=checked_lines(checked)), chosen(json))


@command
def witness(state: Annotated[Path, typer.Option(help="File that keeps the last checkpoint seen (created on the first run).")],
            ledger: Annotated[Path | None, typer.Option(help="Witness a ledger directory.")] = None,
            url: Annotated[str | None, typer.Option(help="Witness a log served over HTTP (GET /checkpoint, /consistency?old=N&new=M).")] = None,
            key: Annotated[Path | None, key_option(help="The log's verifier key (required with --url; a ledger's signer.pub by default).")] = None,
            json: JsonOpt = False) -> None:
    """Check that a log only grew since the last visit (consistency proof from the remembered checkpoint), then remember the new one."""
    import ledger as ledger_api
    from ledger import Verifier
    from ledger import witness as ledger_witness

    if (ledger is None) == (url is None):
        raise typer.BadParameter("give exactly one of --ledger DIR or --url URL")
    ledger_api.check_output(state, force=True)  # the state is rewritten at each visit, but never inside a ledger or through a link
    if url is not None and key is None:
        raise typer.BadParameter("a served log is checked against a key you hold: give --key PUB", param_hint="--key")
    if ledger is not None:
        existing_ledger(ledger)
        with ledger_api.pinned_key(key):  # the anchor's one path: a directory's signer.pub other than the pin is refused
            verifier = ledger_api.load_verifier(ledger)
            checkpoint = ledger_api.newest_checkpoint(ledger, verifier)
            if checkpoint is None:
                raise ledger_api.LedgerError(f"ledger {ledger} has no checkpoint yet")
            trust = trust_document(ledger, checkpoint)
        note, source = checkpoint.note, (lambda a, b: ledger_witness.consistency_file(ledger, a, b))
    else:
        assert url is not None and key is not None
        verifier = Verifier.load(key)
        note = _fetch(url, "checkpoint").decode()
        source = _UrlProofs(url, verifier, note)
    try:
        seen = ledger_witness.observe(state, verifier, note, source)
    except ledger_witness.WitnessError as exc:
        raise _fork_named(exc) from None
    before, now = seen.before, seen.now
    if url is not None:
        assert key is not None
        trust = export_trust(key, now.size, now.root.hex())
    emit(Witnessed(ok=True, origin=now.origin, size=now.size, root=now.root.hex(), previous_size=before.size if before else None,
                   state=str(state), trust=trust), chosen(json))
    if not json:
        say_trust(trust)


def _fork_named(exc: Exception) -> Exception:
    """Returns a failed consistency check's error, called a fork when the proof does not connect the roots."""
    if str(exc).startswith("consistency from size"):  # the older tree is no prefix of the newer: two histories
        return type(exc)(f"{exc} (a fork: the later log does not extend the earlier one)")
    return exc


class _UrlProofs:
    """Fetches consistency proofs from a log's server: a consistency file (`consistency --out`), or
    what `serve` answers, the two signed checkpoints and the proof, whose sizes its notes give;
    where none is served (a static `export --tiles` directory: 404), computes the proof from the
    tree's hash tiles, as tlog-tiles clients do."""

    def __init__(self, url: str, verifier: Verifier, note: str) -> None:
        self.url = url
        self.verifier = verifier
        self.note = note

    def __call__(self, old: int, new: int) -> ConsistencyFile:
        import msgspec

        from ledger import bundle as ledger_bundle
        from ledger import witness as ledger_witness

        where = f"consistency?{urllib.parse.urlencode({'old': old, 'new': new})}"
        target = f"{self.url.rstrip('/')}/{where}"
        try:
            data = _fetch(self.url, where)
        except FileNotFoundError:
            checkpoint = ledger_witness.read_checkpoint_note(self.note, self.verifier, f"{self.url.rstrip('/')}/checkpoint")
            return ledger_witness.consistency_from_tiles(lambda path: _fetch(self.url, path), checkpoint, old)
        try:
            served = msgspec.json.decode(data, type=ledger_bundle.ConsistencyProof)
        except msgspec.DecodeError:
            return ledger_witness.decode_consistency(data, target)
        first, last = (ledger_witness.read_checkpoint_note(n, self.verifier, target) for n in (served.old, served.new))
        return ledger_witness.ConsistencyFile(ledger_witness.CONSISTENCY_FORMAT, first.size, last.size, served.proof)


def _fetch(url: str, path: str) -> bytes:
    """GETs one resource of a log's server.

    :raises OSError: naming the resource and what went wrong.
    """
    target = f"{url.rstrip('/')}/{path}"
    if urllib.parse.urlsplit(target).scheme not in ("http", "https"):
        raise typer.BadParameter(f"{url!r} is not an http(s) URL", param_hint="--url")
    try:
        with urllib.request.urlopen(target, timeout=FETCH_TIMEOUT) as response:  # noqa: S310 - http(s) only, checked above
            return bytes(response.read())
    except urllib.error.HTTPError as exc:
        raise (FileNotFoundError if exc.code == 404 else OSError)(f"GET {target}: HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, TimeoutError) as exc:
        raise OSError(f"GET {target}: {getattr(exc, 'reason', exc)}") from None
