"""Who may rule (issue 28 points 3 and 6, issue 30 point 8): a registration counts only in
log.arbiters, keys are known by key id, a key name is not taken over, and a ruling or decision
that is unsigned, signed by an unknown key, a key of the wrong role, a key registered after it, or
carries a copied signature changes nothing: standings as before, listed as ignored with the reason,
audit.A06. Junqi 第十三条 三, 第十四条; DESIGN.md "nothing unsigned counts"."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Literal

import msgspec
import pytest

from audit.certification.certify import certify
from audit.query.arbitration import arbitration_rows, sign
from audit.query.session import open_session
from audit.query.standings import explain, standings
from ledger import LogReader, Signer, Verifier, record
from schemas import encode
from schemas.arbitration import ARBITER_STREAM, ArbiterRegistered
from schemas.common import GameEnded, GameStarted, Ruling
from tests.ledger_support import cli
from tests.test_arbitration import HOUR, Cup, T


def _copy(c: Cup, tmp_path: Path) -> Cup:
    out = Cup(tmp_path / "ledger", c.keys)
    shutil.copytree(c.root, out.root)
    out.games = c.games
    return out


def _override(c: Cup, game: str, signer: Signer | None, **change: object) -> Ruling:
    """A result override giving the game to the seat that lost it, signed by `signer` (or unsigned)."""
    events = list(LogReader(c.root).events(game))
    claim = [e for e in events if isinstance(e, GameEnded)][-1]
    ruling = Ruling(stream=game, seq=len(events), ts=claim.ts + HOUR, corrects=claim.seq, text="override", ruling="result_override",
                    winners=[1 if claim.winners == [0] else 0])
    signed = sign(ruling, signer) if signer else ruling
    assert isinstance(signed, Ruling)
    return msgspec.structs.replace(signed, **change) if change else signed


def _table(root: Path) -> dict[str, tuple[float, float]]:
    return {r["player"]: (r["big"], r["bh"]) for r in standings(open_session(root), T).rows}


def _loser(c: Cup, game: str) -> str:
    start = list(LogReader(c.root).events(game))[0]
    claim = [e for e in list(LogReader(c.root).events(game)) if isinstance(e, GameEnded)][-1]
    assert isinstance(start, GameStarted)
    return start.seats[1 if claim.winners == [0] else 0].holder


def _keygen(path: Path, name: str) -> Signer:
    assert cli("keygen", "--name", name, "--out", str(path)).exit_code == 0
    return Signer.load(path)


def _register_in(c: Cup, stream: str, pub: Path, role: Literal["referee", "chief_referee", "committee"] = "chief_referee") -> None:
    seq = len(list(LogReader(c.root).events(stream)))
    # own: as the ledger's own command writes it (a sender may not: tests/test_trust_sources.py), but past its checks
    record(c.root, [encode(ArbiterRegistered(stream=stream, seq=seq, ts=2, verifier=str(Verifier.load(pub)), role=role))], own=True)


def _ignored(c: Cup, game: str, reason: str) -> None:
    """The ruling changed nothing, and `standings --explain` and the audit say why."""
    chain = explain(open_session(c.root), T, _loser(c, game))
    row = next(g for g in chain.games if g["stream"] == game)
    assert row["counted_from"] != "ruling" and any(reason in i and "ignored" in i for i in row["ignored"]), row
    codes = {(f["code"]) for f in certify(c.root, T).findings}
    assert "audit.A06" in codes


ATTACKS = {
    "unsigned": (lambda c, tmp: None, "unsigned"),
    "stranger": (lambda c, tmp: Signer.load(c.keys / "stranger.key"), "signer not registered"),
    "committee-rules": (lambda c, tmp: Signer.load(c.keys / "li.key"), "role may not rule"),
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_ruling_no_registered_referee_signed_changes_nothing(cup: Cup, tmp_path: Path, attack: str) -> None:
    """第十四条 (a referee rules) and issue 30 point 8: an unsigned override, one by an unregistered key,
    one by a committee member's key: the standings stay as they were, the ruling is listed as ignored."""
    c = _copy(cup, tmp_path)
    before = _table(c.root)
    make, reason = ATTACKS[attack]
    game = c.games["rejected"]
    record(c.root, [encode(_override(c, game, make(c, tmp_path)))])
    assert _table(c.root) == before
    _ignored(c, game, reason)


def test_a_copied_signature_changes_nothing(cup: Cup, tmp_path: Path) -> None:
    """Issue 28 point 6: the chief referee's genuine signature copied onto another override (another
    game's) does not verify over its bytes: ignored."""
    c = _copy(cup, tmp_path)
    before = _table(c.root)
    genuine = _override(c, c.games["forfeit"], Signer.load(c.keys / "zhang.key"))
    game = c.games["rejected"]
    record(c.root, [encode(_override(c, game, None, arbiter=genuine.arbiter, signature=genuine.signature))])
    assert _table(c.root) == before
    _ignored(c, game, "signature does not verify")


def test_a_key_registered_after_the_ruling_does_not_make_it_count(cup: Cup, tmp_path: Path) -> None:
    """Issue 28 point 6: an override signed by a key registered (in log.arbiters) only afterwards."""
    c = _copy(cup, tmp_path)
    before = _table(c.root)
    late = _keygen(tmp_path / "late.key", "late")
    game = c.games["rejected"]
    record(c.root, [encode(_override(c, game, late))])
    _register_in(c, ARBITER_STREAM, tmp_path / "late.pub")
    assert _table(c.root) == before
    _ignored(c, game, "signer not registered")


def test_a_registration_outside_log_arbiters_is_not_honoured(cup: Cup, tmp_path: Path) -> None:
    """Issue 28 point 3: `arbiter.registered` written in the tournament's stream (which a source may
    write) registers nobody: the override its key signs is ignored, and the registration's row says why."""
    c = _copy(cup, tmp_path)
    before = _table(c.root)
    rogue = _keygen(tmp_path / "rogue.key", "rogue")
    try:
        _register_in(c, T, tmp_path / "rogue.pub")
    except Exception as exc:  # the recorder may refuse the log's own kinds outside log.* (issue 28 point 2): refused is fine too
        assert "arbiter.registered" in str(exc) or "log." in str(exc), exc
        return
    game = c.games["rejected"]
    record(c.root, [encode(_override(c, game, rogue))])
    assert _table(c.root) == before
    _ignored(c, game, "signer not registered")
    problems = open_session(c.root).db.query("SELECT stream, problem FROM arbiters WHERE key_name = 'rogue'")[1]
    assert problems == [(T, f"登记不在 {ARBITER_STREAM} 中, 不予承认 registered in {T}, not in {ARBITER_STREAM}: not honoured")]


def test_a_key_name_cannot_be_taken_over(cup: Cup, tmp_path: Path) -> None:
    """Issue 28 point 3: a second key under the chief referee's key name `zhang` is refused by `appeal
    register`; written anyway, it is not honoured (its rulings are ignored), and the real chief's
    later rulings still count (keys by key id)."""
    c = _copy(cup, tmp_path)
    impostor = _keygen(tmp_path / "zhang2.key", "zhang")
    refused = cli("appeal", "register", "--pub", str(tmp_path / "zhang2.pub"), "--role", "chief_referee", "--ledger", str(c.root))
    assert refused.exit_code == 1 and "key name zhang is registered already" in refused.output
    _register_in(c, ARBITER_STREAM, tmp_path / "zhang2.pub")  # written past the command: not honoured either
    game = c.games["rejected"]
    record(c.root, [encode(_override(c, game, impostor))])
    db = open_session(c.root).db
    assert db.query(f"SELECT signature FROM rulings WHERE stream = '{game}'")[1] == [("unknown_signer",)]
    (problem,) = [p for (p,) in db.query("SELECT problem FROM arbiters WHERE problem IS NOT NULL")[1]]
    assert problem.startswith("密钥名 zhang 已属另一密钥") and Verifier.load(c.keys / "zhang.pub").key_id.hex() in problem
    record(c.root, [encode(_override(c, c.games["rejected"], Signer.load(c.keys / "zhang.key"), seq=len(list(LogReader(c.root).events(game)))))])
    assert open_session(c.root).db.query(f"SELECT signature FROM rulings WHERE stream = '{game}' ORDER BY seq")[1] == [
        ("unknown_signer",), ("valid",)]


def test_arbitration_rows_index_keys_by_id() -> None:
    """Issue 28 point 3, as data: two registrations of one key name with two keys; the second is not honoured."""
    a, b = Signer.generate("ref"), Signer.generate("ref")
    events = [ArbiterRegistered(stream=ARBITER_STREAM, seq=n, ts=1, verifier=str(s.verifier), role="referee") for n, s in enumerate((a, b))]
    rows = arbitration_rows(((n, e, encode(e)) for n, e in enumerate(events)), [])["arbiters"]
    assert [r["problem"] is None for r in rows] == [True, False]
