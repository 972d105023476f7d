"""The SQL checks of `audit/query/sql/`, each on hand-built projections: consistent data gives no finding,
deliberately broken data gives the check's code at the right place (tests are data, STYLE 9).

Every case names the rule it rests on: junqi.md §8.2 (50 steps without contact), §8.3 (total step
limit), §7.3/§7.5 (timeouts); checkers.md §6 (第四条 timeouts), §9 (第五条 leave camp);
tournament.md §1 (game points, claims) and §3 (move time against timestamps); paohuzi.md §10.
"""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from schemas.checkers import CheckersProfile, TimeoutAllowance
from schemas.junqi import GamePoints, JunqiProfile
from schemas.paohuzi import PaohuziProfile
from tests.audit_rows import Finding, HandBuilt, profile_json

G = "r1-t1-g1"
JUNQI = JunqiProfile()
QUIET5 = replace(JUNQI, quiet_limit=5)
CHECKERS = CheckersProfile()
PAOHUZI = PaohuziProfile()
JUNQI_PLAYERS = ("S", "W", "N", "E")


def _junqi_result(profile: JunqiProfile, termination: str | None) -> tuple[list[int] | None, list[float | None]]:
    """Returns winners and points of a hand-built Junqi game: draws for the step rules, else
    alliance 1–3 wins (第十条)."""
    if termination is None:
        return None, [None] * 4
    if termination in ("QUIET_LIMIT", "MAX_STEPS", "DRAW_AGREED"):
        return [], [float(profile.points.draw)] * 4
    return [1, 3], [float(profile.points.loss), float(profile.points.win)] * 2


def junqi_game(b: HandBuilt, pattern: str, termination: str | None, profile: JunqiProfile = QUIET5,
               quiet: list[int] | None = None, stream: str = G) -> list[int]:
    """Adds a Junqi game played as `pattern`: `.` a move without contact, `x` a move with contact,
    `t` a timed-out turn. Each token takes two seqs from 5 (a move is followed by its move time).
    The engine's quiet counter is that of junqi.md §8.2 (a timeout counts only under
    `timeout_counts_as_step`, §7.5) unless `quiet` gives it for every token. Returns the seq of
    every token."""
    winners, points = _junqi_result(profile, termination)
    b.game(stream, "junqi", profile_json(profile), termination, winners, list(zip(JUNQI_PLAYERS, points)))
    seqs, step, counter = [], 0, 0
    for i, token in enumerate(pattern):
        seq, seat = 5 + 2 * i, i % 4
        if token != "t" or profile.timeout_counts_as_step:
            step, counter = step + 1, 0 if token == "x" else counter + 1
        q = quiet[i] if quiet else counter
        if token == "t":
            b.step(stream, seq, "game.timed_out", seat=seat, step=step, quiet=q)
        else:
            b.step(stream, seq, "junqi.moved", seat=seat, action=f"m{i}", contact=token == "x", step=step, quiet=q)
            b.step(stream, seq + 1, "game.move_time", seat=seat, ms=1000, step=step, quiet=q)
        seqs.append(seq)
    return seqs


def _expect(seqs: list[int], expected: list[tuple[str, int | None]]) -> list[tuple[str, int | None]]:
    """Turns (code, token index) into (code, seq)."""
    return [(code, None if token is None else seqs[token]) for code, token in expected]


def _codes(found: list[Finding]) -> list[tuple[str, int | None]]:
    return [(code, seq) for _, seq, code, _ in found]


# -- junqi_quiet.sql (audit.Q01, Q02): junqi.md §8.2, 50 steps without contact ------------------

QUIET_GT = replace(QUIET5, quiet_trigger=">")
QUIET_CASES = [
    pytest.param(QUIET5, ".....", "QUIET_LIMIT", [], id="draw-exactly-at-quiet_limit"),
    pytest.param(QUIET5, "....", "QUIET_LIMIT", [("audit.Q02", None)], id="engine-draws-one-step-before-the-limit"),
    pytest.param(QUIET5, "......", "QUIET_LIMIT", [("audit.Q02", 4)], id="engine-draws-one-step-after-the-limit"),
    pytest.param(QUIET5, "......", "RESIGNED", [("audit.Q02", 4)], id="game-goes-on-past-the-limit"),
    pytest.param(QUIET5, "....", "RESIGNED", [], id="four-quiet-steps-are-no-draw"),
    pytest.param(QUIET5, "....x.....", "QUIET_LIMIT", [], id="contact-resets-the-count"),
    pytest.param(QUIET5, "....x....", "QUIET_LIMIT", [("audit.Q02", None)], id="count-restarts-after-contact"),
    pytest.param(QUIET5, "x....x....x....", "RESIGNED", [], id="every-contact-resets"),
    pytest.param(QUIET5, "..t...", "QUIET_LIMIT", [], id="a-timeout-is-not-a-step"),
    pytest.param(QUIET_GT, "......", "QUIET_LIMIT", [], id="trigger-gt-draws-one-after-the-limit"),
    pytest.param(QUIET_GT, ".....", "QUIET_LIMIT", [("audit.Q02", None)], id="trigger-gt-no-draw-at-the-limit"),
    pytest.param(JUNQI, "x" + "." * 50, "QUIET_LIMIT", [], id="default-draw-at-the-50th-quiet-step"),
    pytest.param(JUNQI, "x" + "." * 49, "QUIET_LIMIT", [("audit.Q02", None)], id="default-no-draw-at-the-49th"),
]


@pytest.mark.parametrize(("profile", "pattern", "termination", "expected"), QUIET_CASES)
def test_junqi_quiet_limit(profile: JunqiProfile, pattern: str, termination: str,
                           expected: list[tuple[str, int | None]]) -> None:
    """junqi.md §8.2: the draw comes when the no-contact count reaches quiet_limit (`>=`; one step
    later under `>`), never a step before; any contact resets the count."""
    b = HandBuilt()
    seqs = junqi_game(b, pattern, termination, profile)
    assert _codes(b.run("junqi_quiet")) == _expect(seqs, expected)


def test_junqi_quiet_messages() -> None:
    """junqi.md §8.2: the finding says where the count reached the limit and how the game ended,
    or that SQL never reaches the limit the engine drew at."""
    b = HandBuilt()
    seqs = junqi_game(b, "......", "RESIGNED", stream="long")
    junqi_game(b, "....", "QUIET_LIMIT", stream="short")
    assert b.run("junqi_quiet") == [
        ("long", seqs[4], "audit.Q02", f"无接触计数在第 {seqs[4]} 号事件达到上限，但对局已结束（认输） "
                                        f"the no-contact count reaches the limit at seq {seqs[4]}, but the game ended (resigned)"),
        ("short", None, "audit.Q02", "引擎判五十步无接触和棋，但 SQL 的无接触计数从未达到上限 "
                                         "the engine ended the game (draw: no contact in 50 steps), SQL never reaches the limit"),
    ]


def test_junqi_quiet_engine_counter_that_ignores_contact() -> None:
    """junqi.md §8.2: an engine counter that is not reset by a contact move disagrees with the
    window-function count at that move and every move after it (audit.Q01)."""
    b = HandBuilt()
    seqs = junqi_game(b, "..x.", "RESIGNED", quiet=[1, 2, 3, 4])
    assert b.run("junqi_quiet") == [
        (G, seqs[2], "audit.Q01", "无接触计数不一致：此步后 SQL 计 0 步，引擎计 3 步 SQL counts 0 quiet steps after this move, the engine 3"),
        (G, seqs[3], "audit.Q01", "无接触计数不一致：此步后 SQL 计 1 步，引擎计 4 步 SQL counts 1 quiet steps after this move, the engine 4"),
    ]


def test_junqi_quiet_ignores_moves_of_other_games() -> None:
    """junqi.md §8.2: each game counts its own moves; a quiet game beside a busy one is judged alone."""
    b = HandBuilt()
    junqi_game(b, ".....", "QUIET_LIMIT", stream="a")
    junqi_game(b, "x.x.x", "RESIGNED", stream="b")
    assert b.run("junqi_quiet") == []


def test_junqi_quiet_counts_timeouts_when_the_profile_makes_them_steps() -> None:
    """junqi.md §7.5, §8.2: with timeout_counts_as_step a timed-out turn is a quiet step, so two
    moves, a timeout and two moves reach quiet_limit 5."""
    b = HandBuilt()
    junqi_game(b, "..t..", "QUIET_LIMIT", replace(QUIET5, timeout_counts_as_step=True))
    assert b.run("junqi_quiet") == []


# -- junqi_step_limit.sql (audit.S01): junqi.md §8.3, total step limit -------------------------

STEPS5 = replace(JUNQI, max_steps=5)
STEP_CASES = [
    pytest.param(STEPS5, ".x...", "MAX_STEPS", [], id="limit-reached-exactly"),
    pytest.param(STEPS5, ".x..", "MAX_STEPS", [("audit.S01", 3)], id="engine-stops-one-step-short"),
    pytest.param(STEPS5, ".x....", "RESIGNED", [("audit.S01", 5)], id="game-runs-past-the-limit"),
    pytest.param(STEPS5, ".x..", "RESIGNED", [], id="game-ends-otherwise-before-the-limit"),
    pytest.param(STEPS5, ".xt..", "MAX_STEPS", [("audit.S01", 4)], id="a-timeout-is-not-a-step"),
    pytest.param(JUNQI, "x" * 9, "RESIGNED", [], id="no-limit-without-max_steps"),
]


@pytest.mark.parametrize(("profile", "pattern", "termination", "expected"), STEP_CASES)
def test_junqi_step_limit(profile: JunqiProfile, pattern: str, termination: str,
                          expected: list[tuple[str, int | None]]) -> None:
    """junqi.md §8.3: the game is drawn MAX_STEPS at exactly max_steps moves (timeouts are no steps
    by default, §7.5), neither before nor after."""
    b = HandBuilt()
    seqs = junqi_game(b, pattern, termination, profile)
    assert _codes(b.run("junqi_step_limit")) == _expect(seqs, expected)


def test_junqi_step_limit_messages() -> None:
    """junqi.md §8.3: the finding names the steps counted, the limit and the termination."""
    b = HandBuilt()
    seqs = junqi_game(b, ".x....", "RESIGNED", STEPS5, stream="past")
    short = junqi_game(b, ".x..", "MAX_STEPS", STEPS5, stream="short")
    on = junqi_game(b, ".x....", None, STEPS5, stream="still-on")  # the engine never ended it: no termination, no NULL message
    assert b.run("junqi_step_limit") == [
        ("past", seqs[-1], "audit.S01", "共走 6 步，规定步数（max_steps）为 5；对局已结束（认输） 6 steps played with max_steps 5; the game ended "
                                        "(resigned)"),
        ("short", short[-1], "audit.S01", "共走 4 步，规定步数（max_steps）为 5；对局已结束（达到规定步数和棋） "
                                              "4 steps played with max_steps 5; the game ended (draw: step limit reached)"),
        ("still-on", on[-1], "audit.S01", "共走 6 步，规定步数（max_steps）为 5；对局尚未结束 6 steps played with max_steps 5; the game has not "
                                          "ended"),
    ]


def test_junqi_step_limit_counts_timeouts_when_the_profile_makes_them_steps() -> None:
    """junqi.md §7.5, §8.3: with timeout_counts_as_step four moves and a timeout are five steps."""
    b = HandBuilt()
    junqi_game(b, ".xt..", "MAX_STEPS", replace(STEPS5, timeout_counts_as_step=True))
    assert b.run("junqi_step_limit") == []


# -- leave_camp.sql (audit.L01): checkers.md §9, 第五条 leave-camp deadlines -----------------------

def checkers_game(b: HandBuilt, until: tuple[int, int], termination: str, winners: list[int],
                  out: dict[tuple[int, int], int] | None = None, timed_out: frozenset[tuple[int, int]] = frozenset(),
                  profile: CheckersProfile = CHECKERS, stream: str = G) -> dict[tuple[int, int], int]:
    """Adds a checkers game in which seat 0 moves first and both seats play turns until (seat, turn):
    after its own turn k a seat has min(k, 10) pieces out of its home camp unless `out` says
    otherwise; turns in `timed_out` are timeouts (they count as turns, checkers.md §9). Returns the
    seq of every (seat, turn)."""
    points = {(): [0.5, 0.5], (0,): [1.0, 0.0], (1,): [0.0, 1.0]}[tuple(winners)]
    b.game(stream, "checkers", profile_json(profile), termination, winners, [("N", points[0]), ("S", points[1])])
    out = out or {}
    seqs = {}
    last = 2 * (until[1] - 1) + until[0] + 1
    for ply in range(1, last + 1):
        seat, turn = (ply - 1) % 2, (ply + 1) // 2
        kind, action = ("game.timed_out", None) if (seat, turn) in timed_out else ("checkers.moved", f"{ply}>{ply + 1}")
        b.step(stream, ply, kind, seat, action, ply=ply, turn=turn, out=out.get((seat, turn), min(turn, 10)))
        seqs[(seat, turn)] = ply
    return seqs


LEAVE_CAMP_CASES = [
    pytest.param({}, frozenset(), (1, 30), "ALL_HOME", [0], [], id="every-deadline-met"),
    pytest.param({(0, 20): 5, (1, 25): 8, (0, 30): 10}, frozenset(), (1, 30), "ALL_HOME", [0], [],
                 id="exactly-the-required-pieces-out"),
    pytest.param({(1, 20): 4}, frozenset(), (1, 20), "LEAVE_CAMP", [0], [], id="miss-at-turn-20-loses-there"),
    pytest.param({(0, 30): 9}, frozenset(), (0, 30), "LEAVE_CAMP", [1], [], id="miss-at-turn-30-loses-there"),
    pytest.param({(1, 20): 4}, frozenset({(1, 20)}), (1, 20), "LEAVE_CAMP", [0], [], id="a-timed-out-turn-counts"),
    pytest.param({(0, 32): 9}, frozenset(), (1, 32), "ALL_HOME", [1], [], id="no-check-between-or-after-deadlines"),
    pytest.param({(1, 25): 7}, frozenset(), (1, 30), "ALL_HOME", [0], [("audit.L01", (1, 25))],
                 id="engine-lets-a-miss-pass"),
    pytest.param({(0, 20): 4, (1, 25): 7}, frozenset(), (1, 30), "ALL_HOME", [0], [("audit.L01", (0, 20))],
                 id="the-first-miss-is-reported"),
    pytest.param({}, frozenset(), (1, 30), "LEAVE_CAMP", [0], [("audit.L01", None)], id="leave-camp-without-a-miss"),
]


@pytest.mark.parametrize(("out", "timed_out", "until", "termination", "winners", "expected"), LEAVE_CAMP_CASES)
def test_leave_camp(out: dict[tuple[int, int], int], timed_out: frozenset[tuple[int, int]], until: tuple[int, int],
                    termination: str, winners: list[int], expected: list[tuple[str, tuple[int, int] | None]]) -> None:
    """checkers.md §9 (第五条): after its own turns 20, 25 and 30 a seat needs 5, 8 and 10 pieces out
    of its home camp (turns count timeouts); the first seat to miss loses LEAVE_CAMP at that ply."""
    b = HandBuilt()
    seqs = checkers_game(b, until, termination, winners, out, timed_out)
    assert _codes(b.run("leave_camp")) == [(code, None if at is None else seqs[at]) for code, at in expected]


def test_leave_camp_messages() -> None:
    """checkers.md §9: the finding names the seat, its pieces out, the turn and the number due."""
    b = HandBuilt()
    seqs = checkers_game(b, (1, 30), "ALL_HOME", [0], {(1, 25): 7}, stream="missed")
    checkers_game(b, (1, 30), "LEAVE_CAMP", [0], stream="unfounded")
    assert b.run("leave_camp") == [
        ("missed", seqs[(1, 25)], "audit.L01",
         "座位1未按期出营（第 25 回合后出营 7 子，应出 8 子），但对局已结束（全部进营） "
         "seat 1 misses a leave-camp deadline (7 out after turn 25, 8 due), but the game ended (all pieces home)"),
        ("unfounded", None, "audit.L01", "对局以未按时出营判负结束，但每个座位都按期出营 "
                                              "the game ended (lost: did not leave camp in time), but every seat met every deadline"),
    ]


def test_leave_camp_loser_is_the_seat_that_missed() -> None:
    """checkers.md §9: seat 1 misses its turn-20 deadline, so seat 1 must be the loser, not seat 0."""
    b = HandBuilt()
    seqs = checkers_game(b, (1, 20), "LEAVE_CAMP", [1], {(1, 20): 4})
    assert _codes(b.run("leave_camp")) == [("audit.L01", seqs[(1, 20)])]


def test_leave_camp_end_of_round_profile_is_not_misreported() -> None:
    """checkers.md §9 (end_of_round): seat 1 has 4 out after its turn 20, the round closes, seat 0 wins."""
    b = HandBuilt()
    checkers_game(b, (1, 20), "LEAVE_CAMP", [0], {(1, 20): 4}, profile=replace(CHECKERS, leave_camp_check_time="end_of_round"))
    assert b.run("leave_camp") == []


def test_leave_camp_moves_only_counter() -> None:
    """checkers.md §9 (moves_only): seat 1 timed out once, so its 20th move is its turn 21; it has
    4 out after turn 20 (its 19th move) and 5 after its 20th move: no miss."""
    b = HandBuilt()
    checkers_game(b, (1, 30), "ALL_HOME", [0], {(1, 20): 4}, frozenset({(1, 10)}),
                  profile=replace(CHECKERS, turn_counter="moves_only"))
    assert b.run("leave_camp") == []


def test_leave_camp_persistent_after_deadline() -> None:
    """checkers.md §9 (persistent_after_deadline): seat 0 has 9 out after turn 32 and loses there."""
    b = HandBuilt()
    checkers_game(b, (0, 32), "LEAVE_CAMP", [1], {(0, 32): 9}, profile=replace(CHECKERS, persistent_after_deadline=True))
    assert b.run("leave_camp") == []


# -- timeouts.sql (audit.O01): checkers.md §6 (第四条), junqi.md §7.3 ------------------------------

def timeouts_game(b: HandBuilt, game: str, profile: str, per_seat: list[int], termination: str, winners: list[int],
                  stream: str = G) -> None:
    """Adds a game whose seats timed out `per_seat` times (game.timed_out events)."""
    players = ("N", "S") if game == "checkers" else JUNQI_PLAYERS
    b.game(stream, game, profile, termination, winners, [(p, None) for p in players[: len(per_seat)]])
    seq = 1
    for seat, count in enumerate(per_seat):
        for _ in range(count):
            b.event(stream, seq, "game.timed_out", seat=seat, ts=seq * 20_000)
            seq += 1


CHECKERS_FINAL = profile_json(replace(CHECKERS, stage="final"))
CHECKERS_QF = profile_json(replace(CHECKERS, stage="qf"))
TIMEOUT_CASES = [
    pytest.param("checkers", profile_json(CHECKERS), [4, 0], "ALL_HOME", [1], False, id="swiss-4-allowed"),
    pytest.param("checkers", profile_json(CHECKERS), [5, 2], "TIMEOUTS", [1], False, id="swiss-5th-loses"),
    pytest.param("checkers", profile_json(CHECKERS), [5, 0], "ALL_HOME", [1], True, id="swiss-game-goes-on-after-the-5th"),
    pytest.param("checkers", profile_json(CHECKERS), [4, 4], "TIMEOUTS", [1], True, id="swiss-timeouts-loss-within-allowance"),
    pytest.param("checkers", CHECKERS_QF, [6, 0], "ALL_HOME", [0], False, id="qf-6-allowed"),
    pytest.param("checkers", CHECKERS_QF, [0, 7], "TIMEOUTS", [0], False, id="qf-7th-loses"),
    pytest.param("checkers", CHECKERS_FINAL, [8, 8], "MARGIN_DRAW", [], False, id="final-8-allowed"),
    pytest.param("checkers", CHECKERS_FINAL, [7, 9], "ALL_HOME", [1], True, id="final-game-goes-on-after-the-9th"),
    pytest.param("checkers", profile_json(replace(CHECKERS, timeouts_allowed=TimeoutAllowance(swiss=2))), [0, 3],
                 "TIMEOUTS", [0], False, id="allowance-from-the-profile"),
    pytest.param("junqi", profile_json(JUNQI), [9, 0, 7, 0], "FLAG_CAPTURED", [1, 3], False, id="junqi-no-max_timeouts"),
    pytest.param("junqi", profile_json(replace(JUNQI, max_timeouts=3)), [3, 1, 0, 2], "FLAG_CAPTURED", [1, 3], False,
                 id="junqi-eliminated-seat-partner-plays-on"),
    pytest.param("junqi", profile_json(replace(JUNQI, max_timeouts=3)), [0, 1, 0, 0], "TIMEOUTS", [0, 2], True,
                 id="junqi-timeouts-end-without-any-seat-at-the-limit"),
]


@pytest.mark.parametrize(("game", "profile", "per_seat", "termination", "winners", "flagged"), TIMEOUT_CASES)
def test_timeouts(game: str, profile: str, per_seat: list[int], termination: str, winners: list[int], flagged: bool) -> None:
    """checkers.md §6 (第四条): 4, 6 or 8 timeouts allowed per player per game by stage, the next
    one loses TIMEOUTS; junqi.md §7.3: max_timeouts, none by default."""
    b = HandBuilt()
    timeouts_game(b, game, profile, per_seat, termination, winners)
    assert _codes(b.run("timeouts")) == ([("audit.O01", None)] if flagged else [])


def test_timeouts_message() -> None:
    """checkers.md §6: the finding tallies each player's timeouts against the allowance."""
    b = HandBuilt()
    timeouts_game(b, "checkers", profile_json(CHECKERS), [5, 1], "ALL_HOME", [1])
    assert b.run("timeouts") == [(G, None, "audit.O01", "超时次数与终局不符：超时（次数/允许）座位0 N 5/4、座位1 S 1/4；对局已结束（全部进营） "
                                                  "timeouts (count/allowed) seat 0 N 5/4, seat 1 S 1/4; the game ended (all pieces home)")]


def test_timeouts_junqi_alliance_out_at_max_timeouts() -> None:
    """junqi.md §7.3, §8.1: with max_timeouts 3 seats 0 and 2 are each eliminated at their 3rd
    timeout, so their alliance loses TIMEOUTS."""
    b = HandBuilt()
    timeouts_game(b, "junqi", profile_json(replace(JUNQI, max_timeouts=3)), [3, 0, 3, 1], "TIMEOUTS", [1, 3])
    assert b.run("timeouts") == []


# -- move_time_gaps.sql (audit.T01), move_time_totals.sql (audit.T02): tournament.md §3 ----------

def timed_move(b: HandBuilt, claimed: int | None, gap: int = 3000, stream: str = G, offer_at: int | None = None,
               tournament: str | None = None) -> None:
    """Adds a game whose seat 0 moves `gap` ms after the game starts and claims `claimed` ms for
    it; `offer_at` puts a draw offer and its answer that many ms into the turn."""
    b.game(stream, "junqi", profile_json(JUNQI), None, None, [(p, None) for p in JUNQI_PLAYERS], tournament=tournament)
    b.event(stream, 0, "game.started", ts=100_000)
    seq = 1
    if offer_at is not None:
        b.event(stream, 1, "game.draw_offered", seat=1, ts=100_000 + offer_at)
        b.event(stream, 2, "game.draw_answered", seat=0, ts=100_000 + offer_at + 100, accept=False)
        seq = 3
    b.event(stream, seq, "junqi.moved", seat=0, ts=100_000 + gap, **{"from": "S51", "to": "S41"})
    if claimed is not None:
        b.event(stream, seq + 1, "game.move_time", seat=0, ts=100_000 + gap, ms=claimed, move_seq=seq)


GAP_CASES = [
    pytest.param(None, 3000, False, id="claim-equals-gap"),
    pytest.param(None, 4000, False, id="exactly-1000-over"),
    pytest.param(None, 2000, False, id="exactly-1000-under"),
    pytest.param(None, 4001, True, id="1001-over"),
    pytest.param(None, 1999, True, id="1001-under"),
    pytest.param(2000, 5000, False, id="tournament-tolerance-2000-exactly-over"),
    pytest.param(2000, 1000, False, id="tournament-tolerance-2000-exactly-under"),
    pytest.param(2000, 5001, True, id="tournament-tolerance-2000-exceeded"),
    pytest.param(0, 3000, False, id="tolerance-0-exact"),
    pytest.param(0, 3001, True, id="tolerance-0-one-ms-off"),
]


@pytest.mark.parametrize(("tolerance", "claimed", "flagged"), GAP_CASES)
def test_move_time_against_timestamp_gap(tolerance: int | None, claimed: int, flagged: bool) -> None:
    """tournament.md §3: a claimed move time may differ from the timestamp gap before the move by
    at most move_time_tolerance_ms (default 1,000; a tournament's rules may set it)."""
    b = HandBuilt()
    tournament = None
    if tolerance is not None:
        tournament = "T"
        b.tournament("T", "junqi", {"move_time_tolerance_ms": tolerance})
    timed_move(b, claimed, tournament=tournament)
    assert _codes(b.run("move_time_gaps")) == ([("audit.T01", 2)] if flagged else [])


def test_move_time_gap_message() -> None:
    """tournament.md §3: the finding names the seat, the claim, the move and the gap."""
    b = HandBuilt()
    timed_move(b, 4001)
    assert b.run("move_time_gaps") == [
        (G, 2, "audit.T01", "座位0申报第 1 号事件那一手用时 4001 毫秒，时间戳为 3000 毫秒 "
                             "seat 0 claims 4001 ms for the move at seq 1, the timestamps give 3000 ms")]


def test_move_time_gap_draw_offer_does_not_restart_the_clock() -> None:
    """tournament.md §3: a draw offer and its answer happen while the mover's clock runs, so the gap
    runs from the start of the turn, not from the offer."""
    b = HandBuilt()
    timed_move(b, 3000, stream="from-turn-start", offer_at=1500)
    timed_move(b, 1400, stream="from-offer", offer_at=1500)
    assert [f[:3] for f in b.run("move_time_gaps")] == [("from-offer", 4, "audit.T01")]


def test_move_time_claim_without_its_move() -> None:
    """tournament.md §3: a move time that names no logged move cannot be checked and is a finding."""
    b = HandBuilt()
    timed_move(b, None)
    b.event(G, 2, "game.move_time", seat=0, ts=103_000, ms=3000, move_seq=7)
    b.event(G, 3, "game.move_time", seat=None, ts=103_000, ms=900)
    assert b.run("move_time_gaps") == [
        (G, 2, "audit.T01", "座位0申报第 7 号事件那一手用时 3000 毫秒，但本流没有该事件：无从核对 "
                             "seat 0 claims 3000 ms for the move at seq 7, which is not in the stream: nothing to check it against"),
        (G, 3, "audit.T01", "未指明座位者申报用时 900 毫秒，但未指明哪一手：无从核对 "
                             "no seat claims 900 ms but names no move: nothing to check it against")]


def clocked_game(b: HandBuilt, claims: list[int], engine: list[int] | None, stream: str = G) -> None:
    """Adds a game in which seat 0 makes one move per claim (move time events, 2 s apart in the
    log) and the engine's clock keeps the running totals `engine` (None: no engine clock)."""
    b.game(stream, "junqi", profile_json(JUNQI), None, None, [(p, None) for p in JUNQI_PLAYERS])
    ts = 100_000
    b.event(stream, 0, "game.started", ts=ts)
    for i, ms in enumerate(claims):
        seq = 1 + 2 * i
        ts += ms
        b.event(stream, seq, "junqi.moved", seat=0, ts=ts)
        b.event(stream, seq + 1, "game.move_time", seat=0, ts=ts, ms=ms, move_seq=seq)
        if engine is not None:
            b.step(stream, seq + 1, "game.move_time", seat=0, ts=ts, ms=ms, time_used=engine[i])


TOTAL_CASES = [
    pytest.param([3000, 2000], [3000, 5000], [], id="totals-agree"),
    pytest.param([3000, 2000], [3000, 5001], ["座位0用时合计不一致：SQL 合计 5000 毫秒，引擎 5001 毫秒 "
                                              "seat 0: SQL sums 5000 ms of move time, the engine 5001 ms"],
                 id="one-ms-off"),
    pytest.param([3000, 2000], [3000, 3000], ["座位0用时合计不一致：SQL 合计 5000 毫秒，引擎 3000 毫秒 "
                                              "seat 0: SQL sums 5000 ms of move time, the engine 3000 ms"],
                 id="engine-clock-missed-a-move"),
    pytest.param([3000], None, ["座位0用时合计不一致：SQL 合计 3000 毫秒，引擎 无 "
                                "seat 0: SQL sums 3000 ms of move time, the engine none"], id="no-engine-clock"),
]


@pytest.mark.parametrize(("claims", "engine", "messages"), TOTAL_CASES)
def test_move_time_totals(claims: list[int], engine: list[int] | None, messages: list[str]) -> None:
    """tournament.md §3 (tie-break 3): each seat's move time summed in SQL from the timing events
    equals the total the engine's clock kept, to the millisecond."""
    b = HandBuilt()
    clocked_game(b, claims, engine)
    assert b.run("move_time_totals") == [(G, None, "audit.T02", m) for m in messages]


@pytest.mark.parametrize(("severity", "flagged"), [("error", False), ("warning", True)])
def test_move_time_totals_left_to_rules_check(severity: str, flagged: bool) -> None:
    """tournament.md §3: a game with a rule error is left to the rules check (an engine stops its
    clock where the rules stop the game); a warning does not exempt it."""
    b = HandBuilt()
    clocked_game(b, [3000, 2000], [3000, 3000])
    b.finding(G, 3, "junqi.M01", "rules", severity)
    assert len(b.run("move_time_totals")) == flagged


# -- points.sql (audit.P01): tournament.md §1, paohuzi.md §10 ------------------------------------

def hu_game(b: HandBuilt, profile: PaohuziProfile, winner: int, score_s: int, payer: int | None,
            points: list[float], stream: str = G) -> None:
    """Adds a Paohuzi deal won (胡) by `winner` with S = `score_s` and the engine's points."""
    b.game(stream, "paohuzi", profile_json(profile), "HU", [winner], list(zip(("A", "B", "C"), points)))
    b.step(stream, 40, "paohuzi.hu", seat=winner, action="hu", huxi=21, tun=3, fan=1, score_s=score_s, payer=payer)


JUNQI_3_1_0 = replace(JUNQI, points=GamePoints(win=3, draw=1, loss=0))
POINT_CASES = [
    pytest.param("junqi", JUNQI, "FLAG_CAPTURED", [0, 2], [5, 1, 5, 1], [], id="junqi-win-5-loss-1"),
    pytest.param("junqi", JUNQI, "QUIET_LIMIT", [], [3, 3, 3, 3], [], id="junqi-draw-3"),
    pytest.param("junqi", JUNQI, "NO_LEGAL_MOVE", [1, 3], [1, 5, 1, 5], [], id="junqi-alliance-1-3-wins"),
    pytest.param("junqi", JUNQI_3_1_0, "RESIGNED", [1, 3], [0, 3, 0, 3], [], id="junqi-points-from-profile"),
    pytest.param("junqi", JUNQI, "FLAG_CAPTURED", [0, 2], [5, 1, 5, 5], [3], id="junqi-loser-scored-as-winner"),
    pytest.param("junqi", JUNQI, "DRAW_AGREED", [], [3, 3, 3, 1], [3], id="junqi-draw-scored-as-loss"),
    pytest.param("junqi", JUNQI, "FLAG_CAPTURED", [0, 2], [5, 1, 1, 1], [2], id="junqi-partner-not-scored-with-alliance"),
    pytest.param("checkers", CHECKERS, "ALL_HOME", [1], [0, 1], [], id="checkers-win-1-loss-0"),
    pytest.param("checkers", CHECKERS, "MARGIN_DRAW", [], [0.5, 0.5], [], id="checkers-draw-half"),
    pytest.param("checkers", CHECKERS, "DISSOLVED", [], [0, 0], [], id="checkers-both-lose-dissolved"),
    pytest.param("checkers", replace(CHECKERS, double_forfeit="draw"), "DISSOLVED", [], [0.5, 0.5], [],
                 id="checkers-dissolved-as-draw"),
    pytest.param("checkers", replace(CHECKERS, leave_camp_check_time="end_of_round"), "LEAVE_CAMP", [], [0, 0], [],
                 id="checkers-both-fail-leave-camp"),
    pytest.param("checkers", replace(CHECKERS, leave_camp_check_time="end_of_round", both_fail_same_round="draw"),
                 "LEAVE_CAMP", [], [0.5, 0.5], [], id="checkers-both-fail-leave-camp-as-draw"),
    pytest.param("checkers", CHECKERS, "DISSOLVED", [], [0.5, 0.5], [0, 1], id="checkers-double-loss-scored-as-draw"),
    pytest.param("checkers", CHECKERS, "MARGIN_DRAW", [], [0, 0], [0, 1], id="checkers-draw-scored-as-both-lose"),
    pytest.param("checkers", CHECKERS, "ALL_HOME", [0], [0.5, 0.5], [0, 1], id="checkers-win-scored-as-draw"),
    pytest.param("checkers", CHECKERS, "UNVERIFIED", [], [0, 0], [], id="checkers-unverified-keeps-the-claim"),
    pytest.param("paohuzi", PAOHUZI, "WALL_EXHAUSTED", [], [0, 0, 0], [], id="paohuzi-huangzhuang-0"),
    pytest.param("paohuzi", PAOHUZI, "WALL_EXHAUSTED", [], [0, 0, 1], [2], id="paohuzi-huangzhuang-scored"),
]


@pytest.mark.parametrize(("game", "profile", "termination", "winners", "points", "flagged"), POINT_CASES)
def test_points(game: str, profile: JunqiProfile | CheckersProfile | PaohuziProfile, termination: str,
                winners: list[int], points: list[float], flagged: list[int]) -> None:
    """tournament.md §1: Junqi 5/3/1 to each member of an alliance (第十条, from the profile);
    checkers 1/½/0, 0 each when both lose under double_forfeit / both_fail_same_round = double_loss;
    Paohuzi 0 each in 荒庄. Every seat whose engine points differ is a finding."""
    b = HandBuilt()
    b.game(G, game, profile_json(profile), termination, winners, [(f"p{s}", float(p)) for s, p in enumerate(points)])
    assert [seq_and_seat(f) for f in b.run("points")] == [(None, s) for s in flagged]


def seq_and_seat(f: Finding) -> tuple[int | None, int]:
    """Returns a points finding's seq and the seat its message names."""
    return f[1], int(f[3].partition(" seat ")[2].split()[0])


HU_CASES = [
    pytest.param(PAOHUZI, 1, 3, None, [-3, 6, -3], [], id="winner-2S-each-loser-minus-S"),
    pytest.param(PAOHUZI, 0, 1, None, [2, -1, -1], [], id="smallest-deal"),
    pytest.param(PAOHUZI, 1, 3, None, [-6, 6, 0], [0, 2], id="one-loser-charged-both-shares"),
    pytest.param(replace(PAOHUZI, deal_score="discarder_pays_both"), 1, 3, 2, [0, 6, -6], [], id="discarder-pays-both"),
    pytest.param(replace(PAOHUZI, deal_score="discarder_pays_both"), 1, 3, None, [-3, 6, -3], [],
                 id="discarder-pays-self-drawn-each-loser-pays"),
    pytest.param(replace(PAOHUZI, deal_score="discarder_pays_both"), 1, 3, 2, [-3, 6, -3], [0, 2],
                 id="discarder-not-charged"),
    pytest.param(PAOHUZI, 2, 4, None, [-4, -4, 4], [2], id="winner-paid-S-not-2S"),
]


@pytest.mark.parametrize(("profile", "winner", "score_s", "payer", "points", "flagged"), HU_CASES)
def test_points_paohuzi_hu(profile: PaohuziProfile, winner: int, score_s: int, payer: int | None,
                           points: list[float], flagged: list[int]) -> None:
    """paohuzi.md §10: the winner of a 胡 scores 2S and each loser −S; under discarder_pays_both the
    discarder (`payer` on the hu step) pays −2S and the other loser 0."""
    b = HandBuilt()
    hu_game(b, profile, winner, score_s, payer, [float(p) for p in points])
    assert [seq_and_seat(f) for f in b.run("points")] == [(None, s) for s in flagged]


def test_points_message() -> None:
    """tournament.md §1: the finding names the seat, the player, the SQL points and the engine's."""
    b = HandBuilt()
    b.game(G, "junqi", profile_json(JUNQI), "FLAG_CAPTURED", [0, 2], list(zip(JUNQI_PLAYERS, [5.0, 3.0, 5.0, 1.0])))
    assert b.run("points") == [(G, None, "audit.P01", "座位1（W）得分不一致：SQL 推导 1 分，军棋引擎 3 分 "
                                           "seat 1 (W): SQL derives 1 points, the junqi engine 3")]


# -- claims.sql (audit.C01): tournament.md §1, the software's totals are claims to check ----------

def claimed_game(b: HandBuilt, *claims: tuple[str, list[int], list[float]], stream: str = G) -> None:
    """Adds a Junqi game alliance 0–2 won FLAG_CAPTURED and the software's game.ended claims."""
    b.game(stream, "junqi", profile_json(JUNQI), "FLAG_CAPTURED", [0, 2], list(zip(JUNQI_PLAYERS, [5.0, 1.0, 5.0, 1.0])))
    for n, (termination, winners, points) in enumerate(claims):
        b.event(stream, 300 + n, "game.ended", termination=termination, winners=winners, points=points)


RIGHT = ("FLAG_CAPTURED", [0, 2], [5, 1, 5, 1])
CLAIM_CASES = [
    pytest.param([RIGHT], [], id="claim-agrees"),
    pytest.param([("FLAG_CAPTURED", [2, 0], [5, 1, 5, 1])], [], id="winners-in-any-order"),
    pytest.param([("FLAG_CAPTURED", [0, 2], [5.0, 1.0, 5.0, 1.0])], [], id="points-as-floats"),
    pytest.param([("FLAG_CAPTURED", [0, 2], [5, 1, 5, 3])], [300], id="wrong-points"),
    pytest.param([("FLAG_CAPTURED", [1, 3], [5, 1, 5, 1])], [300], id="wrong-winners"),
    pytest.param([("RESIGNED", [0, 2], [5, 1, 5, 1])], [300], id="wrong-termination"),
    pytest.param([("FLAG_CAPTURED", [0, 2], [5, 1, 5])], [300], id="points-of-three-seats"),
    pytest.param([("FLAG_CAPTURED", [0, 2], [5, 1, 5, 3]), RIGHT], [], id="a-later-claim-corrects"),
    pytest.param([RIGHT, ("FLAG_CAPTURED", [0, 2], [5, 1, 5, 3])], [301], id="the-last-claim-counts"),
    pytest.param([], [], id="no-claim-nothing-to-check"),
]


@pytest.mark.parametrize(("claims", "flagged"), CLAIM_CASES)
def test_claims(claims: list[tuple[str, list[int], list[float]]], flagged: list[int]) -> None:
    """tournament.md §1: the software's last game.ended claim must equal the derived termination,
    winners (as a set) and points per seat."""
    b = HandBuilt()
    claimed_game(b, *claims)
    assert _codes(b.run("claim_mismatches")) == [("audit.C01", seq) for seq in flagged]


def test_claims_message() -> None:
    """tournament.md §1: the finding shows the claim beside the derived result."""
    b = HandBuilt()
    claimed_game(b, ("FLAG_CAPTURED", [0, 2], [5, 1, 5, 3]))
    assert b.run("claim_mismatches") == [(G, 300, "audit.C01", "申报结果与推导不符：申报军旗被夺，胜方座位0、座位2，各座位得分 5、1、5、3；"
                                                     "推导军旗被夺，胜方座位0、座位2，各座位得分 5、1、5、1 "
                                                     "claimed flag captured, winners seat 0, seat 2, points by seat 5, 1, 5, 3; "
                                                     "derived flag captured, winners seat 0, seat 2, points by seat 5, 1, 5, 1")]


def test_claims_message_for_a_game_not_over() -> None:
    """tournament.md §1: a game.ended claim for a game the rules have not ended is shown against
    "no end", not as an empty message (SQL's format() of a NULL is NULL)."""
    b = HandBuilt()
    b.game(G, "junqi", profile_json(JUNQI), None, None, list(zip(JUNQI_PLAYERS, [None] * 4)))
    b.event(G, 300, "game.ended", termination="FLAG_CAPTURED", winners=[0, 2], points=[5, 1, 5, 1])
    assert b.run("claim_mismatches") == [(G, 300, "audit.C01", "申报结果与推导不符：申报军旗被夺，胜方座位0、座位2，各座位得分 5、1、5、1；"
                                                     "推导无终局（对局尚未结束），胜方无，各座位得分 无 "
                                                     "claimed flag captured, winners seat 0, seat 2, points by seat 5, 1, 5, 1; "
                                                     "derived no end (the game is not over), winners none, points by seat none")]


@pytest.mark.parametrize(("severity", "flagged"), [("error", False), ("warning", True)])
def test_claims_left_to_rules_check(severity: str, flagged: bool) -> None:
    """DESIGN.md audit/: a game with a rule error needs an arbiter's ruling before its result can be
    compared; a warning does not exempt the claim."""
    b = HandBuilt()
    claimed_game(b, ("FLAG_CAPTURED", [1, 3], [1, 5, 1, 5]))
    b.finding(G, 120, "junqi.M03", "rules", severity)
    assert len(b.run("claim_mismatches")) == flagged
