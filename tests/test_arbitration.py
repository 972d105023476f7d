"""Arbitration (issue 15; issue 13 item 14): appeals, decisions and rulings recorded through the CLI,
applied to the standings, and certified. Junqi 第十三条 三, 第十四条, 第十六条 一, 第十八–十九条;
checkers 第十二条.

One simulated Swiss checkers tournament (8 players, 3 rounds) gets: a late appeal declared void, an
upheld appeal carried out by a result override, a rejected appeal, a forfeit and a withdrawal; it
certifies. Each planted procedural fault, appended to a copy of it, is caught by exactly its check."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import pytest

from audit.certification.certify import certify
from audit.query.arbitration import decision_deadline, sign
from audit.query.session import movement_ranking, open_session
from audit.query.standings import crosstable, explain, standings
from audit.simulator.tournament import TournamentPlan, simulate_tournament
from ledger import LogReader, Signer, init, record
from schemas import decode, encode
from schemas.arbitration import ArbitrationRules
from schemas.common import GameEnded, GameStarted, RoundSeated, Ruling
from tests.ledger_support import cli

SEED = 11
T = f"checkers-cup-{SEED}"
WITHDRAWN = "P001"
HOUR = 3_600_000


class Cup:
    """The arbitrated tournament: its ledger, keys and the games each procedure touched."""

    def __init__(self, root: Path, keys: Path) -> None:
        self.root, self.keys = root, keys
        self.games: dict[str, str] = {}
        self.before: dict[str, dict[str, Any]] = {}

    def run(self, *args: str) -> dict[str, Any]:
        result = cli(*args, "--ledger", str(self.root), "--json")
        assert result.exit_code == 0, result.output
        return msgspec.json.decode(result.output.splitlines()[-1])

    def key(self, name: str) -> str:
        return str(self.keys / f"{name}.key")


def _end(root: Path, game: str) -> int:
    return next(e.ts for e in list(LogReader(root).events(game)) if isinstance(e, GameEnded))


def _claim(root: Path, game: str) -> GameEnded:
    return [e for e in list(LogReader(root).events(game)) if isinstance(e, GameEnded)][-1]


def _played(root: Path, rnd: int) -> list[str]:
    return sorted(e.stream for e in LogReader(root).events() if isinstance(e, GameStarted) and e.round == rnd)


def _keys(path: Path) -> Path:
    path.mkdir()
    for name in ("zhang", "li", "stranger"):
        assert cli("keygen", "--name", name, "--out", str(path / f"{name}.key")).exit_code == 0
    return path


def build_cup(tmp_path_factory: pytest.TempPathFactory) -> Cup:
    """The arbitrated checkers tournament several modules test against (the `cup` fixture, tests/conftest.py)."""
    base = tmp_path_factory.mktemp("cup")
    c = Cup(base / "ledger", _keys(base / "keys"))
    init(c.root)
    plan = TournamentPlan("checkers", players=8, rounds=3, games_per_round=1, seed=SEED, withdrawals=((WITHDRAWN, 3),))
    simulate_tournament(c.root, plan, movement_ranking)
    c.before = {r["player"]: r for r in standings(open_session(c.root), T).rows}
    c.run("appeal", "register", "--pub", str(c.keys / "zhang.pub"), "--role", "chief_referee", "--name", "Zhang", "--at", "1")
    c.run("appeal", "register", "--pub", str(c.keys / "li.pub"), "--role", "committee", "--name", "Li", "--at", "1")
    late, (upheld, rejected, forfeit) = _played(c.root, 1)[0], _played(c.root, 3)
    c.games = {"late": late, "upheld": upheld, "rejected": rejected, "forfeit": forfeit}
    _late_appeal(c, late)
    _upheld_appeal(c, upheld)
    _rejected_appeal(c, rejected)
    _forfeit(c, forfeit)
    _withdrawal(c)
    return c


def _player(c: Cup, game: str, seat: int) -> str:
    start = list(LogReader(c.root).events(game))[0]
    assert isinstance(start, GameStarted)
    return start.seats[seat].holder


def _file(c: Cup, game: str, at: int, grounds: str, *anyway: str) -> int:
    out = c.run("appeal", "file", "--tournament", T, "--game", game, "--player", _player(c, game, 0), "--grounds", grounds,
                "--at", str(at), *anyway)
    return int(out["seq"])


def _decide(c: Cup, appeal: int, decision: str, votes: list[str], at: int, key: str = "li", *anyway: str) -> int:
    args = [f"--vote={v}" for v in votes]
    out = c.run("appeal", "decide", "--tournament", T, "--appeal", str(appeal), "--decision", decision, *args,
                "--text", f"the committee: {decision}", "--key", c.key(key), "--at", str(at), *anyway)
    return int(out["seq"])


ANYWAY = "--record-anyway"
"""Planted faults are recorded as evidence: the commands refuse them otherwise (issue 30 point 6)."""


def _late_appeal(c: Cup, game: str) -> None:
    """第十八条 2: filed 30 h after the end of an online game (window 24 h): void."""
    filed = _end(c.root, game) + 30 * HOUR
    _decide(c, _file(c, game, filed, "the opponent's move 7 was illegal", ANYWAY), "void_late", ["li=void", "wang=void", "zhao=void"],
            filed + HOUR)


def _upheld_appeal(c: Cup, game: str) -> None:
    """第十九条, 第十四条 (1): upheld 2–1, then the chief referee overrides the result."""
    filed = _end(c.root, game) + 6 * HOUR
    decided = _decide(c, _file(c, game, filed, "the clock failed"), "upheld", ["li=uphold", "wang=uphold", "zhao=reject"], filed + 20 * HOUR)
    claim = _claim(c.root, game)
    winners = "1" if claim.winners == [0] else "0"
    c.run("appeal", "rule", "--stream", game, "--kind", "result_override", "--corrects", str(claim.seq), "--winners", winners,
          "--text", "result corrected after the upheld appeal", "--carries-out", f"{T}#{decided}", "--key", c.key("zhang"),
          "--at", str(filed + 21 * HOUR))


def _rejected_appeal(c: Cup, game: str) -> None:
    filed = _end(c.root, game) + 6 * HOUR
    _decide(c, _file(c, game, filed, "I did not mean to move"), "rejected", ["li=reject", "wang=reject", "zhao=reject"], filed + 2 * HOUR)


def _forfeit(c: Cup, game: str) -> None:
    """第十六条: seat 0 loses the game (判当盘负), the opponent scores 1."""
    c.run("appeal", "rule", "--stream", game, "--kind", "forfeit", "--seat", "0", "--corrects", "1",
          "--text", "seat 0 pressed 略过 without cause", "--article", "第十六条 (2)", "--key", c.key("zhang"),
          "--at", str(_end(c.root, game) + HOUR))


def _withdrawal(c: Cup) -> None:
    """第十二条: P001 leaves before round 3; its round-3 match goes to the opponent."""
    seated = next(e for e in list(LogReader(c.root).events(T)) if isinstance(e, RoundSeated) and e.round == 3)
    c.run("appeal", "rule", "--stream", T, "--kind", "withdrawal", "--player", WITHDRAWN, "--from-round", "3",
          "--corrects", str(seated.seq), "--text", "P001 withdrew", "--key", c.key("zhang"), "--at", str(seated.ts + 60_000))


def _codes(root: Path) -> set[str]:
    return {f["code"] for f in certify(root, T).findings}


# -- the tournament as arbitrated ------------------------------------------------------------------

def test_the_arbitrated_tournament_certifies(cup: Cup) -> None:
    """Junqi 第十八–十九条, 第十四条: every procedure followed, so nothing is found."""
    cert = certify(cup.root, T)
    assert cert.ok, cert.findings
    checked = {c.name: c.checked for c in cert.checks}
    assert checked["appeals"] == 3 and checked["arbiters"] == 3 + 3  # three decisions, three rulings
    assert cup.run("audit", "--tournament", T)["ok"] is True


def test_upheld_appeal_changes_the_standings_and_explain_names_the_ruling(cup: Cup) -> None:
    """第十四条 (1): the override flips the game, the match points follow, `--explain` names the ruling."""
    game = cup.games["upheld"]
    claim = _claim(cup.root, game)
    after = {r["player"]: r for r in standings(open_session(cup.root), T).rows}
    winner_before = _player(cup, game, claim.winners[0]) if claim.winners else None
    loser_before = _player(cup, game, 1 - claim.winners[0]) if claim.winners else _player(cup, game, 1)
    if winner_before is not None:
        assert after[winner_before]["big"] == cup.before[winner_before]["big"] - 1
    assert after[loser_before]["big"] > cup.before[loser_before]["big"]
    chain = explain(open_session(cup.root), T, loser_before)
    row = next(g for g in chain.games if g["stream"] == game)
    assert row["ruling"].endswith(f"result_override by zhang carrying out {T}#{_decision_seq(cup, game)} (upheld)")
    assert row["counted_from"] == "ruling" and row["counted_points"] == 1.0 and row["derived_points"] != 1.0
    listed = cup.run("standings", "--tournament", T, "--explain", loser_before)["games"]
    assert [g["ruling"] for g in listed if g["stream"] == game] == [row["ruling"]]


def _decision_seq(cup: Cup, game: str) -> int:
    rows = open_session(cup.root).db.run("appeal_list", tournament=T)
    return next(r["decision_seq"] for r in rows if r["game"] == game)


def test_forfeit_and_withdrawal_apply_to_the_standings(cup: Cup) -> None:
    """第十六条 (判当盘负) and checkers 第十二条 (未赛场次均判对手胜): the forfeit gives seat 1 the game,
    the withdrawn player's unplayed round-3 match goes to its opponent."""
    db = open_session(cup.root).db
    forfeit = cup.games["forfeit"]
    points = db.query(f"SELECT seat, points, source FROM results WHERE stream = '{forfeit}' ORDER BY seat")[1]
    assert points == [(0, 0.0, "ruling"), (1, 1.0, "ruling")]
    seated = next(e for e in list(LogReader(cup.root).events(T)) if isinstance(e, RoundSeated) and e.round == 3)
    opponent = next(s.holder for t in seated.tables if any(s.holder == WITHDRAWN for s in t.seats) for s in t.seats if s.holder != WITHDRAWN)
    rows = {r["player"]: r for r in standings(open_session(cup.root), T).rows}
    assert rows[opponent]["forfeits"] == 1 and rows[WITHDRAWN]["forfeits"] == 1
    assert rows[opponent]["big"] == cup.before[opponent]["big"] + 1
    assert rows[WITHDRAWN]["big"] == cup.before[WITHDRAWN]["big"]


def test_withdrawal_forfeits_agree_with_the_match_rules(cup: Cup) -> None:
    """Checkers 第十二条, two derivations: the SQL's forfeits (`swiss_matches`) are those
    `replay.checkers.match.withdrawal_forfeits` gives for the seated schedule."""
    from replay.checkers.match import ScheduledMatch, withdrawal_forfeits

    played = {(e.round, e.table) for e in LogReader(cup.root).events() if isinstance(e, GameStarted)}
    schedule = [ScheduledMatch(e.round, t.seats[0].holder, t.seats[1].holder, (e.round, t.table) in played)
                for e in list(LogReader(cup.root).events(T)) if isinstance(e, RoundSeated) for t in e.tables if len(t.seats) == 2]
    expected = {(f.round, f.winner, 1.0) for f in withdrawal_forfeits(schedule, WITHDRAWN)}
    expected |= {(f.round, f.loser, 0.0) for f in withdrawal_forfeits(schedule, WITHDRAWN)}
    rows = open_session(cup.root).db.run("crosstable_swiss", tournament=T)
    assert {(r["round"], r["player"], r["mp"]) for r in rows if r["kind"] == "forfeit"} == expected != set()


def test_appeals_lists_every_appeal_and_none_open(cup: Cup) -> None:
    listed = cup.run("appeals", "--tournament", T)["appeals"]
    assert [(a["decision"], a["in_time"], a["correction"], a["open"]) for a in listed] == [
        ("void_late", False, None, False), ("upheld", True, "result_override", False), ("rejected", True, None, False)]
    assert cup.run("appeals", "--open")["appeals"] == []


def test_status_says_what_is_final(cup: Cup) -> None:
    """Issue 15 item 4: after the appeals every game is final, and an open appeal makes its game's
    rows `under_appeal` until it is decided."""
    db = open_session(cup.root).db
    assert db.query("SELECT DISTINCT status FROM game_status")[1] == [("final",)]


def test_crosstable_shows_every_round(cup: Cup) -> None:
    table = crosstable(open_session(cup.root), T)
    assert [r["player"] for r in table.rows] == [r["player"] for r in standings(open_session(cup.root), T).rows]
    withdrawn = next(r for r in table.rows if r["player"] == WITHDRAWN)
    assert withdrawn["rounds"][3].endswith("F-")  # the forfeit of 第十二条
    result = cli("standings", "--ledger", str(cup.root), "--tournament", T, "--crosstable")
    assert result.exit_code == 0 and WITHDRAWN in result.output


# -- planted procedural faults ---------------------------------------------------------------------

def _copy(cup: Cup, tmp_path: Path) -> Cup:
    c = Cup(tmp_path / "ledger", cup.keys)
    shutil.copytree(cup.root, c.root)
    c.games = cup.games
    return c


def _no_majority(c: Cup) -> None:
    game = c.games["rejected"]
    filed = _end(c.root, game) + 7 * HOUR
    _decide(c, _file(c, game, filed, "again"), "rejected", ["li=reject", "wang=uphold", "zhao=uphold"], filed + HOUR, "li", ANYWAY)


def _decided_late(c: Cup) -> None:
    game = c.games["rejected"]
    filed = _end(c.root, game) + 7 * HOUR
    _decide(c, _file(c, game, filed, "again"), "rejected", ["li=reject", "wang=reject", "zhao=reject"], filed + 6 * 24 * HOUR)


def _correction_without_decision(c: Cup) -> None:
    game = c.games["rejected"]
    c.run("appeal", "rule", "--stream", game, "--kind", "result_override", "--corrects", str(_claim(c.root, game).seq),
          "--winners", "0", "--text", "changed on request", "--key", c.key("zhang"), "--at", str(_end(c.root, game) + 30 * HOUR), ANYWAY)


def _upheld_not_corrected(c: Cup) -> None:
    game = c.games["rejected"]
    filed = _end(c.root, game) + 7 * HOUR
    _decide(c, _file(c, game, filed, "again"), "upheld", ["li=uphold", "wang=uphold", "zhao=reject"], filed + HOUR)


def _late_appeal_heard(c: Cup) -> None:
    game = c.games["rejected"]
    filed = _end(c.root, game) + 25 * HOUR
    _decide(c, _file(c, game, filed, "again", ANYWAY), "rejected", ["li=reject", "wang=reject", "zhao=reject"], filed + HOUR)


def _ruling_event(c: Cup, signer: Signer | None) -> None:
    """A yellow card (a penalty without points: no result change) signed by `signer`, or unsigned."""
    game = c.games["rejected"]
    seq = len(list(LogReader(c.root).events(game)))
    ruling = Ruling(stream=game, seq=seq, ts=_end(c.root, game) + HOUR, corrects=1, text="yellow card", ruling="penalty", seat=0)
    record(c.root, [encode(sign(ruling, signer) if signer else ruling)])


def _unsigned_ruling(c: Cup) -> None:
    _ruling_event(c, None)


def _unknown_signer(c: Cup) -> None:
    _ruling_event(c, Signer.load(c.keys / "stranger.key"))


def _forged_signature(c: Cup) -> None:
    """A signed ruling whose points were changed after signing: the signature no longer verifies."""
    game = c.games["rejected"]
    seq = len(list(LogReader(c.root).events(game)))
    ruling = sign(Ruling(stream=game, seq=seq, ts=_end(c.root, game) + HOUR, corrects=1, text="yellow card", ruling="penalty",
                         seat=0, points=[0, 0]), Signer.load(c.keys / "zhang.key"))
    record(c.root, [encode(msgspec.structs.replace(ruling, points=[-1, 0]))])


def _decision_by_a_referee(c: Cup) -> None:
    game = c.games["rejected"]
    filed = _end(c.root, game) + 7 * HOUR
    _decide(c, _file(c, game, filed, "again"), "rejected", ["li=reject", "wang=reject", "zhao=reject"], filed + HOUR, "zhang", ANYWAY)


FAULTS: dict[str, tuple[Callable[[Cup], None], str]] = {
    "no-majority": (_no_majority, "audit.A02"),            # 第十九条 1, 第十三条 三
    "decided-late": (_decided_late, "audit.A03"),          # 第十九条 1
    "correction-without-decision": (_correction_without_decision, "audit.A04"),  # 第十四条 (1)
    "upheld-not-corrected": (_upheld_not_corrected, "audit.A05"),  # 第十四条 (1)
    "late-appeal-heard": (_late_appeal_heard, "audit.A01"),  # 第十八条 2
    "unsigned-ruling": (_unsigned_ruling, "audit.A06"),
    "unknown-signer": (_unknown_signer, "audit.A06"),
    "forged-signature": (_forged_signature, "audit.A06"),
    "decision-signed-by-a-referee": (_decision_by_a_referee, "audit.A06"),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_procedural_fault_is_caught_by_exactly_its_check(cup: Cup, tmp_path: Path, fault: str) -> None:
    plant, code = FAULTS[fault]
    c = _copy(cup, tmp_path)
    plant(c)
    assert _codes(c.root) == {code}


def test_an_undecided_appeal_puts_its_game_under_appeal(cup: Cup, tmp_path: Path) -> None:
    c = _copy(cup, tmp_path)
    game = c.games["rejected"]
    _file(c, game, _end(c.root, game) + 7 * HOUR, "pending")
    db = open_session(c.root).db
    assert db.query(f"SELECT status FROM game_status WHERE stream = '{game}'")[1] == [("under_appeal",)]
    players = {_player(c, game, 0), _player(c, game, 1)}
    assert {r["status"] for r in standings(open_session(c.root), T).rows if r["player"] in players} == {"under_appeal"}
    assert [a["game"] for a in c.run("appeals", "--open")["appeals"]] == [game]


def test_an_appeal_left_undecided_is_late_by_the_competitions_clock(cup: Cup, tmp_path: Path) -> None:
    """第十九条 1 (须在2个工作日内给予答复): an appeal still undecided is late once the competition's
    latest event (`competition_clock`, the "now" a game's appeal window is judged at) is past its
    deadline. A registration on the log's own stream dated a month later is not the competition:
    it leaves the appeal in time; an appeal filed on another game a month later makes it late."""
    c = _copy(cup, tmp_path)
    game, other = c.games["rejected"], c.games["upheld"]
    filed = _end(c.root, game) + 7 * HOUR
    _file(c, game, filed, "pending")
    c.run("appeal", "register", "--pub", str(c.keys / "stranger.pub"), "--role", "committee", "--name", "Wu", "--at", str(filed + 30 * 24 * HOUR))
    assert "audit.A03" not in _codes(c.root)
    _file(c, other, filed + 30 * 24 * HOUR, "much later", ANYWAY)
    late = [f for f in certify(c.root, T).findings if f["code"] == "audit.A03"]
    assert len(late) == 1 and "逾期未决" in late[0]["message"] and game in late[0]["message"], late


# -- pieces ----------------------------------------------------------------------------------------

def test_an_old_ruling_without_a_kind_still_decodes_and_means_what_it_meant() -> None:
    """Schema evolution: a `game.ruling` recorded before kinds existed reads as a result override when
    it names a result, else as an authorised skip (what the engines did with it)."""
    from schemas.common import ruling_kind

    old = (b'{"kind":"game.ruling","stream":"g","seq":3,"ts":5,"seat":1,"v":1,"corrects":2,"article":null,"text":"t",'
           b'"termination":null,"winners":null,"points":null}')
    assert ruling_kind(decode(old)) == "authorised_skip"  # type: ignore[arg-type]
    assert ruling_kind(decode(old.replace(b'"winners":null', b'"winners":[0]'))) == "result_override"  # type: ignore[arg-type]


@pytest.mark.parametrize(("filed", "basis", "deadline"), [
    ("2026-09-21T10:00:00+08:00", "working", "2026-09-23T10:00:00+08:00"),  # Monday → Wednesday
    ("2026-09-25T10:00:00+08:00", "working", "2026-09-29T10:00:00+08:00"),  # Friday → Tuesday
    ("2026-09-26T10:00:00+08:00", "working", "2026-09-30T00:00:00+08:00"),  # Saturday: from Monday 00:00
    ("2026-09-25T10:00:00+08:00", "calendar", "2026-09-27T10:00:00+08:00"),
])
def test_decision_deadline_counts_working_days(filed: str, basis: str, deadline: str) -> None:
    """第十九条 1: 2 个工作日 (decision_day_basis = working), or two calendar days."""
    from audit.query.appeals import parse_time

    rules = ArbitrationRules(decision_day_basis=basis)  # type: ignore[arg-type]
    assert decision_deadline(parse_time(filed), rules) == parse_time(deadline)


def test_appeal_window_by_event_type() -> None:
    """第十八条 2: 24 h online (非限定场地赛), 3 h at a venue (限定场地赛)."""
    assert ArbitrationRules().appeal_window_ms() == 24 * HOUR
    assert ArbitrationRules(event_type="venue").appeal_window_ms() == 3 * HOUR


def test_appeal_commands_naming_what_does_not_exist_exit_2_and_leave_the_log_unchanged(cup: Cup) -> None:
    """Issue 30 point 14 (README's exit codes: 2 for what does not exist or is misused): an unknown game
    or player, `--appeal 99`, `--corrects 9999`, a bad `--decision`."""
    size = sum(1 for _ in LogReader(cup.root).events())
    game = cup.games["rejected"]
    bad = [
        ("appeal", "file", "--tournament", T, "--game", "nope", "--player", "P002", "--grounds", "x"),
        ("appeal", "file", "--tournament", T, "--game", game, "--player", "P999", "--grounds", "x"),
        ("appeal", "decide", "--tournament", T, "--appeal", "99", "--decision", "rejected", "--vote", "li=reject",
         "--text", "x", "--key", cup.key("li")),
        ("appeal", "rule", "--stream", game, "--kind", "void_game", "--corrects", "9999", "--text", "x", "--key", cup.key("zhang")),
        ("appeal", "decide", "--tournament", T, "--appeal", "0", "--decision", "maybe", "--vote", "li=reject",
         "--text", "x", "--key", cup.key("li")),
    ]
    for args in bad:
        result = cli(*args, "--ledger", str(cup.root))
        assert result.exit_code == 2, (args, result.output)
    assert sum(1 for _ in LogReader(cup.root).events()) == size


# -- a voided game in a duplicate event ------------------------------------------------------------

def test_a_voided_game_leaves_its_board_comparison(tmp_path: Path) -> None:
    """附录二 with `void_board = exclude` [INF]: a voided Paohuzi table has no points; the other tables of
    the board compare among themselves (N = 2 of 3), its players have no rate for the board, and the
    standings count the game as void instead of dropping it."""
    root, keys = tmp_path / "ledger", _keys(tmp_path / "keys")
    c = Cup(root, keys)
    init(root)
    tid = "paohuzi-cup-5"
    simulate_tournament(root, TournamentPlan("paohuzi", players=9, rounds=1, games_per_round=1, seed=5), movement_ranking)
    c.run("appeal", "register", "--pub", str(keys / "zhang.pub"), "--role", "chief_referee", "--at", "1")
    game = _played(root, 1)[0]
    c.run("appeal", "rule", "--stream", game, "--kind", "void_game", "--corrects", "0", "--text", "the deal was exposed",
          "--key", c.key("zhang"), "--at", str(_end(root, game) + HOUR))
    session = open_session(root)
    assert session.db.query(f"SELECT DISTINCT source, status FROM results WHERE stream = '{game}'")[1] == [("void", "void")]
    assert session.db.query(f"SELECT count(*) FROM board_mp WHERE stream = '{game}'")[1] == [(0,)]
    assert session.db.query("SELECT DISTINCT n FROM board_mp WHERE r IS NOT NULL")[1] == [(2,)]
    voided = {_player(c, game, s) for s in range(3)}
    rows = {r["player"]: r for r in standings(session, tid).rows}
    assert {p for p, r in rows.items() if r["void_games"] == 1} == voided and all(rows[p]["boards"] is None for p in voided)
    assert certify(root, tid).ok
