"""Rulings during play count only when signed (checkers 第十二条, Junqi 第十四条; DESIGN.md "nothing
unsigned counts"): a `result_override` sent in the middle of a game, unsigned or signed by a key
nobody registered, ends nothing, in every reader of the log: the audit's projection (built and
extended), `replay`, `show`, the game's report and record, and the live audit. The same override
signed by the registered chief referee ends the game with the result it names, everywhere.

A game of the arbitrated checkers cup is sent again under a new stream, its first moves, then the
override, then a claim that the ruling ended it."""

from __future__ import annotations

import shutil
from pathlib import Path

import msgspec
import pytest

from audit.live.auditor import LiveAuditor
from audit.presentation.record_format import game_record
from audit.presentation.report import load_game, render_report
from audit.presentation.verdict import verdict
from audit.query.arbitration import LogRulings, sign
from audit.query.session import open_session
from ledger import LogReader, Signer, record
from replay.registry import engine_for
from replay.run import position
from schemas import encode
from schemas.common import GameEnded, GameStarted, Ruling
from tests.ledger_support import cli
from tests.test_arbitration import Cup

GAME = "in-play/override"
MOVES = 8
"""Events of the cup's game sent before the override (the start among them)."""
SIGNERS = {"unsigned": None, "stranger": "stranger", "chief referee": "zhang"}
"""Who signs the override: nobody, a key never registered, the chief referee registered in log.arbiters."""


def _in_play(c: Cup, tmp_path: Path, signer: str | None) -> Path:
    """A copy of the cup with GAME: a cup game's first events, an override giving it to seat 1, the claim."""
    root = tmp_path / "ledger"
    shutil.copytree(c.root, root)
    source = sorted(e.stream for e in LogReader(root).events() if isinstance(e, GameStarted))[0]
    events = list(LogReader(root).events(source))[:MOVES]
    start = events[0]
    assert isinstance(start, GameStarted)
    sent = [msgspec.structs.replace(e, stream=GAME) for e in events]
    sent[0] = msgspec.structs.replace(sent[0], tournament=None, round=None, table=None)
    ts = events[-1].ts + 1_000
    override = Ruling(stream=GAME, seq=MOVES, ts=ts, corrects=MOVES - 1, text="改判 override in play",
                      ruling="result_override", winners=[1])
    if signer is not None:
        signed = sign(override, Signer.load(c.keys / f"{signer}.key"))
        assert isinstance(signed, Ruling)
        override = signed
    claim = GameEnded(stream=GAME, seq=MOVES + 1, ts=ts + 1, termination="RULING", winners=[1], points=[0, 1])
    record(root, [encode(e) for e in [*sent, override, claim]])
    return root


@pytest.mark.parametrize("who", sorted(SIGNERS))
def test_an_override_in_play_counts_only_when_signed(cup: Cup, tmp_path: Path, who: str) -> None:
    """第十二条 / 第十四条: the override ends the game only when the registered chief referee signed it."""
    root = _in_play(cup, tmp_path, SIGNERS[who])
    counts = who == "chief referee"
    session = open_session(root)
    [(derived, winners)] = session.db.query(f"SELECT derived_termination, derived_winners FROM games WHERE stream = '{GAME}'")[1]
    assert derived == ("RULING" if counts else "UNVERIFIED"), (who, derived, winners)  # not counted: the claim stands unverified
    facts = [msgspec.json.decode(f) for (f,) in session.db.query(f"SELECT facts FROM steps WHERE stream = '{GAME}' ORDER BY seq")[1]]
    assert ("set_aside" in facts[MOVES]) is not counts, facts[MOVES]

    check = LogRulings(LogReader(root)).of_stream(GAME)
    events = list(LogReader(root).events(GAME))
    ended = position(events, GAME, MOVES, check)
    assert (ended.engine.outcome(ended.state) is not None) is counts  # `show --at` the override

    told_record = game_record(events, rulings=check)
    assert ("未计入 set aside" in told_record) is not counts, told_record

    game = load_game(root, GAME)
    told = verdict(game, engine_for(game.start))
    page = render_report(game)
    assert ("未计入 set aside: 未签名" in page or "未计入 set aside: 签名者未登记" in page) is not counts
    assert told.in_force is not None and (told.in_force.termination == "RULING") is counts, told

    replayed = cli("replay", "--ledger", str(root), "--game", GAME, "--format", "json")
    assert replayed.exit_code == (0 if counts else 1), replayed.output  # not counted: the claim has no derived result

    batch = {code for (code,) in session.db.query(f"SELECT code FROM findings WHERE stream = '{GAME}'")[1]}
    live = {f.code for f in LiveAuditor.from_ledger(root).findings if f.stream == GAME}
    assert ("checkers.E02" in batch) is not counts and live == batch, (batch, live)  # E02: no result of play


def test_the_extended_projection_sets_aside_what_the_built_one_does(cup: Cup, tmp_path: Path) -> None:
    """The kept projection extended by the unsigned override's game gives the tables a fresh build gives."""
    c_root = tmp_path / "base"
    shutil.copytree(cup.root, c_root)
    open_session(c_root, kept=True)  # keeps the projection at the cup's checkpoint
    base = Cup(c_root, cup.keys)
    root = _in_play(base, tmp_path, None)
    extended = open_session(root, kept=True)
    assert "extended" in extended.origin, extended.origin
    built = open_session(root)
    query = f"SELECT derived_termination, termination FROM games WHERE stream = '{GAME}'"
    assert extended.db.query(query)[1] == built.db.query(query)[1] == [("UNVERIFIED", "UNVERIFIED")]
