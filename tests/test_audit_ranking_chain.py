"""The final ranking of a duplicate Junqi event (tournament.md §3, 附录二 二): ties on R broken at
each level of the chain, worked out by hand in the comments.

Every board here is one Junqi game number played at two or three tables; a participant's board rate
r compares their points with those of the players who sat in the same seat at the other tables
(§2: with two tables r is 100, 50 or 0). Seats 0 and 2 are partners against seats 1 and 3, so the
opponents of a player are the two enemies of each game, never the partner; partners who play every
game together tie on R and criteria 1 and 2 and are told apart only by their move time.
"""

from __future__ import annotations

from typing import Any

from schemas.junqi import JunqiProfile
from tests.audit_rows import HandBuilt, profile_json

T = "cup"
PROFILE = profile_json(JunqiProfile())
RESULTS = {"S": ([0, 2], [5.0, 1.0, 5.0, 1.0]), "E": ([1, 3], [1.0, 5.0, 1.0, 5.0]), "D": ([], [3.0] * 4)}
"""Results of a game: seats 0 and 2 win, seats 1 and 3 win, or a draw (第十条: 5 / 3 / 1)."""


def board(b: HandBuilt, rnd: int, *tables: tuple[str, str]) -> None:
    """Adds round `rnd`'s board at every table: its four players (seats 0–3) and its result."""
    for table, (players, result) in enumerate(tables, start=1):
        winners, points = RESULTS[result]
        b.game(f"{T}/r{rnd}/t{table}", "junqi", PROFILE, "FLAG_CAPTURED", winners, list(zip(players.split(), points)),
               tournament=T, round=rnd, table_no=table, board=f"r{rnd}-b1")


def clock(b: HandBuilt, rnd: int, table: int, seat: int, *ms: int) -> None:
    """Adds the move times (game.move_time) of a seat's moves in a game."""
    stream = f"{T}/r{rnd}/t{table}"
    for i, used in enumerate(ms):
        seq = 100 * (seat + 1) + 2 * i
        b.event(stream, seq, "junqi.moved", seat=seat, ts=seq * 1000)
        b.event(stream, seq + 1, "game.move_time", seat=seat, ts=seq * 1000, ms=used, move_seq=seq)


def ranking(b: HandBuilt, *columns: str) -> list[tuple[Any, ...]]:
    """Returns the `ranking` query's rows in movement order as (player, rank, *columns)."""
    return [(r["player"], r["rank"], *(r[c] for c in columns)) for r in b.db().run("ranking", tournament=T)]


def test_r_decides_first() -> None:
    """§3: rank by R, higher first, whatever the tie-breaks say (here opponents' R runs the other way)."""
    b = HandBuilt()
    board(b, 1, ("A B C D", "S"), ("E F G H", "D"), ("I J K L", "E"))
    # Three tables, N = 3, top 4: in each seat the 5 gets MP 4 (r 100), the 3 MP 2 (50), the 1 MP 0 (0).
    # Seat 0: A 5, E 3, I 1; seat 1: B 1, F 3, J 5; seat 2: C 5, G 3, K 1; seat 3: D 1, H 3, L 5.
    # Opponents: A meets B, D (R 0) → 0; E meets F, H (50) → 50; B meets A, C (100) → 100.
    # Beaten: the winners beat two players of R 0; a draw beats nobody; a loser beats nobody.
    assert sorted(ranking(b, "r_shown", "opp_r", "beaten_r"), key=lambda r: (r[1], r[0])) == [
        ("A", 1, 100.0, 0.0, 0.0), ("C", 1, 100.0, 0.0, 0.0), ("J", 1, 100.0, 0.0, 0.0), ("L", 1, 100.0, 0.0, 0.0),
        ("E", 5, 50.0, 50.0, None), ("F", 5, 50.0, 50.0, None), ("G", 5, 50.0, 50.0, None), ("H", 5, 50.0, 50.0, None),
        ("B", 9, 0.0, 100.0, None), ("D", 9, 0.0, 100.0, None), ("I", 9, 0.0, 100.0, None), ("K", 9, 0.0, 100.0, None),
    ]


def test_equal_r_broken_by_opponents_average_r() -> None:
    """§3 criterion 1: among equal R, the higher average final R of the opponents met ranks first."""
    b = HandBuilt()
    board(b, 1, ("X a1 Xp a2", "S"), ("Y b1 Yp b2", "S"))
    board(b, 2, ("a1 f1 a2 f2", "S"), ("b1 g1 b2 g2", "E"))
    # Round 1: both tables end alike, so every seat compares equal: r 50 for all eight players.
    # Round 2: a1, a2 win (r 100) where b1, b2 lose (r 0); f1, f2 lose (0) where g1, g2 win (100).
    # R: X = Xp = Y = Yp = 50 (one board); a1 = a2 = (50 + 100) / 2 = 75; b1 = b2 = (50 + 0) / 2 = 25;
    #    f1 = f2 = 0; g1 = g2 = 100.
    # Opponents: X, Xp met a1, a2 → 75; Y, Yp met b1, b2 → 25, so X and Xp rank above Y and Yp.
    #    a1 met X, Xp, f1, f2 → (50 + 50 + 0 + 0) / 4 = 25; b1 met Y, Yp, g1, g2 → (50 + 50 + 100 + 100) / 4 = 75;
    #    f1 met a1, a2 → 75; g1 met b1, b2 → 25.
    # Beaten: X beat a1, a2 → 75; Y beat b1, b2 → 25; a1 beat f1, f2 → 0; g1 beat b1, b2 → 25; b1, f1 nobody.
    assert ranking(b, "r_shown", "opp_r", "beaten_r") == [
        ("g1", 1, 100.0, 25.0, 25.0), ("g2", 1, 100.0, 25.0, 25.0),
        ("a1", 3, 75.0, 25.0, 0.0), ("a2", 3, 75.0, 25.0, 0.0),
        ("X", 5, 50.0, 75.0, 75.0), ("Xp", 5, 50.0, 75.0, 75.0),
        ("Y", 7, 50.0, 25.0, 25.0), ("Yp", 7, 50.0, 25.0, 25.0),
        ("b1", 9, 25.0, 75.0, None), ("b2", 9, 25.0, 75.0, None),
        ("f1", 11, 0.0, 75.0, None), ("f2", 11, 0.0, 75.0, None),
    ]


def test_equal_opponents_broken_by_beaten_opponents_average_r() -> None:
    """§3 criterion 2: among equal R and equal opponents' R, the higher average final R of the
    opponents beaten (who scored less in that game) ranks first."""
    b = HandBuilt()
    board(b, 1, ("X p1 Xp p2", "S"), ("Y q1 Yp q2", "E"))
    board(b, 2, ("X q3 Xp q4", "E"), ("Y p3 Yp p4", "S"))
    board(b, 3, ("p1 q3 p2 q4", "S"), ("p3 q1 p4 q2", "E"))
    # Round 1 (seat 0: X 5 vs Y 1): X, Xp 100, Y, Yp 0; p1, p2 0, q1, q2 100.
    # Round 2 (seat 0: X 1 vs Y 5): X, Xp 0, Y, Yp 100; q3, q4 100, p3, p4 0.
    # Round 3 (seat 0: p1 5 vs p3 1): p1, p2 100, p3, p4 0; q3, q4 0, q1, q2 100.
    # R: X = Xp = Y = Yp = (100 + 0) / 2 = 50; p1 = p2 = (0 + 100) / 2 = 50; p3 = p4 = 0;
    #    q1 = q2 = 100; q3 = q4 = (100 + 0) / 2 = 50.
    # Opponents: X met p1, p2, q3, q4 → (50 + 50 + 50 + 50) / 4 = 50;
    #            Y met q1, q2, p3, p4 → (100 + 100 + 0 + 0) / 4 = 50: equal.
    #            p1 met X, Xp, q3, q4 → 50; q3 met X, Xp, p1, p2 → 50; p3 met Y, Yp, q1, q2 → 75;
    #            q1 met Y, Yp, p3, p4 → 25.
    # Beaten: X beat p1, p2 (R 50) → 50, but Y beat p3, p4 (R 0) → 0, so Y and Yp fall behind.
    #         p1 beat q3, q4 → 50; q3 beat X, Xp → 50; q1 beat Y, Yp, p3, p4 → 25; p3 nobody.
    # X, Xp, p1, p2, q3 and q4 stay tied (no move times): rank 3 for all six.
    assert ranking(b, "r_shown", "opp_r", "beaten_r") == [
        ("q1", 1, 100.0, 25.0, 25.0), ("q2", 1, 100.0, 25.0, 25.0),
        ("X", 3, 50.0, 50.0, 50.0), ("Xp", 3, 50.0, 50.0, 50.0), ("p1", 3, 50.0, 50.0, 50.0),
        ("p2", 3, 50.0, 50.0, 50.0), ("q3", 3, 50.0, 50.0, 50.0), ("q4", 3, 50.0, 50.0, 50.0),
        ("Y", 9, 50.0, 50.0, 0.0), ("Yp", 9, 50.0, 50.0, 0.0),
        ("p3", 11, 0.0, 75.0, None), ("p4", 11, 0.0, 75.0, None),
    ]


def test_equal_opponents_broken_by_total_own_move_time() -> None:
    """§3 criterion 3: then the total time of the player's own moves, from the timing events
    (game.move_time), less ranking higher; the partner's moves do not count."""
    b = HandBuilt()
    board(b, 1, ("X e1 Xp e2", "S"), ("A B C D", "E"))
    clock(b, 1, 1, 0, 20_000, 30_000, 10_000)  # X: 60 s
    clock(b, 1, 1, 2, 25_000, 25_000, 15_000)  # Xp, X's partner: 65 s
    clock(b, 1, 2, 1, 70_000)                  # B
    clock(b, 1, 2, 3, 40_000, 40_000)          # D: 80 s
    # R 100: X, Xp (seats 0, 2 won where A, C lost) and B, D (seats 1, 3 won where e1, e2 lost).
    # Opponents and beaten: X, Xp met and beat e1, e2 (R 0); B, D met and beat A, C (R 0): all 0.
    # Move time decides: X 60 s, Xp 65 s, B 70 s, D 80 s. One game each: dropping the longest and
    # the shortest leaves nothing, so criterion 4 has no value (trimmed_few_games = none).
    # The losers (R 0, opponents 100, beat nobody, no move time) stay tied.
    assert ranking(b, "r_shown", "opp_r", "beaten_r", "move_ms", "trimmed_ms", "unresolved") == [
        ("X", 1, 100.0, 0.0, 0.0, 60_000, None, False),
        ("Xp", 2, 100.0, 0.0, 0.0, 65_000, None, False),
        ("B", 3, 100.0, 0.0, 0.0, 70_000, None, False),
        ("D", 4, 100.0, 0.0, 0.0, 80_000, None, False),
        ("A", 5, 0.0, 100.0, None, 0, None, True), ("C", 5, 0.0, 100.0, None, 0, None, True),
        ("e1", 5, 0.0, 100.0, None, 0, None, True), ("e2", 5, 0.0, 100.0, None, 0, None, True),
    ]


def test_equal_total_time_broken_by_trimmed_average_game_time() -> None:
    """§3 criterion 4: then the average own move time per game with the longest and the shortest
    game dropped, less ranking higher."""
    b = HandBuilt()
    for rnd in (1, 2, 3):
        board(b, rnd, ("X e1 Xp e2", "S"), ("A B C D", "E"))
    clock(b, 1, 1, 0, 4_000, 6_000)    # X: games of 10 s, 20 s and 30 s = 60 s
    clock(b, 2, 1, 0, 20_000)
    clock(b, 3, 1, 0, 15_000, 15_000)
    clock(b, 1, 1, 2, 5_000)           # Xp: games of 5 s, 25 s and 30 s = 60 s
    clock(b, 2, 1, 2, 12_000, 13_000)
    clock(b, 3, 1, 2, 30_000)
    for rnd in (1, 2, 3):
        clock(b, rnd, 2, 1, 30_000)    # B: 90 s
        clock(b, rnd, 2, 3, 40_000 if rnd == 1 else 30_000)  # D: 100 s
    # R 100 for X, Xp, B, D in every round; opponents and beaten all R 0, as in the test above.
    # Total: X 60 s = Xp 60 s < B 90 s < D 100 s.
    # Trimmed: X drops 30 s and 10 s → 20 s; Xp drops 30 s and 5 s → 25 s: X ranks first.
    assert ranking(b, "move_ms", "trimmed_ms", "games", "unresolved")[:4] == [
        ("X", 1, 60_000, 20_000.0, 3, False),
        ("Xp", 2, 60_000, 25_000.0, 3, False),
        ("B", 3, 90_000, 30_000.0, 3, False),
        ("D", 4, 100_000, 30_000.0, 3, False),
    ]


def test_tie_left_after_every_criterion_is_unresolved() -> None:
    """§3 criterion 5: players equal on R and on criteria 1–4 are reported as an unresolved tie
    (加赛) with their names; the movement then falls back on player number (§4)."""
    b = HandBuilt()
    board(b, 1, ("X e1 Xp e2", "S"), ("A B C D", "E"))
    clock(b, 1, 1, 0, 10_000, 20_000)  # X: 30 s
    clock(b, 1, 1, 2, 30_000)          # Xp: 30 s in one move, the same total and per-game time
    clock(b, 1, 1, 1, 10_000)          # e1
    clock(b, 1, 1, 3, 20_000)          # e2
    clock(b, 1, 2, 0, 15_000)          # A
    clock(b, 1, 2, 1, 40_000)          # B
    clock(b, 1, 2, 2, 25_000)          # C
    clock(b, 1, 2, 3, 50_000)          # D
    # X and Xp: R 100, opponents e1, e2 (R 0), beaten e1, e2, 30 s in total and per game: tied.
    # B, D (R 100) are separated by time (40 s, 50 s); e1, e2, A, C (R 0) by 10, 20, 15, 25 s.
    rows = b.db().run("ranking", tournament=T)
    assert [r["player"] for r in rows if r["unresolved"]] == ["X", "Xp"]
    assert [(r["player"], r["rank"], r["movement_rank"]) for r in rows] == [
        ("X", 1, 1), ("Xp", 1, 2), ("B", 3, 3), ("D", 4, 4), ("e1", 5, 5), ("A", 6, 6), ("e2", 7, 7), ("C", 8, 8),
    ]
