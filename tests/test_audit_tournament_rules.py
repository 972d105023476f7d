"""Tournament scoring under every setting (issue 13, items 9 and 20–24), from hand-built
projections worked out by hand in the comments: games without a derived result stay in the
standings with their declared points, MP within movement groups, opponents counted per game,
previous-round Buchholz, the trimmed move time of two games, and the Swiss pairing order."""

from __future__ import annotations

import json
from typing import Any

import pytest

from replay import seating
from schemas.checkers import CheckersProfile
from schemas.junqi import JunqiProfile
from schemas.paohuzi import PaohuziProfile
from tests.audit_rows import HandBuilt, profile_json
from tests.test_audit_ranking_chain import board, clock
from tests.test_audit_swiss import EXPECTED, RESULTS

T = "cup"
JUNQI = profile_json(JunqiProfile())
PAOHUZI = profile_json(PaohuziProfile())
CHECKERS = profile_json(CheckersProfile())


def swiss_event(b: HandBuilt, rules: dict[str, Any] | None = None) -> None:
    """Adds a checkers Swiss tournament with its rules and the worked example's players A–F (player numbers 1–6)."""
    b.rows["tournaments"].append({"tournament": T, "game": "checkers", "name": T, "format": "swiss", "stage": "preliminary",
                                  "profile": CHECKERS, "rules": json.dumps(rules or {})})
    for n, p in enumerate("ABCDEF"):
        b.rows["players"].append({"entry": n, "tournament": T, "player": p, "name": p})


def match(b: HandBuilt, rnd: int, table: int, a: str, z: str, pa: float, pz: float, termination: str | None = "ALL_HOME",
          engine: tuple[float | None, float | None] | None = None) -> None:
    """Adds a one-game checkers match and its seating; `engine` gives the engine's points when they
    are not the result's (a game the engine could not decide)."""
    stream = f"{T}/r{rnd}/t{table}"
    winners = [] if pa == pz else [0 if pa > pz else 1]
    pts = engine if engine is not None else (pa, pz)
    b.game(stream, "checkers", CHECKERS, termination, winners if termination else None, [(a, pts[0]), (z, pts[1])],
           tournament=T, round=rnd, table_no=table, board=f"r{rnd}-t{table}")
    b.event(stream, 90, "game.ended", termination="ABANDONED" if termination != "ALL_HOME" else termination,
            winners=winners, points=[pa, pz])
    for seat, p in enumerate((a, z)):
        b.rows["seatings"].append({"tournament": T, "round": rnd, "table_no": table, "group_no": None, "seat": seat, "player": p})


def swiss(b: HandBuilt, through: int = 1_000_000, *columns: str) -> list[tuple[Any, ...]]:
    """Returns the Swiss standings as (rank, player, *columns)."""
    return [(r["rank"], r["player"], *(r[c] for c in columns)) for r in b.db().run("swiss_standings", tournament=T, through=through)]


# -- item 9: a game without a derived result keeps its declared result, flagged ---------------------

ENGINE_SHAPES = [
    pytest.param(None, (None, None), id="no-result-today"),
    pytest.param("UNVERIFIED", (1.0, 0.0), id="unverified-with-the-claim"),
    pytest.param("UNVERIFIED", (0.0, 0.0), id="unverified-without-points"),
]


@pytest.mark.parametrize(("termination", "engine"), ENGINE_SHAPES)
def test_checkers_s4_7_game_without_result_keeps_declared_result(termination: str | None,
                                                                   engine: tuple[float | None, float | None]) -> None:
    """§4.7 and §5.4a: `game.started`, two moves, `game.ended` claiming ABANDONED with A the
    winner: the engine derives no result (today NULL; under the checkers fix UNVERIFIED with the
    claim), the standings count the declared 1–0 and flag both players, whichever shape the
    engine gives."""
    b = HandBuilt()
    swiss_event(b)
    match(b, 1, 1, "A", "D", 1, 0, termination, engine)
    match(b, 1, 2, "B", "E", 0.5, 0.5)
    match(b, 1, 3, "C", "F", 0, 1)
    # A 1 (declared), B and E ½, F 1; BH: A's opponent D 0, F's C 0, B's E ½, E's B ½, C's F 1, D's A 1.
    assert swiss(b, 1_000_000, "big", "bh", "games", "unverified") == [
        (1, "A", 1.0, 0.0, 1, 1), (1, "F", 1.0, 0.0, 1, 0),
        (3, "B", 0.5, 0.5, 1, 0), (3, "E", 0.5, 0.5, 1, 0),
        (5, "C", 0.0, 1.0, 1, 0), (5, "D", 0.0, 1.0, 1, 1),
    ]
    games = {r["counted_from"] for r in b.db().run("player_games", tournament=T, player="A")}
    assert games == {"claimed"}


def test_tournament_s2_halted_game_counts_on_every_board() -> None:
    """§2 with checkers.md §4.7 read for Junqi: a board at two tables whose second game the engine
    halted at an illegal event (no derived result) counts with the declared result, flagged, so
    every player ranks on the same number of boards; a game with neither a result nor a claim
    keeps its players in the standings with the flag and no rate."""
    b = HandBuilt()
    board(b, 1, ("A B C D", "S"), ("E F G H", "S"))
    b.rows["games"][1]["termination"] = b.rows["games"][1]["winners"] = None
    for seat in b.rows["seats"][4:8]:
        seat["points"] = None
    b.event(f"{T}/r1/t2", 80, "game.ended", termination="FLAG_CAPTURED", winners=[1, 3], points=[1, 5, 1, 5])
    b.game(f"{T}/r2/t1", "junqi", JUNQI, None, None, [(p, None) for p in "AFCH"], tournament=T, round=2, table_no=1, board="r2-b1")
    # Board r1-b1, seat 0: A 5 against E's declared 1 → A r 100, E r 0; seat 1: B 1 against F's 5 → B 0, F 100.
    # Board r2-b1: no result and no claim; A, F, C, H are still listed, flagged, on one rated board.
    rows = {r["player"]: (r["r_shown"], r["boards"], r["unverified"]) for r in b.db().run("ranking", tournament=T)}
    assert rows == {"A": (100.0, 1, 1), "B": (0.0, 1, 0), "C": (100.0, 1, 1), "D": (0.0, 1, 0),
                    "E": (0.0, 1, 1), "F": (100.0, 1, 2), "G": (0.0, 1, 1), "H": (100.0, 1, 2)}


# -- item 20: mp_field = group -----------------------------------------------------------------

def grouped_round(b: HandBuilt, mp_field: str) -> None:
    """Adds a Junqi round of 16 players at 4 tables in 2 groups of 2 tables (group_tables = 2)."""
    b.tournament(T, "junqi", {"mp_field": mp_field, "group_tables": 2})
    board(b, 1, ("A B C D", "S"), ("E F G H", "S"), ("I J K L", "E"), ("M N O P", "D"))
    for table in range(1, 5):
        b.rows["seatings"].append({"tournament": T, "round": 1, "table_no": table, "group_no": (table + 1) // 2,
                                   "seat": 0, "player": "AEIM"[table - 1]})


@pytest.mark.parametrize(("mp_field", "expected"), [
    # all tables, seat 0 scores 5, 5, 1, 3: A and E beat I and M and tie each other: MP 2·2 + 2 − 1 = 5 of top 6.
    ("all_tables", [("A", None, 4, 5, 6, 83.3), ("E", None, 4, 5, 6, 83.3), ("M", None, 4, 2, 6, 33.3), ("I", None, 4, 0, 6, 0.0)]),
    # groups: A and E (group 1) tie, N = 2: MP 1 of 2; in group 2, M's 3 beats I's 1.
    ("group", [("A", 1, 2, 1, 2, 50.0), ("E", 1, 2, 1, 2, 50.0), ("M", 2, 2, 2, 2, 100.0), ("I", 2, 2, 0, 2, 0.0)]),
])
def test_tournament_s2_mp_field_group(mp_field: str, expected: list[tuple[Any, ...]]) -> None:
    """§2 [PARAM mp_field]: with `group` a board compares only the tables of the same movement group."""
    b = HandBuilt()
    grouped_round(b, mp_field)
    rows = [r for r in b.db().run("mp", tournament=T) if r["seat"] == 0]
    assert [(r["player"], r["field"], r["n"], r["mp"], r["top"], r["r"]) for r in rows] == expected


# -- item 21: opponents = per_game -------------------------------------------------------------

def two_rounds_of_paohuzi(b: HandBuilt, opponents: str) -> None:
    """Adds two Paohuzi boards at two tables in which X meets Y twice and P meets Q twice."""
    b.tournament(T, "paohuzi", {"opponents": opponents})
    for rnd, tables in ((1, (("X Y Z", (10, -5, -5)), ("P Q W", (0, 0, 0)))),
                        (2, (("X Y W", (5, -5, 0)), ("P Q Z", (5, -5, 0))))):
        for table, (players, points) in enumerate(tables, start=1):
            b.game(f"{T}/r{rnd}/t{table}", "paohuzi", PAOHUZI, "HU", [0], list(zip(players.split(), map(float, points))),
                   tournament=T, round=rnd, table_no=table, board=f"r{rnd}-b1")


@pytest.mark.parametrize(("opponents", "expected"), [
    # R: X = Q = W = (100 + 50) / 2 = 75; Y = Z = P = (0 + 50) / 2 = 25 (round 2 compares equal scores: 50 each).
    # X met Y, Z, then Y, W and beat all four games' opponents: once each (25 + 25 + 75) / 3;
    # per game (25 + 25 + 25 + 75) / 4. P met Q, W, then Q, Z, beat Q and Z in round 2:
    # (75 + 75 + 25) / 3 or (75 + 75 + 75 + 25) / 4; beaten (75 + 25) / 2 either way.
    ("distinct", {"X": (75.0, 41.666667, 41.666667), "P": (25.0, 58.333333, 50.0)}),
    ("per_game", {"X": (75.0, 37.5, 37.5), "P": (25.0, 62.5, 50.0)}),
])
def test_tournament_s3_opponents_per_game(opponents: str, expected: dict[str, tuple[float, ...]]) -> None:
    """§3 [PARAM opponents]: `per_game` counts an opponent once for every game met."""
    b = HandBuilt()
    two_rounds_of_paohuzi(b, opponents)
    rows = {r["player"]: (r["r_shown"], r["opp_r"], r["beaten_r"]) for r in b.db().run("ranking", tournament=T)}
    assert {p: rows[p] for p in expected} == expected


# -- item 22: Buchholz after the previous rounds -------------------------------------------------

def test_checkers_s12_3_bh_prev_from_the_round_before_the_last() -> None:
    """§12.3 criterion 7: the final standings (`standings --json` asks for every round) compare BH
    after round R − 1, then R − 2 … 1, as the standings after round 4 do (§12.4)."""
    b = HandBuilt()
    swiss_event(b)
    for n, (rnd, a, z, pa, pz) in enumerate(RESULTS):
        match(b, rnd, n % 3 + 1, a, z, pa, pz)
    final = swiss(b, 1_000_000, "bh_prev")
    assert final == swiss(b, 4, "bh_prev") == [(rank, p, prev) for rank, p, *_, prev in EXPECTED]
    assert swiss(b, 2, "bh_prev")[0] == (1, "A", [0.0])


# -- item 23: the trimmed average of two games or fewer ----------------------------------------

@pytest.mark.parametrize(("setting", "expected"), [
    # none: X and B both have ≤ 2 games, so criterion 4 has no value and they stay tied (加赛).
    ("none", [("X", 2, 60_000, None, "2 games: trimmed_few_games = none", True),
              ("B", 2, 60_000, None, "1 games: trimmed_few_games = none", True)]),
    # all_games: X 60 s over 2 games = 30 s per game, B 60 s in 1 game: X ranks ahead.
    ("all_games", [("X", 2, 60_000, 30_000.0, "2 games: trimmed_few_games = all_games", False),
                   ("B", 3, 60_000, 60_000.0, "1 games: trimmed_few_games = all_games", False)]),
])
def test_tournament_s3_trimmed_average_of_two_games(setting: str, expected: list[tuple[Any, ...]]) -> None:
    """§3 criterion 4 [PARAM trimmed_few_games]: dropping the longest and the shortest of two games
    or fewer leaves nothing; the setting says whether that is no value or the mean of every game."""
    b = HandBuilt()
    b.tournament(T, "junqi", {"trimmed_few_games": setting})
    board(b, 1, ("X e1 Xp e2", "S"), ("A B C D", "E"))
    board(b, 2, ("X e1 Xp e2", "S"), ("A F C G", "E"))
    # R 100: X, Xp (both rounds), B, D (round 1), F, G (round 2); every opponent and beaten R is 0.
    clock(b, 1, 1, 0, 30_000)
    clock(b, 2, 1, 0, 30_000)  # X: 60 s in two games
    clock(b, 1, 2, 1, 60_000)  # B: 60 s in one game
    clock(b, 1, 1, 2, 20_000)  # Xp 20 s, D 80 s, F 90 s, G 95 s
    clock(b, 1, 2, 3, 80_000)
    clock(b, 2, 2, 1, 90_000)
    clock(b, 2, 2, 3, 95_000)
    rows = b.db().run("ranking", tournament=T)
    got = [(r["player"], r["rank"], r["move_ms"], r["trimmed_ms"], r["trimmed_basis"], r["unresolved"])
           for r in rows if r["player"] in ("X", "B")]
    assert sorted(got, reverse=True) == expected
    tied = ["B", "X"] if setting == "none" else ["X", "B"]  # an unresolved tie moves by player number (§4)
    assert [r["player"] for r in rows[:6]] == ["Xp", *tied, "D", "F", "G"]


# -- item 24: the Swiss pairing order --------------------------------------------------------------

def pair_round(b: HandBuilt, rnd: int) -> list[list[str]]:
    """Returns the pairs the reference generator gives for round `rnd` after the rounds before it."""
    order = [r["player"] for r in b.db().run("pairing_order", tournament=T, through=rnd - 1)]
    met = {frozenset((a, z)) for r, a, z, _, _ in RESULTS if r < rnd}
    return sorted(sorted(p) for p in seating.swiss_pairs(order, met))


def test_checkers_s12_2_pairing_order_points_then_seed() -> None:
    """§12.2 reference generator (points desc, seed asc; the seed's 第十八条(2) sorts by total
    points): it reproduces every pairing of the worked example §12.4, round 3 by backtracking."""
    b = HandBuilt()
    swiss_event(b)
    for n, (rnd, a, z, pa, pz) in enumerate(RESULTS):
        match(b, rnd, n % 3 + 1, a, z, pa, pz)
    for rnd in (2, 3, 4):
        assert pair_round(b, rnd) == sorted(sorted((a, z)) for r, a, z, _, _ in RESULTS if r == rnd), rnd
    # after round 3: A 3, then B, C, D on 1.5 by player number, E 1, F ½
    assert [r["player"] for r in b.db().run("pairing_order", tournament=T, through=3)] == list("ABCDEF")


def test_checkers_s12_2_pairing_order_tiebreak_chain() -> None:
    """§12.2 [PARAM swiss_pairing_order = tiebreak_chain]: the order of the standings' whole chain.
    After round 3: B, C, D on 1.5 are split by BH (C 5.0, D 5.5, B 4.5: D, C, B); E 1 and F ½ follow."""
    b = HandBuilt()
    swiss_event(b, {"swiss_pairing_order": "tiebreak_chain"})
    for n, (rnd, a, z, pa, pz) in enumerate(RESULTS):
        match(b, rnd, n % 3 + 1, a, z, pa, pz)
    assert [r["player"] for r in b.db().run("pairing_order", tournament=T, through=3)] == list("ADCBEF")
    assert seating.pairing_name("tiebreak_chain") == "matchledger-swiss/1 tiebreak_chain"
