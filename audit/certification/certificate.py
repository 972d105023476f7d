"""Audit certificates (issue 32.3): what an audit found, as a statement anyone can check offline.

In the spirit of SLSA's Verification Summary Attestation: an in-toto Statement v1 whose subject is
the log at a signed checkpoint (origin, tree size, RFC 6962 root), with a VSA v1 predicate whose
extension field (`AUDIT_FIELD`) says what the audit ran (matchledger's version, the `dirHash` of its
code, the accelerators), the rules it judged by (each profile's digest), each check's counts, the
digests of the findings and warnings, the verdict and its "as of", and the log's signed checkpoint
note itself. Sealed in a DSSE envelope (Ed25519 over PAE) by the auditor's own key (`matchledger
keygen`), never the log's: the log's key vouches for the entries, the auditor's for the judgement.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import importlib
import urllib.parse
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import Any

import msgspec

from audit.certification.certify import Certification
from ledger import Checkpoint, Signer, Verifier
from ledger.anchor import LogKey
from ledger.checkpoints import stored_checkpoint
from ledger.witness import read_checkpoint_note

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://slsa.dev/verification_summary/v1"
PAYLOAD_TYPE = "application/vnd.in-toto+json"
AUDIT_FIELD = "urn:matchledger:audit:v1"
"""The predicate's extension field (VSA: "Producers MAY add extension fields using field names that are URIs")."""
ROOT_DIGEST = "rfc6962"
"""The subject's digest algorithm: the log's RFC 6962 Merkle tree hash at the tree size, hex."""
POLICY_URI = "urn:matchledger:rule-profiles"
LEVEL = "MATCHLEDGER_CERTIFIED"
"""The verified level of a certified log (VSA: custom levels must not start with SLSA_)."""
CERTIFIED, NOT_CERTIFIED = "CERTIFIED", "NOT CERTIFIED"
PACKAGES = ("schemas", "ledger", "replay", "audit")
"""The packages whose .py and .sql files the code fingerprint covers."""


class CertificateError(ValueError):
    """A certificate does not verify, or cannot be written (exit 1)."""


class Resource(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """An in-toto ResourceDescriptor: what is named (by name or URI) and its digests."""

    name: str | None = None
    uri: str | None = None
    digest: dict[str, str]
    annotations: dict[str, int] | None = None


class VerifierId(msgspec.Struct, frozen=True):
    """VSA `verifier`: who judged (the auditor's key) and the versions of what judged."""

    id: str
    version: dict[str, str]


class CheckCounts(msgspec.Struct, frozen=True):
    """One check's counts: items looked at, passed, failed; whether it ran and had anything to look at."""

    check: str
    checked: int
    passed: int
    failed: int
    ran: bool
    applies: bool


class RuleProfile(msgspec.Struct, frozen=True, omit_defaults=True):
    """A rule profile in force: a tournament's (with its rules' digest) or its games' (with their number)."""

    tournament: str | None
    game: str
    profile: str
    rules: str | None = None
    games: int | None = None


class Code(msgspec.Struct, frozen=True, rename="camel"):
    """What ran: matchledger's version, the in-toto `dirHash` of its .py and .sql files, the accelerators."""

    version: str
    dir_hash: str
    files: int
    accelerators: list[str]


class Digested(msgspec.Struct, frozen=True):
    """How many findings (or warnings) and the SHA-256 of their canonical JSON."""

    count: int
    sha256: str


class KeyInUse(msgspec.Struct, frozen=True, rename="camel"):
    """The log key the audit checked the signatures with, and whether the auditor pinned it."""

    name: str
    key_id: str
    pinned: bool


class AuditSummary(msgspec.Struct, frozen=True, rename="camel"):
    """What the audit found, as of when, over which checkpoint, with what code and rules."""

    verdict: str
    reason: str
    as_of: str
    tree_size: int
    unsigned: int
    tournament: str | None
    games: int
    checks: list[CheckCounts]
    findings: Digested
    warnings: Digested
    profiles: list[RuleProfile]
    code: Code
    log_key: KeyInUse
    checkpoint: str
    """The log's signed checkpoint note the subject names (C2SP signed note)."""
    state: Resource | None = None
    """The audit's state kept beside the certificate (its file name and SHA-256), from which `audit --since` continues."""
    since: Resource | None = None
    """The earlier certificate this audit continued from (`audit --since`): its checkpoint's URI and the file's SHA-256."""


class Predicate(msgspec.Struct, frozen=True, rename="camel"):
    """The SLSA VSA v1 predicate, with matchledger's extension field."""

    verifier: VerifierId
    time_verified: str
    resource_uri: str
    policy: Resource
    input_attestations: list[Resource]
    verification_result: str
    verified_levels: list[str]
    slsa_version: str
    audit: AuditSummary = msgspec.field(name=AUDIT_FIELD)


class Statement(msgspec.Struct, frozen=True):
    """An in-toto Statement v1."""

    type: str = msgspec.field(name="_type")
    subject: list[Resource] = msgspec.field(name="subject")
    predicate_type: str = msgspec.field(name="predicateType")
    predicate: Predicate = msgspec.field(name="predicate")


class Signature(msgspec.Struct, frozen=True, kw_only=True):
    """A DSSE signature: an unauthenticated key hint and the base64 signature over PAE."""

    keyid: str = ""
    sig: str


class Envelope(msgspec.Struct, frozen=True, rename="camel"):
    """A DSSE envelope: the base64 payload, its type, its signatures."""

    payload: str
    payload_type: str
    signatures: list[Signature]


@dataclass(frozen=True)
class CheckedCertificate:
    """A certificate that verified: its statement and the log's checkpoint it names."""

    statement: Statement
    checkpoint: Checkpoint

    @property
    def audit(self) -> AuditSummary:
        return self.statement.predicate.audit


def canonical(obj: Any) -> bytes:
    """Returns canonical JSON: keys sorted, no spaces, UTF-8 (what every digest here is taken over)."""
    return msgspec.json.encode(obj, order="sorted")


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pae(payload_type: str, payload: bytes) -> bytes:
    """Returns DSSE's pre-authentication encoding, what the signature covers."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def key_hint(key: Verifier) -> str:
    """Returns a key's DSSE `keyid`: its C2SP name and key id (`arbiter-zhang+1a2b3c4d`)."""
    return f"{key.name}+{key.key_id.hex()}"


def auditor_uri(key: Verifier) -> str:
    return f"urn:matchledger:auditor:{key_hint(key)}"


def log_uri(origin: str) -> str:
    return f"urn:matchledger:log:{urllib.parse.quote(origin, safe='/:.-_~')}"


def finding_records(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Returns findings as `audit --format json` lists them (with the rule file's name of the code)."""
    from replay.protocol import code_name

    return [{**row, "name": code_name(row["code"])} for row in rows]


def code_fingerprint() -> tuple[str, int]:
    """Returns the in-toto `dirHash` of the installed .py and .sql files, and how many: the SHA-256
    of their `sha256sum` lines in path order (`find … | LC_ALL=C sort | xargs sha256sum | sha256sum`)."""
    base = Path(__file__).resolve().parents[2]
    paths = sorted(p.relative_to(base).as_posix() for package in PACKAGES for p in (base / package).rglob("*")
                   if p.suffix in (".py", ".sql") and p.is_file())
    lines = "".join(f"{sha256((base / path).read_bytes())}  {path}\n" for path in paths)
    return sha256(lines.encode()), len(paths)


def accelerators() -> list[str]:
    """Names the compiled code this process runs: the C scanner and splitter, each game's mypyc build."""
    from audit.query.jsonsplit import ACCELERATED as splitter
    from ledger.fastscan import ACCELERATED as scanner

    ran = [name for name, on in (("ledger._fastscan", scanner), ("audit.query._jsonsplit", splitter)) if on]
    for game in ("junqi", "paohuzi"):
        if not (importlib.import_module(f"replay.{game}.fold").__file__ or "").endswith(".py"):
            ran.append(f"replay.{game} (mypyc)")
    return ran


def _profiles(cert: Certification) -> list[RuleProfile]:
    """Returns the profiles in force with their digests (SHA-256 of the recorded profile's canonical JSON)."""
    def digest(text: str | None) -> str | None:
        return None if text is None else "sha256:" + sha256(canonical(msgspec.json.decode(text)))

    return [RuleProfile(p["tournament"], p["game"], digest(p["profile"]) or "", digest(p["rules"]), p["games"]) for p in cert.profiles]


def _checks(cert: Certification) -> list[CheckCounts]:
    return [CheckCounts(c.name, c.checked, c.passed, c.failed, c.ran, c.applies) for c in cert.checks]


def _digested(rows: list[dict[str, Any]]) -> Digested:
    return Digested(len(rows), sha256(canonical(finding_records(rows))))


def _note_resource(checkpoint: Checkpoint) -> Resource:
    """Returns VSA `inputAttestations`' entry for the log's signed checkpoint note: its digest."""
    return Resource(uri=f"{log_uri(checkpoint.origin)}/checkpoint/{checkpoint.size}", digest={"sha256": sha256(checkpoint.note.encode())})


def _policy(profiles: list[RuleProfile]) -> Resource:
    """Returns VSA `policy`: the rule profiles in force, by the digest of their list."""
    return Resource(uri=POLICY_URI, digest={"sha256": sha256(canonical(profiles))})


def statement(cert: Certification, checkpoint: Checkpoint, log: LogKey, auditor: Verifier, now: datetime,
              state: Resource | None = None, since: Resource | None = None) -> Statement:
    """Returns the statement of an audit over the log at `checkpoint`, by `auditor`, naming its state and the certificate it continued."""
    when = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    dir_hash, files = code_fingerprint()
    profiles = _profiles(cert)
    summary = AuditSummary(
        verdict=CERTIFIED if cert.ok else NOT_CERTIFIED, reason=cert.reason, as_of=when, tree_size=checkpoint.size,
        unsigned=cert.log.unsigned, tournament=cert.tournament, games=cert.games, checks=_checks(cert),
        findings=_digested(cert.findings), warnings=_digested(cert.warnings), profiles=profiles,
        code=Code(version("matchledger"), dir_hash, files, accelerators()),
        log_key=KeyInUse(log.verifier.name, log.verifier.key_id.hex(), log.pinned), checkpoint=checkpoint.note, state=state, since=since)
    predicate = Predicate(
        verifier=VerifierId(auditor_uri(auditor), {"matchledger": summary.code.version}), time_verified=when,
        resource_uri=log_uri(checkpoint.origin), policy=_policy(profiles),
        input_attestations=[_note_resource(checkpoint)],
        verification_result="PASSED" if cert.ok else "FAILED", verified_levels=[LEVEL] if cert.ok else ["FAILED"],
        slsa_version="1.0", audit=summary)
    subject = Resource(name=checkpoint.origin, digest={ROOT_DIGEST: checkpoint.root.hex()}, annotations={"treeSize": checkpoint.size})
    return Statement(STATEMENT_TYPE, [subject], PREDICATE_TYPE, predicate)


def seal(payload: bytes, signer: Signer) -> bytes:
    """Returns the DSSE envelope of a payload signed by `signer`, as a file's bytes."""
    sig = base64.b64encode(signer.sign(pae(PAYLOAD_TYPE, payload))).decode()
    envelope = Envelope(base64.b64encode(payload).decode(), PAYLOAD_TYPE, [Signature(keyid=key_hint(signer.verifier), sig=sig)])
    return msgspec.json.format(msgspec.json.encode(envelope)) + b"\n"


def _audited_checkpoint(root: Path, cert: Certification, log: LogKey) -> Checkpoint:
    """Returns the signed checkpoint an audit speaks of: the one it verified the log to, or, when the
    log did not verify, the newest one the log's key signed (whose log it found damaged).

    :raises CertificateError: when no signed checkpoint can be named.
    """
    from ledger import LedgerError, LogReader

    try:
        checkpoint = stored_checkpoint(root, cert.log.size, log.verifier) if cert.log.ok else LogReader(root).signed()
    except (LedgerError, OSError) as exc:
        raise CertificateError(f"没有可引用的签名检查点，未写证书 / no certificate written: no signed checkpoint of the log "
                               f"to name ({exc})") from None
    if cert.log.ok and checkpoint.root.hex() != cert.log.root:
        raise CertificateError(f"未写证书 / no certificate written: the note of size {checkpoint.size} signs root "
                               f"{checkpoint.root.hex()}, the audit verified {cert.log.root}")
    return checkpoint


def check_keys(auditor: Verifier, log: Verifier) -> None:
    """Refuses the log's own key as the auditor's: the log's key vouches for the entries, not for the judgement.

    :raises ValueError: when they are one key (a usage error).
    """
    if auditor.public == log.public:
        raise ValueError(f"审计员须用自己的密钥，而非日志的密钥 / the auditor key {key_hint(auditor)} is the log's own key: "
                         "a certificate is signed by the auditor's key (matchledger keygen)")


def issue(root: Path, cert: Certification, log: LogKey, signer: Signer, now: datetime | None = None,
          state: Resource | None = None, since: Resource | None = None) -> bytes:
    """Returns the certificate of an audit of the ledger at `root`, signed by the auditor's key.

    :raises CertificateError: when no signed checkpoint can be named. :raises ValueError: when the auditor's key is the log's.
    """
    check_keys(signer.verifier, log.verifier)
    checkpoint = _audited_checkpoint(root, cert, log)
    made = statement(cert, checkpoint, log, signer.verifier, now or datetime.now(UTC), state, since)
    return seal(msgspec.json.encode(made), signer)


def _refuse(where: str, zh: str, en: str) -> CertificateError:
    return CertificateError(f"{where}: 证书未通过核验：{zh} / the certificate does not verify: {en}")


def _envelope(data: bytes, where: str) -> Envelope:
    try:
        envelope = msgspec.json.decode(data, type=Envelope)
    except msgspec.DecodeError as exc:
        raise _refuse(where, "不是 DSSE 信封", f"not a DSSE envelope (JSON with payload, payloadType, signatures): {exc}") from None
    if envelope.payload_type != PAYLOAD_TYPE:
        raise _refuse(where, "载荷类型不符", f"payloadType is {envelope.payload_type!r}, expected {PAYLOAD_TYPE!r}")
    return envelope


def _b64(text: str, what: str, where: str) -> bytes:
    """Decodes standard or URL-safe base64 (DSSE verifiers must accept either)."""
    try:
        return base64.b64decode(text.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        raise _refuse(where, f"{what} 不是 base64", f"its {what} is not base64") from None


def _signed_payload(envelope: Envelope, auditor: Verifier, where: str) -> bytes:
    """Returns the payload once the auditor's signature over its PAE verifies."""
    payload = _b64(envelope.payload, "payload", where)
    mine = [s for s in envelope.signatures if s.keyid in ("", key_hint(auditor))]
    if not mine:
        others = ", ".join(s.keyid for s in envelope.signatures) or "none"
        raise _refuse(where, f"没有审计员 {key_hint(auditor)} 的签名", f"it carries no signature by the auditor key "
                      f"{key_hint(auditor)} (signed by: {others})")
    if not any(auditor.verifies(pae(envelope.payload_type, payload), _b64(s.sig, "signature", where)) for s in mine):
        raise _refuse(where, f"审计员 {key_hint(auditor)} 的签名不符，证书在签名后被改动", f"the signature by {key_hint(auditor)} "
                      "does not verify over the payload: the certificate was changed after it was signed, or another key signed it")
    return payload


def _statement(payload: bytes, where: str) -> Statement:
    try:
        made = msgspec.json.decode(payload, type=Statement)
    except msgspec.DecodeError as exc:
        raise _refuse(where, "声明格式不符", f"the statement is not an audit certificate: {exc}") from None
    if (made.type, made.predicate_type, len(made.subject)) != (STATEMENT_TYPE, PREDICATE_TYPE, 1):
        raise _refuse(where, "声明类型不符", f"expected one subject in a {STATEMENT_TYPE} with predicate {PREDICATE_TYPE}, got "
                      f"{len(made.subject)} in a {made.type} with {made.predicate_type}")
    return made


def _contradictions(made: Statement, auditor: Verifier) -> list[str]:
    """Returns where the statement contradicts itself or its signer (what a signature cannot vouch for)."""
    p, a = made.predicate, made.predicate.audit
    passed, failed = a.verdict == CERTIFIED, sum(1 for c in a.checks if c.failed)
    wrong = [
        (p.verifier.id != auditor_uri(auditor), f"verifier {p.verifier.id} is not the signing key {auditor_uri(auditor)}"),
        (a.verdict not in (CERTIFIED, NOT_CERTIFIED), f"verdict {a.verdict!r} is neither {CERTIFIED} nor {NOT_CERTIFIED}"),
        (p.verification_result != ("PASSED" if passed else "FAILED"), f"verificationResult {p.verification_result} with verdict {a.verdict}"),
        (p.verified_levels != ([LEVEL] if passed else ["FAILED"]), f"verifiedLevels {p.verified_levels} with verdict {a.verdict}"),
        (passed and (a.findings.count or a.games == 0 or failed), f"verdict {CERTIFIED} with {a.findings.count} findings, "
         f"{failed} failed checks and {a.games} games"),
        (p.time_verified != a.as_of, f"timeVerified {p.time_verified} is not the verdict's as-of {a.as_of}"),
        (p.policy != _policy(a.profiles), "the policy digest is not the digest of the rule profiles listed"),
    ]
    wrong += [(c.passed != c.checked - c.failed, f"check {c.check}: passed {c.passed} is not checked {c.checked} − failed {c.failed}")
              for c in a.checks]
    return [why for bad, why in wrong if bad]


def _checkpoint(made: Statement, log: Verifier, where: str) -> Checkpoint:
    """Verifies the embedded checkpoint note by the log's key and that the subject names it.

    :raises CertificateError: naming each field that differs from the signed note.
    """
    from ledger import LedgerError

    a, subject = made.predicate.audit, made.subject[0]
    try:
        checkpoint = read_checkpoint_note(a.checkpoint, log, "the certificate's checkpoint note")
    except LedgerError as exc:
        raise _refuse(where, f"所附检查点未经日志公钥 {log.name} 签名", str(exc)) from None
    uri = log_uri(checkpoint.origin)
    fields = [("subject name", subject.name, checkpoint.origin),
              ("subject treeSize", (subject.annotations or {}).get("treeSize"), checkpoint.size),
              (f"subject digest {ROOT_DIGEST}", subject.digest.get(ROOT_DIGEST), checkpoint.root.hex()),
              ("treeSize", a.tree_size, checkpoint.size), ("resourceUri", made.predicate.resource_uri, uri),
              ("inputAttestations", made.predicate.input_attestations, [_note_resource(checkpoint)])]
    differ = [f"{name} {claimed!r} (the note's: {signed!r})" for name, claimed, signed in fields if claimed != signed]
    if differ:
        raise _refuse(where, "主体与所附签名检查点不符", f"the statement does not name the log's signed checkpoint "
                      f"({checkpoint.origin} at size {checkpoint.size}): {'; '.join(differ)}")
    return checkpoint


def check_certificate(data: bytes, auditor: Verifier, log: Verifier, where: str) -> CheckedCertificate:
    """Verifies a certificate offline: the auditor's signature over the envelope, the statement's
    shape and consistency, and the log's signed checkpoint its subject names.

    :raises CertificateError: saying what does not verify. :raises ValueError: when the auditor's key is the log's.
    """
    check_keys(auditor, log)
    made = _statement(_signed_payload(_envelope(data, where), auditor, where), where)
    wrong = _contradictions(made, auditor)
    if wrong:
        raise _refuse(where, "声明自相矛盾", "; ".join(wrong))
    return CheckedCertificate(made, _checkpoint(made, log, where))


def write_certificate(path: Path, root: Path, cert: Certification, log: LogKey, signer: Signer, force: bool = False,
                      state: bytes | None = None, since: Resource | None = None) -> dict[str, Any]:
    """Writes the certificate of an audit to `path` (never inside a ledger), and its state beside it
    (`audit --since` continues from it); returns what a JSON output says of them.

    :raises CertificateError: when no signed checkpoint can be named. :raises OutputRefused: as `ledger.check_output`.
    """
    from ledger import write_output

    named = None if state is None else state_resource(path, state)
    data = issue(root, cert, log, signer, state=named, since=since)
    if state is not None:
        write_output(state_path(path), state, force)
    write_output(path, data, force)
    told = {"path": str(path), "sha256": sha256(data), "auditor": key_hint(signer.verifier)}
    return told if state is None else {**told, "state": str(state_path(path)), "state_sha256": sha256(state)}


def state_path(certificate: Path) -> Path:
    """Returns where a certificate's audit state is kept: beside it (`CERT.state`, read by `audit --since`)."""
    return certificate.with_name(certificate.name + ".state")


def state_resource(certificate: Path, state: bytes) -> Resource:
    """Returns how a certificate names its state: the file's name beside it and its SHA-256."""
    return Resource(name=state_path(certificate).name, digest={"sha256": sha256(state)})


def written_line(written: dict[str, Any]) -> str:
    """Says where the certificate went and who signed it, zh-Hans first."""
    line = (f"审计证书已写入 {written['path']}（审计员 {written['auditor']} 签名）/ certificate written to {written['path']}, "
            f"signed by the auditor key {written['auditor']} (sha256 {written['sha256']})")
    if "state" in written:
        line += f"; 审计状态 / its audit state {written['state']} (sha256 {written['state_sha256']})"
    if "since" in written:
        s = written["since"]
        line += (f"\n增量审计：自 {s['path']} 的检查点 {s['from']} 至 {s['to']}，新增 {s['entries']} 个条目，重放 {s['games']} 局 / "
                 f"incremental audit since {s['path']}: checkpoint {s['from']} proved a prefix of {s['to']} (compact range), "
                 f"{s['entries']} new entries, {s['games']} games folded again")
    return line


def checked_record(checked: CheckedCertificate) -> dict[str, Any]:
    """Returns what `check-certificate --json` prints: the verdict, the checkpoint, and the whole statement."""
    a, cp = checked.audit, checked.checkpoint
    return {"ok": True, "verdict": a.verdict, "certified": a.verdict == CERTIFIED, "reason": a.reason, "as_of": a.as_of,
            "origin": cp.origin, "size": cp.size, "root": cp.root.hex(), "auditor": checked.statement.predicate.verifier.id,
            "statement": msgspec.to_builtins(checked.statement)}


def checked_lines(checked: CheckedCertificate) -> list[str]:
    """Says what a certificate that verified states, zh-Hans first with English beside."""
    a, cp, p = checked.audit, checked.checkpoint, checked.statement.predicate
    return [f"证书有效：审计员 {p.verifier.id} 签名，所附检查点经日志公钥签名 / ok: the certificate verifies: signed by "
            f"{p.verifier.id}; the log's signed checkpoint of {cp.origin} at size {cp.size} (root {cp.root.hex()}) is the subject",
            f"结论（截至 {a.as_of}）：{a.verdict} / verdict as of {a.as_of}: {a.verdict}: {a.reason}; {a.games} games, "
            f"{a.findings.count} findings (sha256 {a.findings.sha256}), {a.warnings.count} warnings",
            f"代码 / code: matchledger {a.code.version}, dirHash {a.code.dir_hash} ({a.code.files} files), accelerators: "
            f"{', '.join(a.code.accelerators) or 'none'}",
            f"日志公钥{'已固定' if a.log_key.pinned else '未固定'} / the audit's log key {a.log_key.name} (id {a.log_key.key_id}) was "
            f"{'pinned' if a.log_key.pinned else 'taken from the ledger directory, unpinned'}",
            *([f"审计状态 / audit state: {a.state.name} (sha256 {a.state.digest.get('sha256')}), what `audit --since` continues from"]
              if a.state is not None else []),
            *([f"接续 / continues the certificate of {a.since.uri} (sha256 {a.since.digest.get('sha256')})"] if a.since is not None else [])]
