"""Simulated tournaments (issue 13, items 9, 24 and 25): an odd checkers field with byes, Swiss
rounds that need backtracking, tournament settings and game profiles set through `simulate --set`
and `--profile`, each recorded, replayed and certified clean; a halted Junqi game and an abandoned
checkers log that still count, and a Swiss round that records another pairing algorithm."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from audit.query.session import open_session
from audit.simulator.simulate import record_events
from ledger import LogReader, store
from ledger.store import Ledger
from schemas import decode_stored
from schemas.checkers import CheckersProfile
from schemas.common import PlayerRegistered, RoundSeated, TableSeating, TournamentOpened
from schemas.envelope import SeatHolder
from tests.checkers_support import T0, claim, scripted, start
from tests.ledger_support import cli


def simulate(root: Path, game: str, players: int, rounds: int, seed: int, *extra: str) -> str:
    """Records a simulated tournament through the CLI; returns its id."""
    print(f"simulate {game} players={players} rounds={rounds} seed={seed} {' '.join(extra)}")
    result = cli("simulate", game, "--tournament", "--players", str(players), "--rounds", str(rounds), "--seed", str(seed),
                 "--ledger", str(root), "--json", *extra)
    assert result.exit_code == 0, result.output
    return str(json.loads(result.stdout)["tournament"])


def certified(root: Path) -> bool:
    """Tells whether the ledger audits with no finding."""
    result = cli("audit", "--ledger", str(root), "--json")
    report = json.loads(result.stdout)
    assert [c["examples"] for c in report["checks"] if c["failed"]] == []
    return result.exit_code == 0 and bool(report["ok"])


def query(root: Path, sql: str) -> list[tuple[Any, ...]]:
    """Runs read-only SQL over a ledger's projection."""
    return open_session(root).db.query(sql)[1]


def rounds_seated(root: Path, tournament: str) -> list[RoundSeated]:
    """Returns every round's recorded seating."""
    rows = query(root, f"SELECT body FROM events WHERE stream = '{tournament}' AND kind = 'tournament.round_seated' ORDER BY seq")
    return [e for e in decode_stored([body.encode() for (body,) in rows]) if isinstance(e, RoundSeated)]


def test_checkers_s12_1_odd_field_gets_a_bye(tmp_path: Path) -> None:
    """§12.1: with 5 players one sits out each round (轮空) and scores bye_points = 1; nobody gets a
    second bye; the auditor re-derives every pairing and bye and certifies the event."""
    root = tmp_path / "l"
    tid = simulate(root, "checkers", 5, 4, 7, "--games-per-round", "1")
    assert certified(root)
    byes = [[t.seats[0].holder for t in r.tables if len(t.seats) == 1] for r in rounds_seated(root, tid)]
    assert byes == [["P004"], ["P005"], ["P002"], ["P003"]]
    rows = open_session(root).db.run("swiss_standings", tournament=tid, through=4)
    # 2 matches a round share 1 point each, a bye scores 1: 4 × (2 + 1) = 12; P001 never sits out and
    # plays 4 games, the others 3 and a bye, which adds to 大分 and 累进分 but not to wins, games or anyone's BH
    assert sum(r["big"] for r in rows) == 12.0
    assert [(r["player"], r["big"], r["bh"], r["ps"], r["wins"], r["games"], r["bh_prev"]) for r in rows] == [
        ("P001", 3.0, 9.0, 7.0, 3, 4, [5.0, 3.0, 0.0]), ("P003", 3.0, 7.0, 8.0, 2, 3, [6.0, 2.0, 0.0]),
        ("P005", 2.0, 8.0, 5.0, 1, 3, [4.0, 1.0, 1.0]), ("P002", 2.0, 8.0, 5.0, 1, 3, [3.0, 3.0, 1.0]),
        ("P004", 2.0, 7.0, 5.0, 1, 3, [4.0, 1.0, 0.0]),
    ]


def greedy(order: list[str], met: set[frozenset[str]]) -> list[tuple[str, str]] | None:
    """Pairs each highest unpaired player with the next one not met, never undoing a pair."""
    rest, pairs = list(order), []
    while rest:
        top = rest.pop(0)
        partner = next((p for p in rest if frozenset((top, p)) not in met), None)
        if partner is None:
            return None
        rest.remove(partner)
        pairs.append((top, partner))
    return pairs


def test_checkers_s12_2_simulated_swiss_backtracks(tmp_path: Path) -> None:
    """§12.2: 6 players over 5 rounds meet everyone once; some round cannot be paired top-down
    without undoing a pair, and the recorded pairing (named with its algorithm) is the
    backtracking one the auditor re-derives."""
    root = tmp_path / "l"
    tid = simulate(root, "checkers", 6, 5, 1, "--games-per-round", "1")
    assert certified(root)
    session = open_session(root)
    met: set[frozenset[str]] = set()
    backtracked = []
    for r in rounds_seated(root, tid):
        pairs = {frozenset(s.holder for s in t.seats) for t in r.tables}
        if r.round > 1:
            assert r.pairing == "matchledger-swiss/1 points_seed"
            order = [x["player"] for x in session.db.run("pairing_order", tournament=tid, through=r.round - 1)]
            quick = greedy(order, met)
            if quick is None or {frozenset(p) for p in quick} != pairs:
                backtracked.append(r.round)
        met |= pairs
    assert backtracked == [4]


def test_tournament_s25_settings_and_profiles(tmp_path: Path) -> None:
    """Item 25: `--set` reaches the tournament rules (mp_field, opponents, trimmed_few_games,
    swiss_pairing_order) or the game's profile, `--profile` picks a named profile; each event is
    recorded under them and certifies clean; an unknown setting is refused."""
    junqi = tmp_path / "junqi"
    tid = simulate(junqi, "junqi", 16, 2, 3, "--games-per-round", "1", "--group-tables", "2", "--set", "mp_field=group",
                   "--set", "opponents=per_game", "--set", "trimmed_few_games=all_games")
    assert certified(junqi)
    rules = json.loads(query(junqi, f"SELECT rules FROM tournaments WHERE tournament = '{tid}'")[0][0])
    assert (rules["mp_field"], rules["opponents"], rules["trimmed_few_games"], rules["group_tables"]) == ("group", "per_game", "all_games", 2)
    assert query(junqi, "SELECT DISTINCT n FROM board_mp") == [(2,)]
    paohuzi = tmp_path / "paohuzi"
    simulate(paohuzi, "paohuzi", 6, 2, 3, "--profile", "ningxiang")
    assert certified(paohuzi)
    assert query(paohuzi, "SELECT DISTINCT json_extract_string(profile, '$.mingtang_table') FROM games") == [("ningxiang",)]
    checkers = tmp_path / "checkers"
    tid = simulate(checkers, "checkers", 6, 3, 3, "--games-per-round", "1", "--set", "swiss_pairing_order=tiebreak_chain",
                   "--set", "bye_points=draw")
    assert certified(checkers)
    assert [r.pairing for r in rounds_seated(checkers, tid)] == [None, *["matchledger-swiss/1 tiebreak_chain"] * 2]
    refused = cli("simulate", "junqi", "--tournament", "--ledger", str(tmp_path / "x"), "--set", "mp_field=nowhere")
    assert refused.exit_code == 2 and "mp_field" in refused.stderr and not (tmp_path / "x").exists()  # a usage error (issue 16)


def test_tournament_s2_halted_junqi_game_keeps_every_board(tmp_path: Path) -> None:
    """Item 9 (checkers.md §4.7 read for Junqi): a game the engine halts at an illegal move counts
    with its declared result, so every player ranks on all 4 boards, and its four players are flagged."""
    root = tmp_path / "l"
    tid = simulate(root, "junqi", 8, 2, 11, "--inject", "illegal-move")
    rows = open_session(root).db.run("ranking", tournament=tid)
    assert {r["boards"] for r in rows} == {4}
    assert sorted(r["player"] for r in rows if r["unverified"]) == ["P003", "P004", "P006", "P007"]


def test_checkers_s12_2_round_records_another_pairing(tmp_path: Path) -> None:
    """§12.2: a Swiss round whose event names a pairing algorithm other than the one the tournament
    rules give is a seating finding (audit.W02), however its pairs look."""
    source, root = tmp_path / "source", tmp_path / "l"
    simulate(source, "checkers", 6, 2, 3, "--games-per-round", "1")
    events = [msgspec.structs.replace(e, pairing="other-swiss/2") if isinstance(e, RoundSeated) and e.round == 2 else e
              for e in LogReader(source).events()]
    store.init(root)
    with Ledger.open(root) as log:
        record_events(log, events)
        log.checkpoint()
    report = json.loads(cli("audit", "--ledger", str(root), "--json").stdout)
    assert [(f["check"], f["code"], f["message"]) for f in report["findings"]] == [
        ("seating", "audit.W02", "第2轮记录的编排算法为「other-swiss/2」，赛事规则规定为「matchledger-swiss/1 points_seed」 "
                                 "round 2 records pairing other-swiss/2; the tournament rules give matchledger-swiss/1 points_seed")]


def test_checkers_s4_7_abandoned_log_stays_in_the_swiss_standings(tmp_path: Path) -> None:
    """Item 9 from a hand-written log: `game.started`, `3>14`, `115>102`, `game.ended` claiming
    ABANDONED with seat 0 the winner. The rules give no result (§5.4a: UNVERIFIED), and the
    standings keep the declared 1–0 for both players, flagged, whether the engine leaves the
    result empty or adopts the claim."""
    stream = "cup/r1/t1/g1"
    game = claim(scripted(start(), ["3>14", "115>102"]), "ABANDONED", [0], [1, 0])
    game[0] = msgspec.structs.replace(game[0], seats=[SeatHolder(seat=0, player="A"), SeatHolder(seat=1, player="B")],
                                      tournament="cup", round=1, table=1, board="r1-t1")
    seat_a_b = [TableSeating(table=1, seats=[SeatHolder(seat=0, player="A"), SeatHolder(seat=1, player="B")])]
    events = [TournamentOpened(stream="cup", seq=0, ts=T0 - 3, game="checkers", name="cup", profile=CheckersProfile(), format="swiss"),
              PlayerRegistered(stream="cup", seq=1, ts=T0 - 2, player="A", name="A"),
              PlayerRegistered(stream="cup", seq=2, ts=T0 - 2, player="B", name="B"),
              RoundSeated(stream="cup", seq=3, ts=T0 - 1, round=1, tables=seat_a_b),
              *(msgspec.structs.replace(e, stream=stream) for e in game)]
    root = tmp_path / "l"
    store.init(root)
    with Ledger.open(root) as log:
        record_events(log, events)
        log.checkpoint()
    rows = open_session(root).db.run("swiss_standings", tournament="cup", through=1)
    assert [(r["rank"], r["player"], r["big"], r["games"], r["unverified"]) for r in rows] == [(1, "A", 1.0, 1, 1), (2, "B", 0.0, 1, 1)]
