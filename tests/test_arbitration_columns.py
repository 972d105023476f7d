"""What a withdrawal and a void game do to each column of the standings (issue 30 points 1–2):
checkers.md §12.1, §12.3, checkers 第十二条, tournament.md §3, and TournamentRules.void_game, on
hand-built projections of the worked example of checkers.md §12.4."""

from __future__ import annotations

from typing import Any

import pytest

from tests.audit_rows import HandBuilt
from tests.test_audit_swiss import EXPECTED, RESULTS
from tests.test_audit_tournament_rules import PAOHUZI, T, match, swiss_event


def _example(b: HandBuilt, skip: tuple[int, str] | None = None) -> None:
    """Adds the worked example's matches; the match of `skip` (round, a player) is seated, not played."""
    for n, (rnd, a, z, pa, pz) in enumerate(RESULTS):
        if skip is not None and rnd == skip[0] and skip[1] in (a, z):
            for seat, p in enumerate((a, z)):
                b.rows["seatings"].append({"tournament": T, "round": rnd, "table_no": n % 3 + 1, "group_no": None, "seat": seat,
                                           "player": p})
            continue
        match(b, rnd, n % 3 + 1, a, z, pa, pz)


def test_checkers_12_3_a_withdrawal_forfeit_win_counts_as_a_win() -> None:
    """Checkers 第十二条 (未赛场次均判对手胜) and §12.3 "wins: number of games won, including forfeit
    wins": D withdraws before round 4, so F's round-4 match (won 1–0 over the board in §12.4) is awarded;
    every column, wins and win rate included, is what the board gave, and each has one forfeit."""
    b = HandBuilt()
    swiss_event(b)
    _example(b, skip=(4, "D"))
    b.rows["rulings"].append({"stream": T, "seq": 99, "ruling": "withdrawal", "player": "D", "from_round": 4, "signature": "valid"})
    rows = {r["player"]: r for r in b.db().run("swiss_standings", tournament=T, through=4)}
    got = [(r["rank"], r["player"], r["big"], r["ps"], r["bh"], r["wins"], r["bh_prev"])
           for r in sorted(rows.values(), key=lambda r: r["movement_rank"])]
    assert got == EXPECTED
    assert (rows["F"]["wins"], rows["F"]["games"], rows["F"]["win_rate"], rows["F"]["forfeits"]) == (1, 4, 0.25, 1)
    assert (rows["D"]["wins"], rows["D"]["games"], rows["D"]["forfeits"]) == (1, 4, 1)


def _reference(void: tuple[int, str], meets: bool) -> dict[str, dict[str, Any]]:
    """Computes 大分, PS, BH and BH after each round from §12.3's plain definitions, the match of
    `void` scoring nothing for either player and counting as met when `meets`."""
    players = "ABCDEF"
    per_round: dict[str, list[float]] = {p: [0.0] * 4 for p in players}
    opponents: dict[str, list[tuple[int, str]]] = {p: [] for p in players}
    for rnd, a, z, pa, pz in RESULTS:
        voided = rnd == void[0] and void[1] in (a, z)
        if not voided:
            per_round[a][rnd - 1] = 1.0 if pa > pz else 0.5 if pa == pz else 0.0
            per_round[z][rnd - 1] = 1.0 - per_round[a][rnd - 1]
        if not voided or meets:
            opponents[a].append((rnd, z))
            opponents[z].append((rnd, a))

    def after(p: str, k: int) -> float:
        return sum(per_round[p][:k])

    return {p: {"big": after(p, 4), "ps": sum(after(p, k) for k in range(1, 5)),
                "bh": sum(after(o, 4) for _, o in opponents[p]),
                "bh_prev": [sum(after(o, k) for r, o in opponents[p] if r <= k) for k in (3, 2, 1)]} for p in players}


@pytest.mark.parametrize("setting", ["met", "unplayed"])
def test_checkers_12_3_a_void_match_keeps_the_round_in_ps_and_bh(setting: str) -> None:
    """§12.3 (PS: the running total after each round; BH_k: opponents' totals after round k) with a
    void_game ruling on round 3's E–D: both score 0 for the round, their running totals carry over
    (D: 0, ½, ½, ½, PS 1.5), nobody's BH after round 3 reads them as 0, and whether they met
    follows TournamentRules.void_game."""
    b = HandBuilt()
    swiss_event(b, {"void_game": setting})
    _example(b)
    stream = f"{T}/r3/t3"  # E–D, the sixth match of RESULTS
    game = next(g for g in b.rows["games"] if g["stream"] == stream)
    game.update(termination="VOID", winners=[])
    for seat in (s for s in b.rows["seats"] if s["stream"] == stream):
        seat["points"] = None
    want = _reference((3, "D"), setting == "met")
    rows = {r["player"]: r for r in b.db().run("swiss_standings", tournament=T, through=4)}
    assert {p: {c: rows[p][c] for c in ("big", "ps", "bh", "bh_prev")} for p in rows} == want
    assert rows["D"]["ps"] == 1.5 and rows["E"]["ps"] == 3.5
    assert all(r["bh_prev"] == sorted(r["bh_prev"], reverse=True) for r in rows.values()), "BH after k never falls"
    after_3 = {r["player"]: r["bh"] for r in b.db().run("swiss_standings", tournament=T, through=3)}
    assert {p: rows[p]["bh_prev"][0] for p in rows} == after_3, "the final table's BH after round 3 is swiss(t, 3)'s BH"
    assert rows["D"]["direct_encounter"] is None or setting == "met"


@pytest.mark.parametrize(("setting", "opp_r"), [("met", 66.666667), ("unplayed", 100.0)])
def test_tournament_3_a_void_game_meets_as_the_setting_says_in_duplicate(setting: str, opp_r: float) -> None:
    """Tournament.md §3 tie-break 1 with TournamentRules.void_game: P met Q and W in round 1 and Q and
    Z in a round-2 game a ruling voided. R: Q 100, W 100, Z 0 (round 2's board, played at one table
    once the other is void, rates nobody). Under `met` P's opponents are Q, W, Z (66.67), under
    `unplayed` Q and W (100), the same reading as Swiss BH."""
    b = HandBuilt()
    b.tournament(T, "paohuzi", {"void_game": setting})
    for rnd, tables in ((1, (("X Y Z", (10, -5, -5)), ("P Q W", (0, 0, 0)))), (2, (("X Y W", (5, -5, 0)), ("P Q Z", (5, -5, 0))))):
        for table, (players, points) in enumerate(tables, start=1):
            b.game(f"{T}/r{rnd}/t{table}", "paohuzi", PAOHUZI, "HU", [0], list(zip(players.split(), map(float, points))),
                   tournament=T, round=rnd, table_no=table, board=f"r{rnd}-b1")
    voided = f"{T}/r2/t2"
    next(g for g in b.rows["games"] if g["stream"] == voided).update(termination="VOID", winners=[])
    for seat in (s for s in b.rows["seats"] if s["stream"] == voided):
        seat["points"] = None
    rows = {r["player"]: r for r in b.db().run("ranking", tournament=T)}
    assert (rows["P"]["r_shown"], rows["P"]["opp_r"], rows["P"]["void_games"]) == (0.0, opp_r, 1)
