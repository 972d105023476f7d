"""Issue 31 points 1, 2 and 4: the texts a referee or auditor reads beside the engines' findings are
zh-Hans first with the English beside, and show no internal representation (JSON lists, tuples,
True/False/None, enum names, card codes): the audit's own findings (audit.*: the SQL checks, the
tournament and appeal checks, the projection's and the live audit's), each planted once, and the
ledger's texts a person reads on the CLI (record's refusals naming line and field, the recovered
tail, verify's notes, prove's statement, check-proof's result). The check is the one the engines'
messages pass (tests/test_finding_messages.py `problems`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from audit.live.auditor import LiveAuditor
from audit.query.projection import orphan
from audit.query.tournament_checks import _check_draw, _compare, _expected
from ledger import Signer, check_bundle, load_verifier, prove, store
from replay.checkers.codes import Termination as CheckersTermination
from replay.junqi.codes import Termination as JunqiTermination
from replay.paohuzi.codes import Termination as PaohuziTermination
from replay.protocol import Finding
from replay.values import TERMINATION_WORDS, SharedTermination, event_kind
from schemas.common import RoundClosed
from tests.audit_rows import HandBuilt, profile_json
from tests.ledger_support import cli, event_line, game_lines
from tests.test_arbitration import FAULTS, Cup, _copy
from tests.test_arbitration_seating import _tied_round
from tests.test_audit_sql_checks import (
    CHECKERS,
    JUNQI,
    JUNQI_PLAYERS,
    PAOHUZI,
    QUIET5,
    STEPS5,
    checkers_game,
    claimed_game,
    clocked_game,
    hu_game,
    junqi_game,
    timed_move,
    timeouts_game,
)
from tests.test_finding_messages import problems
from tests.test_ledger_faults import CrashingOps, _batch, _PowerLoss
from tests.test_live_audit import bot_game

SQL_CODES = {"audit.C01", "audit.C02", "audit.P01", "audit.O01", "audit.T01", "audit.T02", "audit.L01", "audit.Q01",
             "audit.Q02", "audit.S01", "audit.W02", "audit.W03"}
"""The SQL checks' codes outside the appeals (those are planted in a real arbitrated tournament below)."""


def _bad(messages: list[tuple[str, str]]) -> list[str]:
    """Returns each (code, message) a person should not read as it is, with what is wrong with it."""
    return [f"{code}: {', '.join(problems(m))}: {m}" for code, m in messages if problems(m)]


def _planted_sql() -> HandBuilt:
    """Returns hand-built projections with each SQL check's fault planted, in each of its messages' forms."""
    b = HandBuilt()
    claimed_game(b, ("FLAG_CAPTURED", [0, 2], [5, 1, 5, 3]), stream="c01-points")  # C01
    claimed_game(b, ("RESIGNED", [], [3, 3, 3, 3]), stream="c01-draw-claimed")
    claimed_game(b, ("BANANA_SPLIT", [1, 3], [1, 5, 1, 5]), stream="c01-unknown-termination")
    b.game("c01-not-over", "junqi", profile_json(JUNQI), None, None, list(zip(JUNQI_PLAYERS, [None] * 4)))
    b.event("c01-not-over", 300, "game.ended", termination="FLAG_CAPTURED", winners=[0, 2], points=[5, 1, 5, 1])
    hu_game(b, PAOHUZI, 1, 3, None, [-3, 6, -3], stream="c02")  # C02: the claim says 30 胡息, the cards 21
    b.event("c02", 40, "paohuzi.hu", seat=1, huxi=30, score=6)
    b.game("p01", "junqi", profile_json(JUNQI), "FLAG_CAPTURED", [0, 2], list(zip(JUNQI_PLAYERS, [5.0, 3.0, 5.0, -1.0])))  # P01
    timeouts_game(b, "checkers", profile_json(CHECKERS), [5, 1], "ALL_HOME", [1], stream="o01")  # O01
    timed_move(b, 4001, stream="t01")  # T01, and its two forms with nothing to check against
    timed_move(b, None, stream="t01-unmatched")
    b.event("t01-unmatched", 2, "game.move_time", seat=0, ts=103_000, ms=3000, move_seq=7)
    b.event("t01-unmatched", 3, "game.move_time", seat=None, ts=103_000, ms=900)
    clocked_game(b, [3000, 2000], [3000, 5001], stream="t02")  # T02
    clocked_game(b, [3000], None, stream="t02-no-engine-clock")
    checkers_game(b, (1, 30), "ALL_HOME", [0], {(1, 25): 7}, stream="l01-missed")  # L01
    checkers_game(b, (1, 30), "LEAVE_CAMP", [0], stream="l01-unfounded")
    checkers_game(b, (1, 30), "LEAVE_CAMP", [1], {(1, 25): 7}, stream="l01-winner-missed")
    junqi_game(b, "..x.", "RESIGNED", quiet=[1, 2, 3, 4], stream="q01")  # Q01
    junqi_game(b, "......", "RESIGNED", stream="q02-long")  # Q02
    junqi_game(b, "....", "QUIET_LIMIT", stream="q02-short")
    junqi_game(b, "......", None, QUIET5, stream="q02-still-on")
    junqi_game(b, ".x....", "RESIGNED", STEPS5, stream="s01-past")  # S01
    junqi_game(b, ".x..", "MAX_STEPS", STEPS5, stream="s01-short")
    junqi_game(b, ".x....", None, STEPS5, stream="s01-still-on")
    _seatings(b)  # W02, W03
    return b


def _seatings(b: HandBuilt) -> None:
    """Plants a Swiss event whose players A and B meet in rounds 1 and 2 (W02) and a game seating
    another player than its round's seating (W03)."""
    b.tournament("swiss-cup", "checkers", {})
    b.rows["tournaments"][-1]["format"] = "swiss"
    for rnd in (1, 2):
        for seat, player in enumerate("AB"):
            b.rows["seatings"].append({"tournament": "swiss-cup", "round": rnd, "table_no": 1, "seat": seat, "player": player})
    b.game("swiss-cup/r1/t1", "checkers", profile_json(CHECKERS), "ALL_HOME", [0], [("A", 1.0), ("C", 0.0)],
           tournament="swiss-cup", round=1, table_no=1)


def test_every_sql_check_message_reads_chinese_first() -> None:
    """Issue 31 points 1, 2: each SQL check's finding (audit.C01 … W03), planted in each of its
    messages' forms, is zh-Hans first with the English beside: terminations in words (军旗被夺 flag
    captured), seats as 座位N, lists as words, no enum name, JSON list or None."""
    db = _planted_sql().db()
    found = [(r["code"], r["message"]) for name in ("claim_mismatches", "huxi_claims", "points", "timeouts", "move_time_gaps",
                                                    "move_time_totals", "leave_camp", "junqi_quiet", "junqi_step_limit",
                                                    "swiss_repeats", "seating_recorded") for r in db.run(name)]
    assert {code for code, _ in found} == SQL_CODES
    assert all(message for _, message in found)  # a move time of no seat gave T02 a NULL message (format() of a NULL)
    assert len(found) >= 20, found
    assert _bad(found) == []


def test_a_claim_in_words_names_the_claimed_and_the_derived_result() -> None:
    """Issue 31 points 1, 2 (tournament.md §1): a false claim reads as words on both sides, the
    sender's own termination string quoted (「banana split」), a draw as 无（和局）, points per seat."""
    messages = {stream: m for stream, _, _, m in _planted_sql().run("claim_mismatches")}
    assert messages["c01-draw-claimed"].startswith("申报结果与推导不符：申报认输，胜方无（和局），各座位得分 "
                                                   "3、3、3、3；推导军旗被夺，胜方座位0、座位2")
    assert "申报「banana split」" in messages["c01-unknown-termination"]
    assert messages["c01-unknown-termination"].count("claimed banana split, winners seat 1, seat 3") == 1


def test_the_termination_words_of_the_checks_are_the_one_table() -> None:
    """Issue 31 point 3 (one dictionary): every way an engine or a ruling ends a game has its words
    in replay/values.py, and the SQL checks and the pages read those words (and a committee's
    decisions, arbitration.DECISIONS), not copies."""
    from audit.presentation.terms import TERMINATIONS
    from audit.query.db import word_tables

    members = {m.value for enum in (JunqiTermination, PaohuziTermination, CheckersTermination, SharedTermination) for m in enum}
    assert members <= set(TERMINATION_WORDS), members - set(TERMINATION_WORDS)
    assert {"UNJUSTIFIED_SKIP", "NO_WAIT", "YELLOW_CARD", "RED_CARD"} <= set(TERMINATIONS)
    assert all(TERMINATIONS[n][:2] == TERMINATION_WORDS[n] and TERMINATIONS[n].meaning for n in TERMINATION_WORDS)
    from audit.presentation.terms import TERMS
    from audit.query.arbitration import IGNORED
    from schemas.arbitration import DECISIONS

    tables = {name: {r["name"]: (r["zh"], r["en"]) for r in table.to_pylist()} for name, table in word_tables().items()}
    assert tables == {"termination_words": TERMINATION_WORDS, "signature_words": IGNORED, "decision_words": DECISIONS}
    assert all(TERMS[decision][:2] == words for decision, words in DECISIONS.items())


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_appeal_check_message_reads_chinese_first(cup: Cup, tmp_path: Path, fault: str) -> None:
    """Issue 31 points 1, 2 (Junqi 第十三、十四、十八、十九条): each appeal and arbiter finding
    (audit.A01–A06), planted in the arbitrated tournament, is zh-Hans first without internal names."""
    from audit.certification.certify import certify
    from tests.test_arbitration import T

    plant, code = FAULTS[fault]
    c = _copy(cup, tmp_path)
    plant(c)
    found = [(f["code"], f["message"]) for f in certify(c.root, T).findings if f["code"] == code]
    assert found and _bad(found) == []


def test_the_tournament_checks_messages_read_chinese_first() -> None:
    """Issue 31 points 1, 2 (附录三, 第十八条): the seating findings name each seat and player in
    words, not Python lists or reprs: no seed (W01), a Swiss pairing (W02) and a seating outside the
    movement with the ties named (W04)."""
    expected = _expected(_tied_round().db(), "cup", "duplicate", 2, frozenset())
    found = [*_check_draw("cup", None, list("ABCDEFGH"), [], 4),
             *_compare("cup", 9, 2, expected, [["B", "C", "F", "H"], ["G", "E", "D", "A"]], "duplicate"),
             *_compare("cup", 9, 2, expected, [["B", "C"], ["A", "H"]], "swiss")]
    assert {f.code for f in found} == {"audit.W01", "audit.W02", "audit.W04"}
    assert _bad([(f.code, f.message) for f in found]) == []


def test_the_projection_and_live_audit_findings_read_chinese_first(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 31 points 1, 2: a stream that opens no game (audit.G01, its first kind in words: 行棋
    checkers.moved), an engine that stops live (audit.E01) and round checks that cannot run live
    (audit.E02) are zh-Hans first."""
    events = bot_game("checkers", 3)
    stray = orphan("stray", events[1:])
    assert stray.message.startswith(f"流的首个事件为 {event_kind(events[1].kind)}，") and "行棋 checkers.moved" in stray.message
    live = LiveAuditor()
    live.feed([(0, events[0])])

    def stops(event: Any) -> Any:
        raise ValueError("the fold broke")

    monkeypatch.setattr(live.games[events[0].stream].fold, "push", stops)
    [stopped] = live.feed([(1, events[1])])
    published: list[Finding] = []
    monkeypatch.setattr(live, "_close_round", lambda event: (_ for _ in ()).throw(RuntimeError("no tables")))
    monkeypatch.setattr(live, "_publish", lambda finding, view, key=None: published.append(finding))
    live._checked_round(RoundClosed(stream="cup", seq=9, ts=1, seat=None, round=2))
    found = [(stray.code, stray.message), (stopped.code, stopped.message), *((f.code, f.message) for f in published)]
    assert [code for code, _ in found] == ["audit.G01", "audit.E01", "audit.E02"]
    assert _bad(found) == []


# -- the ledger's texts on the CLI -----------------------------------------------------------------

def _error(result: Any) -> str:
    assert result.exit_code == 1, result.output
    return str(result.stderr).removeprefix("error: ").strip()


def test_records_refusals_read_chinese_first_naming_line_and_field(tmp_path: Path) -> None:
    """Issue 31 point 2 (DESIGN.md: bad input gets a clear error naming the line and field): each
    append-rule refusal of `record` (a gap, a conflict, the log's own kinds and streams) opens with
    第 N 行 and names the field in Chinese and in English."""
    root = tmp_path / "l"
    assert cli("init", "--ledger", str(root)).exit_code == 0
    first = tmp_path / "first.jsonl"
    first.write_bytes(b"\n".join(game_lines(1, 2)) + b"\n")
    assert cli("record", "--ledger", str(root), str(first)).exit_code == 0
    key = str(Signer.generate("evil").verifier)
    cases = {"seq": event_line("g0", 5), "seq ": event_line("g0", 0, ms=99),
             "kind": event_line("g", 1, "arbiter.registered", verifier=key, role="chief_referee"), "stream": event_line("log.notes", 0)}
    said = []
    for field, bad in cases.items():
        path = tmp_path / "bad.jsonl"
        path.write_bytes(event_line("g9", 0) + b"\n" + bad + b"\n")
        message = _error(cli("record", "--ledger", str(root), str(path)))
        assert message.startswith(f"第 2 行 line 2: 字段 `{field.strip()}`：") and f"/ field `{field.strip()}`: " in message, message
        said.append(("record", message))
    assert _bad(said) == []


def test_the_ledgers_notes_and_statements_read_chinese_first(tmp_path: Path) -> None:
    """Issue 31 point 2: verify's notes (unsigned entries, a torn tail), the tail a reopened writer
    recovers, prove's statement and check-proof's result are zh-Hans first with the English beside."""
    root = tmp_path / "ledger"
    store.init(root)
    with store.Ledger.open(root) as led:
        led.append(_batch(0))
        led.checkpoint()
    led = store.Ledger.open(root, CrashingOps())
    led.append(_batch(10))  # acknowledged, not yet signed
    led._ops.torn_after = 15  # type: ignore[attr-defined]
    with pytest.raises(_PowerLoss):
        led.append(_batch(20))
    led.close()
    report = json.loads(cli("verify", "--ledger", str(root), "--json").stdout)
    notes = [("verify", note) for note in report["notes"]]
    assert len(notes) >= 2 and any("未签名条目" in n for _, n in notes) and any("残尾" in n for _, n in notes), notes
    with store.Ledger.open(root) as reopened:
        assert reopened.recovered is not None
        recovered = [("record", part) for part in reopened.recovered.split("; ")]
    statement = check_bundle(bundle := prove(root, "g0"), load_verifier(root)).statement(bundle)
    out = tmp_path / "g0.json"
    assert cli("prove", "--ledger", str(root), "--stream", "g0", "--out", str(out)).exit_code == 0
    checked = cli("check-proof", str(out), "--key", str(root / "signer.pub"))
    assert checked.exit_code == 0 and checked.stdout.startswith("核对通过 / ok: 流 g0 在大小为 "), checked.stdout
    said = [*notes, *recovered, ("prove", statement), ("check-proof", checked.stdout.strip())]
    assert all(re.search(r"[\u4e00-\u9fff]", m) and " / " in m for _, m in said), said
    assert _bad(said) == []


def test_the_check_itself_refuses_the_old_english_only_texts() -> None:
    """The checks above fail on the texts as they were: English only, enum names, JSON lists."""
    old = ["claimed FLAG_CAPTURED winners [0, 2] points [5.0, 1.0, 5.0, 3.0], derived FLAG_CAPTURED winners [0, 2]",
           "timeouts [N 5/4, S 1/4]; the game ended ALL_HOME", "line 3: field `seq`: stream 'g0' expects seq 2, got 5 (gap)",
           "round 2 table 1 seats ['B', 'C', 'F', 'H']; the movement rules give ['A', 'C', 'F', 'H']"]
    assert all(problems(m) for m in old)


def test_a_ruling_kind_has_one_name_everywhere() -> None:
    """Issue 31 point 3 (one dictionary): each ruling kind (schemas.common RulingKind) has one Chinese
    name, schemas.common.RULING_WORDS's (判罚 as the Junqi seed writes it), which the pages' terms and
    the message of a ruling that cannot apply (audit.A07, replay/rulings.py) both read; the event kind
    game.penalty is named with the same word."""
    import typing

    from audit.presentation.terms import TERMS
    from replay.values import EVENT_KINDS
    from schemas.common import RULING_WORDS, RulingKind

    assert set(RULING_WORDS) == set(typing.get_args(RulingKind))
    assert all(TERMS[kind][:2] == words for kind, words in RULING_WORDS.items())
    assert EVENT_KINDS["game.penalty"] == RULING_WORDS["penalty"][0]
    source = (Path(__file__).parents[1] / "replay" / "rulings.py").read_text(encoding="utf-8")
    assert "RULING_WORDS[ruling_kind(ev)][0]" in source and "处罚" not in source and "弃权" not in source
