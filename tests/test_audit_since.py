"""Certifications that chain (issue 32.3): `audit --since CERT` verifies the earlier certificate,
proves the log it certified a prefix of the log now, audits only what was added from the state the
certificate names, and gives a full audit's verdict, findings and counts. Threats: a forged or
other auditor's certificate, another log's, a log rewritten before the cut, an altered state."""

from __future__ import annotations

import json
import os
import random
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from audit.certification.certificate import CertificateError, write_certificate
from audit.certification.certify import Certification, certify
from audit.certification.scoped import SCOPED
from audit.certification.since import SinceRefused, audit_keeping_state, audit_since
from ledger import LogReader, Signer, init, record
from ledger import anchor as ledger_anchor
from schemas import decode_stored
from tests.ledger_support import cli

SEED = int(os.environ.get("MATCHLEDGER_SINCE_SEED", random.randrange(1 << 30)))
CUTS = int(os.environ.get("MATCHLEDGER_SINCE_CUTS", "2"))
"""Random cut points besides the chosen ones (the seed is printed: MATCHLEDGER_SINCE_SEED replays a run)."""


@dataclass
class Season:
    """The arbitrated checkers cup followed by Paohuzi tournaments: one with a wrong score claimed, one
    of three rounds whose second round is seated against the rules (附录三: audit.W04), one of two rounds
    with a table of its first board dealt another deck (第五条: paohuzi.D06)."""

    entries: list[bytes]
    kinds: list[str]
    streams: list[str]


@pytest.fixture(scope="module")
def season(cup: Any, tmp_path_factory: pytest.TempPathFactory) -> Season:
    root = tmp_path_factory.mktemp("since") / "ledger"
    shutil.copytree(cup.root, root)
    shutil.rmtree(root / "derived", ignore_errors=True)
    done = cli("simulate", "paohuzi", "--tournament", "--players", "6", "--rounds", "1", "--seed", "11", "--inject", "wrong-score",
               "--ledger", str(root), "--json")
    assert done.exit_code == 0, done.output
    for rounds, seed, fault in (("3", "12", "wrong-seating"), ("2", "13", "tampered-deal")):
        done = cli("simulate", "paohuzi", "--tournament", "--players", "6", "--rounds", rounds, "--seed", seed, "--inject", fault,
                   "--ledger", str(root), "--json")
        assert done.exit_code == 0, done.output
    log = LogReader(root).packed()
    entries = [bytes(log.data[log.ends[i]:log.ends[i + 1]]) for i in range(len(log))]
    events = decode_stored(entries)
    return Season(entries, [e.kind for e in events], [e.stream for e in events])


@pytest.fixture(scope="module")
def auditor(tmp_path_factory: pytest.TempPathFactory) -> tuple[Signer, Path]:
    keys = tmp_path_factory.mktemp("auditor")
    assert cli("keygen", "--name", "auditor-wu", "--out", str(keys / "wu.key")).exit_code == 0
    return Signer.load(keys / "wu.key"), keys / "wu.key"


def _recorded(root: Path, lines: list[bytes]) -> None:
    record(root, [line + b"\n" for line in lines], own=True)


def _cuts(s: Season, rng: random.Random) -> list[int]:
    """Cut points: inside a game, between rounds, before a ruling that changes an earlier round's
    result, before the last round's seating (the withdrawal), inside a Paohuzi game, and random ones."""
    kinds = s.kinds
    inside = kinds.index("game.started") + 5
    between = kinds.index("tournament.round_seated", inside)
    ruling = kinds.index("game.ruling")
    late_seating = max(i for i, k in enumerate(kinds) if k == "tournament.round_seated" and s.streams[i] == s.streams[between])
    paohuzi = kinds.index("paohuzi.dealt") + 3
    seated = [i for i, k in enumerate(kinds) if k == "tournament.round_seated" and s.streams[i] == "paohuzi-cup-12"]
    misseated, last_round = seated[1] + 1, seated[-1] + 1  # after the wrong seating; after the last round's
    dealt = max(i for i, k in enumerate(kinds) if k == "tournament.round_seated" and s.streams[i] == "paohuzi-cup-13")  # its 2nd round
    picked = {inside, between, ruling, late_seating, paohuzi, misseated, last_round, dealt, dealt + 40,
              *(rng.randrange(1, len(kinds)) for _ in range(CUTS))}
    return sorted(picked)


def _verdict(cert: Certification) -> dict[str, Any]:
    """What a certificate states of an audit: verdict, reason, counts, findings, warnings, profiles, as-of."""
    return {"verdict": cert.verdict(), "ok": cert.ok, "size": cert.log.size, "root": cert.log.root, "unsigned": cert.log.unsigned,
            "games": cert.games, "findings": cert.findings, "warnings": cert.warnings, "profiles": cert.profiles, "as_of": cert.as_of,
            "checks": [(c.name, c.checked, c.failed, c.examples, c.ran, c.applies) for c in cert.checks]}


def _certificate(root: Path, out: Path, cert: Certification, state: bytes | None, signer: Signer) -> bytes:
    write_certificate(out, root, cert, ledger_anchor.log_key(root), signer, force=True, state=state)
    return out.read_bytes()


def test_incremental_equals_full_at_random_cuts(season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Differential (issue 32.3): a chain of certificates, each audited `--since` the one before
    from a cut, states the verdict, findings and counts a full audit of the same log states."""
    print(f"MATCHLEDGER_SINCE_SEED={SEED}")
    signer = auditor[0]
    cuts = _cuts(season, random.Random(SEED))
    root = tmp_path / "ledger"
    init(root)
    _recorded(root, season.entries[:cuts[0]])
    cert, state = audit_keeping_state(root, tmp_path / "c0.json")
    earlier, done = tmp_path / "c0.json", cuts[0]
    data = _certificate(root, earlier, cert, state, signer)
    for n, cut in enumerate([*cuts[1:], len(season.entries)], 1):
        _recorded(root, season.entries[done:cut])
        since = audit_since(root, data, earlier, signer.verifier, ledger_anchor.log_key(root).verifier, tmp_path / f"c{n}.json")
        assert since.entries == cut - done
        assert _verdict(since.cert) == _verdict(certify(root)), (done, cut)
        assert set(SCOPED) <= set(_state_rows(earlier)), earlier  # the per-game queries were answered from the state
        earlier, done = tmp_path / f"c{n}.json", cut
        data = _certificate(root, earlier, since.cert, since.state, signer)
    assert not _verdict(certify(root))["ok"]  # the wrong score is found, by both
    assert any(f["code"] == "paohuzi.E01" for f in since.cert.findings)  # the claimed score, found false by the engine
    assert any(f["code"] == "audit.W04" for f in since.cert.findings)  # the wrong seating, judged before a cut and kept
    assert any(f["code"] == "paohuzi.D06" for f in since.cert.findings)  # the other deck, on a board judged before a cut


def test_a_round_seated_or_a_board_dealt_before_the_earlier_audit_is_not_judged_again(
        season: Season, auditor: tuple[Signer, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A round's seating is judged on the standings before it was seated (附录三, tournament.md §4): a
    later game of its own round cannot change it; a board's deals are compared among its own tables
    (第五条). `--since` takes every round seated before the earlier certificate, and every board
    without a touched game, from its state: it judges no seating again (no standings as of a seating)
    and one board, and states the findings a full audit states (audit.W04, paohuzi.D06 among them)."""
    import audit.query.tournament_checks as checks

    signer = auditor[0]
    root = tmp_path / "ledger"
    init(root)
    cut = len(season.entries) - 5  # inside the last game of the last round
    _recorded(root, season.entries[:cut])
    cert, state = audit_keeping_state(root, tmp_path / "c0.json")
    data = _certificate(root, tmp_path / "c0.json", cert, state, signer)
    _recorded(root, season.entries[cut:])
    judged: list[int | None] = []
    dealt: list[str] = []
    as_of, board = checks.as_of, checks.board_deal_findings

    def counted(session: Any, entry: int | None) -> Any:
        judged.append(entry)
        return as_of(session, entry)

    def compared(rows: list[dict[str, Any]]) -> Any:
        dealt.append(rows[0]["board"])
        return board(rows)

    import audit.certification.since as since_module

    read: list[tuple[int, int, set[str]]] = []  # the bodies the state kept, those the checks read, and their streams
    bodies_read = since_module._bodies_read

    def reading(bodies: Any, projection: Any, *args: Any) -> Any:
        got = bodies_read(bodies, projection, *args)
        read.append((len(bodies.entries), len(got.entries), {season.streams[e] for e in got.entries if e < len(season.streams)}))
        return got

    monkeypatch.setattr(checks, "as_of", counted)
    monkeypatch.setattr(checks, "board_deal_findings", compared)
    monkeypatch.setattr(since_module, "_bodies_read", reading)
    since = audit_since(root, data, tmp_path / "c0.json", signer.verifier, ledger_anchor.log_key(root).verifier, tmp_path / "c1.json")
    assert judged == [] and len(dealt) == 1, (judged, dealt)
    (kept, taken, streams), = read  # only the bodies of the games on the touched game's board (第五条), not every kept one
    starts = decode_stored([e for e, k in zip(season.entries, season.kinds) if k == "game.started"])
    boards = {start.stream: (getattr(start, "tournament"), getattr(start, "board")) for start in starts}  # noqa: B009 (game.started's)
    last = next(s for s in reversed(season.streams) if s in boards)  # the game the cut is inside
    on_board = {stream for stream, on in boards.items() if on == boards[last]}
    assert last in streams and streams <= on_board and 0 < taken < kept, (streams, on_board, taken, kept)
    judged.clear()
    dealt.clear()
    full = certify(root)
    assert judged and len(dealt) > 1, "the full audit judges every round after the first as of its seating, and every board"
    assert _verdict(since.cert) == _verdict(full)
    assert {"audit.W04", "paohuzi.D06"} <= {f["code"] for f in since.cert.findings}


def _state_rows(certificate: Path) -> dict[str, Any]:
    """Returns the scoped queries' rows a certificate's state keeps."""
    manifest = json.loads(certificate.with_name(certificate.name + ".state").read_bytes())
    return json.loads((certificate.with_name(certificate.name + ".state.d") / manifest["files"]["checks.rows"]).read_bytes())


def test_nothing_new_since_is_the_earlier_verdict(season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Issue 32.3: `--since` at the certified checkpoint itself (nothing signed since) reads nothing
    new, folds no game, and states the full audit's verdict and counts from the state alone."""
    root = tmp_path / "ledger"
    init(root)
    _recorded(root, season.entries[:len(season.entries) // 2])
    cert, state = audit_keeping_state(root, tmp_path / "c.json")
    data = _certificate(root, tmp_path / "c.json", cert, state, auditor[0])
    done = audit_since(root, data, tmp_path / "c.json", auditor[0].verifier, ledger_anchor.log_key(root).verifier, tmp_path / "n.json")
    assert (done.entries, done.games) == (0, 0)
    assert _verdict(done.cert) == _verdict(certify(root)) == _verdict(cert)


@pytest.fixture
def half(season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> Path:
    """A ledger certified at half the season (c.json beside it), then given the other half."""
    root = tmp_path / "ledger"
    init(root)
    _recorded(root, season.entries[:len(season.entries) // 2])
    cert, state = audit_keeping_state(root, tmp_path / "c.json")
    _certificate(root, tmp_path / "c.json", cert, state, auditor[0])
    _recorded(root, season.entries[len(season.entries) // 2:])
    return root


def _since(root: Path, key: Path, *extra: str) -> Any:
    return cli("audit", "--ledger", str(root), "--key", str(root / "signer.pub"), "--since", str(root.parent / "c.json"),
               "--certificate", str(root.parent / "new.json"), "--auditor-key", str(key), "--json", "-q", *extra)


def test_the_cli_chains_and_the_new_certificate_names_the_earlier(half: Path, auditor: tuple[Signer, Path]) -> None:
    """`audit --since` (issue 32.3): exit 0, the full audit's JSON, and a certificate whose state and
    `since` fields name the state beside it and the earlier certificate, which check-certificate verifies."""
    done = _since(half, auditor[1])
    assert done.exit_code == 1, done.output  # the season's wrong score: NOT CERTIFIED, as in full
    got, full = json.loads(done.stdout), json.loads(cli("audit", "--ledger", str(half), "--key", str(half / "signer.pub"), "--json", "-q").stdout)
    assert {k: v for k, v in got.items() if k != "certificate"} == full
    since = got["certificate"]["since"]
    assert (since["from"], since["to"]) == (len(LogReader(half).packed()) - since["entries"], len(LogReader(half).packed()))
    checked = cli("check-certificate", str(half.parent / "new.json"), "--auditor-key", str(auditor[1].with_suffix(".pub")),
                  "--key", str(half / "signer.pub"), "--json")
    assert checked.exit_code == 0, checked.output
    said = cli("check-certificate", str(half.parent / "new.json"), "--auditor-key", str(auditor[1].with_suffix(".pub")),
               "--key", str(half / "signer.pub")).output
    assert "审计状态 / audit state: new.json.state" in said and "接续 / continues the certificate of urn:matchledger:log:" in said
    audit = json.loads(checked.stdout)["statement"]["predicate"]["urn:matchledger:audit:v1"]
    assert audit["state"]["name"] == "new.json.state" and audit["since"]["uri"].endswith(f"/checkpoint/{since['from']}")


def test_a_certificate_by_another_auditor_is_refused(half: Path, tmp_path: Path) -> None:
    """Threat: a certificate the auditor did not sign (another auditor's key, or a forged one) is not continued: exit 1."""
    assert cli("keygen", "--name", "auditor-zhao", "--out", str(tmp_path / "zhao.key")).exit_code == 0
    done = _since(half, tmp_path / "zhao.key")
    assert done.exit_code == 1
    assert "证书未通过核验" in done.output and "carries no signature by the auditor key auditor-zhao" in done.output


def test_a_forged_certificate_is_refused(half: Path, auditor: tuple[Signer, Path]) -> None:
    """Threat: the earlier certificate altered after it was signed (its checkpoint moved on) is refused: exit 1."""
    path = half.parent / "c.json"
    envelope = json.loads(path.read_bytes())
    envelope["payload"] = envelope["payload"][:-8] + ("A" * 8 if envelope["payload"][-8:] != "A" * 8 else "B" * 8)
    path.write_text(json.dumps(envelope))
    done = _since(half, auditor[1])
    assert done.exit_code == 1 and "证书未通过核验" in done.output, done.output


def test_another_logs_certificate_is_refused(half: Path, season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Threat: a certificate of another log (its checkpoint signed by another log key) is not continued: exit 1."""
    other = tmp_path / "other" / "ledger"
    init(other)
    _recorded(other, season.entries[:100])
    cert, state = audit_keeping_state(other, tmp_path / "c.json")
    _certificate(other, tmp_path / "c.json", cert, state, auditor[0])  # the same name: c.json beside `half`
    done = _since(half, auditor[1])
    assert done.exit_code == 1 and "所附检查点未经日志公钥" in done.output, done.output


def test_a_log_rewritten_before_the_cut_is_refused(season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Threat (DESIGN "Nothing unsigned counts", a split view): the log's key holder rewrites the
    certified prefix and signs the new history; the new entries do not extend the certified tree: exit 1."""
    from audit.simulator.simulate import simulate_games

    root, forged = tmp_path / "ledger", tmp_path / "forged"
    init(root)
    shutil.copytree(root, forged)  # the same key and origin, an empty log
    cut = len(season.entries) // 3
    _recorded(root, season.entries[:cut])
    cert, state = audit_keeping_state(root, tmp_path / "c.json")
    data = _certificate(root, tmp_path / "c.json", cert, state, auditor[0])
    for n in range(50):
        if len(LogReader(forged).packed()) > cut:
            break
        simulate_games(forged, "checkers", 2, SEED + n)
    with pytest.raises(CertificateError, match="日志不是所证日志的延续.*does not extend the log certified at checkpoint"):
        audit_since(forged, data, tmp_path / "c.json", auditor[0].verifier, ledger_anchor.log_key(forged).verifier, tmp_path / "n.json")
    done = cli("audit", "--ledger", str(forged), "--since", str(tmp_path / "c.json"), "--certificate", str(tmp_path / "n.json"),
               "--auditor-key", str(auditor[1]), "-q", "--full-if-needed")
    assert done.exit_code == 1 and "does not extend" in done.output, done.output  # no fallback: a finding


def test_a_checkpoint_forged_between_the_two_is_refused(season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Threat: a checkpoint note between the certified one and the newest altered (its root moved):
    `verify` checks successive checkpoints, and so does `--since` (exit 1), as the full audit refuses it."""
    from ledger.checkpoints import checkpoint_path

    root = tmp_path / "ledger"
    init(root)
    third = len(season.entries) // 3
    _recorded(root, season.entries[:third])
    cert, state = audit_keeping_state(root, tmp_path / "c.json")
    data = _certificate(root, tmp_path / "c.json", cert, state, auditor[0])
    _recorded(root, season.entries[third:2 * third])
    _recorded(root, season.entries[2 * third:])
    note = checkpoint_path(root, 2 * third)
    lines = note.read_text().split("\n")
    lines[2] = ("A" if lines[2][0] != "A" else "B") + lines[2][1:]  # the root line
    note.write_text("\n".join(lines))
    with pytest.raises(CertificateError, match=f"checkpoint {2 * third}, signed between the certified one and the newest, does not verify"):
        audit_since(root, data, tmp_path / "c.json", auditor[0].verifier, ledger_anchor.log_key(root).verifier, tmp_path / "n.json")
    assert not certify(root).log.ok


def _flip_a_byte(path: Path) -> None:
    """Alters one bit of a file in its middle: the insider's smallest change."""
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


def test_an_altered_state_is_refused_and_never_silently_replaced(half: Path, auditor: tuple[Signer, Path]) -> None:
    """Threat: the state beside the certificate altered (one byte): refused with exit 2, saying so;
    with --full-if-needed the audit runs in full, says why, and its verdict is the full one."""
    state = half.parent / "c.json.state"
    _flip_a_byte(state)
    done = _since(half, auditor[1])
    assert done.exit_code == 2, done.output
    assert "审计状态文件与证书不符，已被改动" in done.output and "nothing audited" in done.output
    full = _since(half, auditor[1], "--full-if-needed")
    assert full.exit_code == 1  # the season's wrong score
    assert "auditing in full (--full-if-needed): 审计状态文件与证书不符" in full.stderr
    assert "since" not in json.loads(full.stdout)["certificate"]
    state.unlink()
    missing = _since(half, auditor[1], "--force")
    assert missing.exit_code == 2 and "the audit state" in missing.output and "cannot be read" in missing.output


def test_a_state_of_other_code_is_not_continued(half: Path, auditor: tuple[Signer, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A state derived by other code (the code fingerprint differs) is not continued: exit 2."""
    import audit.certification.since as since

    monkeypatch.setattr(since, "code_fingerprint", lambda: "other")
    with pytest.raises(SinceRefused, match="derived by other code"):
        audit_since(half, (half.parent / "c.json").read_bytes(), half.parent / "c.json", auditor[0].verifier,
                    ledger_anchor.log_key(half).verifier, half.parent / "n.json")


@pytest.mark.parametrize("seed", range(40))
def test_the_bodies_merged_with_the_held_entries_are_each_entry_once_in_order(seed: int) -> None:
    """The checks read the held entries and the kept bodies as one `body` column (deal_events.sql,
    第五条; huxi_claims.sql): `Held.merged` gives every entry either holds, once, in entry order,
    with its stored bytes, as a merge entry by entry does."""
    from array import array

    from audit.query.projection import Held

    rng = random.Random(seed)
    print(f"seed {seed}")
    log = {e: json.dumps({"entry": e, "pad": "x" * rng.randrange(8)}).encode() for e in range(rng.randrange(1, 300))}

    def holding(entries: list[int]) -> Held:
        return Held(len(log), array("q"), b"", array("q", [0])).with_entries([(e, log[e]) for e in sorted(entries)], len(log))

    a, b = (holding(rng.sample(sorted(log), rng.randrange(0, len(log) + 1))) for _ in range(2))
    merged = a.merged(b)
    want = sorted(set(a.entries) | set(b.entries))
    assert list(merged.entries) == want
    assert [merged.stored(k) for k in range(len(want))] == [log[e] for e in want]
    assert merged.ends[0] == 0 and len(merged.data) == merged.ends[-1]
    joined = a.table(b).to_pydict()  # what `audit --since` gives DuckDB to join to `events`: the same, each entry once
    assert sorted(zip(joined["entry"], joined["body"])) == [(e, log[e].decode()) for e in want]


def test_the_state_holds_every_body_a_check_reads() -> None:
    """The state keeps the stored bytes of `BODY_KINDS` only: every certification query that reads
    `body` (the checks, and deal_events.sql of the deal check, 第五条) reads events of those kinds."""
    import re

    from audit.certification.since import BODY_KINDS
    from audit.query.db import QUERIES

    readers = [q for q in QUERIES.values() if (q.check or q.name == "deal_events") and re.search(r"\bbody\b", q.sql)]
    assert {q.name for q in readers} >= {"deal_events", "huxi_claims"}
    for query in readers:
        kinds = set(re.findall(r"'([a-z]+\.[a-z_]+)'", query.sql))
        assert kinds and kinds <= set(BODY_KINDS), (query.name, sorted(kinds - set(BODY_KINDS)))


def test_an_altered_state_file_is_refused(half: Path, auditor: tuple[Signer, Path]) -> None:
    """Threat: one of the state's files beside the certificate (`c.json.state.d/`) altered or removed:
    the state names each file's SHA-256, so `--since` refuses it (exit 2) and never continues from it."""
    import hashlib

    files = sorted((half.parent / "c.json.state.d").iterdir())
    assert files and all(f.name.endswith(hashlib.sha256(f.read_bytes()).hexdigest()) for f in files)  # named by content
    victim = next(f for f in files if f.name.startswith("steps-"))
    _flip_a_byte(victim)
    done = _since(half, auditor[1])
    assert done.exit_code == 2, done.output
    assert "审计状态文件缺失或被改动" in done.output and "its steps file is missing or does not match its state" in done.output
    victim.unlink()
    assert _since(half, auditor[1]).exit_code == 2


def test_the_new_state_reuses_the_earlier_files(half: Path, auditor: tuple[Signer, Path]) -> None:
    """Issue 32.1: the state is a small manifest; the parts of tables that only grew are the earlier
    state's files (linked, not written again), and the new state continues as the first did."""
    assert _since(half, auditor[1]).exit_code == 1
    manifest = json.loads((half.parent / "new.json.state").read_bytes())
    earlier, now = half.parent / "c.json.state.d", half.parent / "new.json.state.d"
    files = set(manifest["projection"]["files"].values()) | set(manifest["files"].values())
    assert files == {f.name for f in now.iterdir()}
    assert any((earlier / f).exists() and os.path.samefile(earlier / f, now / f) for f in files)


def test_the_new_entries_stream_index_is_checked(half: Path, season: Season, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Threat: the stream index lists a new entry at the wrong place (reads of it would return
    another event): the full audit fails the log on it, and so does `--since` (no state is kept)."""
    from array import array

    from ledger.index import stream_path

    path = stream_path(half, season.streams[-1])
    records = array("Q")
    records.frombytes(path.read_bytes()[-16:])
    path.write_bytes(path.read_bytes()[:-16] + array("Q", [records[0] - 1, records[1]]).tobytes())
    full = certify(half)
    assert not full.log.ok and (full.log.error or "").startswith("stream index:")
    since = audit_since(half, (half.parent / "c.json").read_bytes(), half.parent / "c.json", auditor[0].verifier,
                        ledger_anchor.log_key(half).verifier, tmp_path / "n.json")
    assert not since.cert.ok and since.state is None
    said = since.cert.log.error or ""
    assert said.startswith("stream index: 流索引与账本不符 / the index of stream") and season.streams[-1] in said


def test_a_checkpoint_signed_during_the_audit_is_not_a_failure(season: Season, auditor: tuple[Signer, Path], tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """A log signed again while the full audit runs (the verification read checkpoint A, the
    projection the newer B): the audit certifies B, the checkpoint it read, once the entries
    projected give B's signed root, instead of failing; `--since` continues from it."""
    from dataclasses import replace

    import audit.certification.since as since_mod

    root = tmp_path / "ledger"
    init(root)
    _recorded(root, season.entries[:200])
    first = LogReader(root).signed()
    _recorded(root, season.entries[200:300])
    opened = since_mod.open_verified_session

    def verified_earlier(*args: Any) -> Any:  # the verification read the log before the second batch was signed
        report, session = opened(*args)
        return replace(report, size=first.size, root=first.root.hex(), signed=first.size), session

    monkeypatch.setattr(since_mod, "open_verified_session", verified_earlier)
    cert, state = audit_keeping_state(root, tmp_path / "c.json")
    assert state is not None and (cert.log.size, cert.log.root) == (300, LogReader(root).signed().root.hex())
    assert _verdict(cert) == _verdict(certify(root))
    data = _certificate(root, tmp_path / "c.json", cert, state, auditor[0])
    _recorded(root, season.entries[300:400])
    done = audit_since(root, data, tmp_path / "c.json", auditor[0].verifier, ledger_anchor.log_key(root).verifier, tmp_path / "n.json")
    assert _verdict(done.cert) == _verdict(certify(root))


def test_the_scoped_queries_are_per_game_and_in_stream_order() -> None:
    """Issue 32.4: the queries an incremental audit runs over the touched games only each give rows
    led by their game's stream and ordered by it first, so the earlier rows of the others merge in
    place (audit/certification/scoped.py); each is a certification check."""
    import re

    from audit.certification.scoped import SCOPED
    from audit.query.db import QUERIES

    for name in SCOPED:
        query = QUERIES[name]
        assert query.check, name
        order = re.findall(r"ORDER BY\s+([^,;\n]+)", query.sql)[-1].strip()
        assert order == "1" or re.fullmatch(r"(\w+\.)?stream", order), (name, order)
        heads = re.findall(r"^SELECT\s+(?:DISTINCT\s+)?((?:coalesce\([^)]*\) AS )?[\w.]+)", query.sql, re.M)  # each UNION part
        assert heads and all(re.fullmatch(r"(\w+\.)?stream|coalesce\((\w+\.stream, )+\w+\.stream\) AS stream", h) for h in heads), (name, heads)


def test_a_link_where_the_state_files_go_is_refused(half: Path, auditor: tuple[Signer, Path], tmp_path: Path) -> None:
    """Threat: a symbolic link planted where the new state's files go (`NEW.state.d`) would have them
    written elsewhere: refused before the audit (exit 2), nothing written through it."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (half.parent / "new.json.state.d").symlink_to(elsewhere)
    done = _since(half, auditor[1])
    assert done.exit_code == 2 and "is a symbolic link" in done.output, done.output
    assert not any(elsewhere.iterdir())
