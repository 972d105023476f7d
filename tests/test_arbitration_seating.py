"""Seatings judged by the rules (issue 30 points 3–4): a seating that departs from the movement is an
error in every game (附录三), any order of players tied after §3 criteria 1–4 is allowed and named,
and a round is judged on the standings as known when it was seated (tournament.md §4, checkers.md
§12.2): a ruling recorded later does not make an earlier seating wrong."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from audit.certification.certify import certify
from audit.query import tournament_checks
from audit.query.session import movement_ranking
from audit.query.tournament_checks import _compare, _expected
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import LogReader, init
from schemas.common import GameEnded
from tests.audit_rows import HandBuilt
from tests.test_arbitration import HOUR, Cup, T, _decide, _end, _file, _played
from tests.test_audit_ranking_chain import board


def _tied_round() -> HandBuilt:
    """Round 1 of a Junqi event at two tables: A, C, F, H win (R 100, opponents' R 0), B, D, E, G
    lose (R 0, opponents' R 100); no move times. Two groups of four tie after §3 criteria 1–4."""
    b = HandBuilt()
    b.tournament("cup", "junqi", {})
    for n, p in enumerate("ABCDEFGH"):
        b.rows["players"].append({"entry": n, "tournament": "cup", "player": p, "name": p})
    board(b, 1, ("A B C D", "S"), ("E F G H", "E"))
    return b


def test_appendix_3_any_order_among_tied_players_is_allowed() -> None:
    """附录三 五.1 with §4 (ties after criteria 1–4 are broken by player number only as a [PARAM]):
    table 1 holds the four winners in any order, table 2 the four losers in any order."""
    expected = _expected(_tied_round().db(), "cup", "duplicate", 2, frozenset())
    assert expected.tables == [["A", "C", "F", "H"], ["G", "E", "D", "B"]]
    assert list(_compare("cup", 9, 2, expected, [["H", "F", "C", "A"], ["B", "D", "E", "G"]], "duplicate")) == []


def test_appendix_3_a_seating_outside_the_allowed_orders_is_an_error_naming_the_choice() -> None:
    """附录三: a winner and a loser swapped is no order the rules allow: an error, naming the ties."""
    expected = _expected(_tied_round().db(), "cup", "duplicate", 2, frozenset())
    found = list(_compare("cup", 9, 2, expected, [["B", "C", "F", "H"], ["G", "E", "D", "A"]], "duplicate"))
    assert [(f.code, f.severity, f.article) for f in found] == [("audit.W04", "error", "附录三")] * 2
    assert found[0].message == ("第2轮第1桌座次不符合移位规则：实际 座位0 B、座位1 C、座位2 F、座位3 H，规则应为 座位0 A、座位1 C、座位2 F、座位3 H "
                                "round 2 table 1: seat 0 B, seat 1 C, seat 2 F, seat 3 H; the movement rules give seat 0 A, seat 1 C, "
                                "seat 2 F, seat 3 H（按第3节标准1–4并列：A、C、F、H（第 1–4 名，任意顺序均可） tied after §3 criteria 1–4: "
                                "A, C, F, H (places 1–4, any order allowed)；按第3节标准1–4并列：B、D、E、G（第 5–8 名，任意顺序均可） "
                                "tied after §3 criteria 1–4: B, D, E, G (places 5–8, any order allowed)）")


@pytest.mark.parametrize("game", ["junqi", "paohuzi"])
def test_appendix_3_wrong_seating_is_not_certified_in_any_game(tmp_path: Path, game: str) -> None:
    """Issue 30 point 4: `--inject wrong-seating` (two seat-0 players swapped between tables) is an
    audit.W04 error in Junqi and Paohuzi as in checkers: NOT CERTIFIED."""
    root = tmp_path / "l"
    init(root)
    players = 8 if game == "junqi" else 6
    simulate_tournament(root, TournamentPlan(game, players=players, rounds=2, games_per_round=1, seed=3, inject="wrong-seating"),
                        movement_ranking)
    cert = certify(root, f"{game}-cup-3")
    assert not cert.ok
    assert {(f["code"], f["severity"]) for f in cert.findings} == {("audit.W04", "error")}


def _late_override(c: Cup, game: str) -> None:
    """An upheld appeal on a round-1 game, filed in time (before round 2 started: checkers sheet 11),
    decided and carried out (recorded) after the last round was seated."""
    filed = _end(c.root, game) + 60_000
    decided = _decide(c, _file(c, game, filed, "the clock failed"), "upheld", ["li=uphold", "wang=uphold", "zhao=reject"], filed + HOUR)
    claim = [e for e in list(LogReader(c.root).events(game)) if isinstance(e, GameEnded)][-1]
    c.run("appeal", "rule", "--stream", game, "--kind", "result_override", "--corrects", str(claim.seq),
          "--winners", "1" if claim.winners == [0] else "0", "--text", "corrected", "--carries-out", f"{T}#{decided}",
          "--key", c.key("zhang"), "--at", str(filed + 2 * HOUR))


def test_checkers_12_2_a_late_ruling_does_not_make_earlier_pairings_wrong(cup: Cup, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkers §12.2 and 第十八条(2) (each round paired on the totals after the rounds before it): an
    upheld appeal on a round-1 game, corrected after round 3 was seated, changes the standings but
    not the correctness of rounds 2–3's pairings: certified. Judged on today's standings instead,
    the same pairings would be audit.W02 errors."""
    c = Cup(tmp_path / "ledger", cup.keys)
    shutil.copytree(cup.root, c.root)
    for game in _played(c.root, 1)[1:]:
        _late_override(c, game)
    cert = certify(c.root, T)
    assert cert.ok, cert.findings
    monkeypatch.setattr(tournament_checks, "as_of", lambda session, entry: session.db)
    assert "audit.W02" in {f["code"] for f in certify(c.root, T).findings}


def test_appendix_3_a_late_void_does_not_make_earlier_duplicate_seatings_wrong(cup: Cup, tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Tournament.md §4 (each round seated from the standings after the previous round): round-1
    games of a Paohuzi event voided after round 3 was seated change the standings, not the
    correctness of rounds 2–3's snake seating: certified; judged on today's standings, audit.W04."""
    c = Cup(tmp_path / "ledger", cup.keys)
    init(c.root)
    simulate_tournament(c.root, TournamentPlan("paohuzi", players=9, rounds=3, games_per_round=1, seed=5), movement_ranking)
    c.run("appeal", "register", "--pub", str(c.keys / "zhang.pub"), "--role", "chief_referee", "--at", "1")
    for game in _played(c.root, 1)[:2]:
        c.run("appeal", "rule", "--stream", game, "--kind", "void_game", "--corrects", "0", "--text", "the deal was exposed",
              "--key", c.key("zhang"), "--at", str(_end(c.root, game) + HOUR))
    cert = certify(c.root, "paohuzi-cup-5")
    assert cert.ok, cert.findings
    monkeypatch.setattr(tournament_checks, "as_of", lambda session, entry: session.db)
    assert "audit.W04" in {f["code"] for f in certify(c.root, "paohuzi-cup-5").findings}


def test_rounds_seated_before_the_same_rulings_are_judged_on_one_database(cup: Cup, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Tournament.md §4, checkers §12.2: rounds 2 and 3, both seated before the same late rulings, are
    judged on the standings without those rulings: one database as it stood, built once for both
    (a season's rounds before one ruling had each built their own over the season's tables), and
    the verdict the same as when each round has its own."""
    c = Cup(tmp_path / "ledger", cup.keys)
    shutil.copytree(cup.root, c.root)
    for game in _played(c.root, 1)[1:]:
        _late_override(c, game)
    built: list[int | None] = []
    as_of = tournament_checks.as_of

    def counted(session: object, entry: int | None) -> object:
        built.append(entry)
        return as_of(session, entry)  # type: ignore[arg-type]

    monkeypatch.setattr(tournament_checks, "as_of", counted)
    once = certify(c.root, T)
    assert len(built) == 1, built
    monkeypatch.setattr(tournament_checks, "_as_of_once", lambda session, entry, last: counted(session, entry))
    each = certify(c.root, T)
    assert len(built) == 3 and once.ok and each.ok and once.findings == each.findings, built
