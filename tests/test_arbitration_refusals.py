"""The appeal commands refuse what the audit would reject (issue 30 point 6), write nothing, and
exit 1; `--record-anyway` records it as evidence. Junqi 第十三条 三, 第十四条, 第十八–十九条; checkers
sheet item 11."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from ledger import LogReader
from schemas.common import GameEnded
from tests.ledger_support import cli
from tests.test_arbitration import HOUR, Cup, T, _end, _player


def _decided(c: Cup) -> int:
    """The seq of an appeal the committee has decided (the rejected one)."""
    rows = [e for e in list(LogReader(c.root).events(T)) if e.kind == "appeal.decided"]
    return rows[-1].appeal  # type: ignore[attr-defined, no-any-return]


def _open_appeal(c: Cup) -> int:
    """Files an appeal in time on the last round's game (24 h window) and returns its seq."""
    game = c.games["rejected"]
    out = c.run("appeal", "file", "--tournament", T, "--game", game, "--player", _player(c, game, 0), "--grounds", "again",
                "--at", str(_end(c.root, game) + 7 * HOUR))
    return int(out["seq"])


def _claim(c: Cup, game: str) -> GameEnded:
    return [e for e in list(LogReader(c.root).events(game)) if isinstance(e, GameEnded)][-1]


def _decide(c: Cup, appeal: int, votes: list[str], key: str = "li") -> list[str]:
    return ["appeal", "decide", "--tournament", T, "--appeal", str(appeal), "--decision", "rejected", *(f"--vote={v}" for v in votes),
            "--text", "x", "--key", c.key(key)]


def _rule(c: Cup, *extra: str, key: str = "zhang") -> list[str]:
    game = c.games["rejected"]
    return ["appeal", "rule", "--stream", game, "--corrects", str(_claim(c, game).seq), "--text", "x", "--key", c.key(key), *extra]


def _file(c: Cup, at: int) -> list[str]:
    game = c.games["rejected"]
    return ["appeal", "file", "--tournament", T, "--game", game, "--player", _player(c, game, 0), "--grounds", "x", "--at", str(at)]


CASES: dict[str, tuple[Callable[[Cup], list[str]], str]] = {
    # 第十三条 三: the committee decides; a referee's key may not sign a decision
    "decision-by-a-referee": (lambda c: _decide(c, _open_appeal(c), ["a=reject", "b=reject", "c=reject"], key="zhang"),
                              "is registered as chief_referee; a appeal.decided is signed by committee"),
    # 第十四条: an unregistered key may not rule
    "ruling-by-an-unknown-key": (lambda c: _rule(c, "--kind", "penalty", "--seat", "0", key="stranger"),
                                 "key stranger"),
    # 第十三条 三: an odd committee of at least three
    "committee-of-two": (lambda c: _decide(c, _open_appeal(c), ["a=reject", "b=reject"]), "a committee of 2: it takes an odd number, at least 3"),
    # 第十九条 1: the majority decides
    "no-majority": (lambda c: _decide(c, _open_appeal(c), ["a=reject", "b=uphold", "c=uphold"]), "1 of 3 votes for rejected"),
    # 第十三条 三: the decision is final
    "second-decision": (lambda c: _decide(c, _decided(c), ["a=reject", "b=reject", "c=reject"]), "the committee's decision is final"),
    # a ruling that cannot be applied (audit.A07): points for three seats in a two-seat game
    "points-for-the-wrong-seats": (lambda c: _rule(c, "--kind", "penalty", "--seat", "0", "--points", "1,0,0"),
                                   "it names 3 points for a game of 2 seats"),
    "a-winner-that-is-no-seat": (lambda c: _rule(c, "--kind", "forfeit", "--seat", "3"), "it names seat 3, and the game has seats 0–1"),
    # 第十四条 (1): a result changed after the end only on an upheld appeal
    "override-without-an-appeal": (lambda c: _rule(c, "--kind", "result_override", "--winners", "0"), "name the decision with --carries-out"),
    # 第十八条 2 / checkers sheet 11: filed in the window, after the game's end
    "filed-before-the-end": (lambda c: _file(c, _end(c.root, c.games["rejected"]) - 1), "before"),
    "filed-after-the-window": (lambda c: _file(c, _end(c.root, c.games["rejected"]) + 30 * HOUR), "after the appeal window closed"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_command_refuses_what_the_audit_would_reject(cup: Cup, tmp_path: Path, case: str) -> None:
    """Each refused with its reason and exit 1, nothing written; `--record-anyway` writes it."""
    c = Cup(tmp_path / "ledger", cup.keys)
    shutil.copytree(cup.root, c.root)
    c.games = cup.games
    args, reason = CASES[case]
    command = args(c)
    size = sum(1 for _ in LogReader(c.root).events())
    refused = cli(*command, "--ledger", str(c.root))
    assert refused.exit_code == 1, refused.output
    assert "refused, nothing written" in refused.output and reason in refused.output, refused.output
    assert sum(1 for _ in LogReader(c.root).events()) == size
    kept = cli(*command, "--record-anyway", "--ledger", str(c.root))
    assert kept.exit_code == 0, kept.output
    assert sum(1 for _ in LogReader(c.root).events()) == size + 1
