"""Tournament checks that need more than one SQL query: the round-1 draw re-run from its revealed
seed, the seating every later round should have had (snake seating computed in SQL, or the Swiss
pairing from the SQL standings after the previous round), and the same deal at every table of a
Paohuzi board; a Swiss round must also record the pairing algorithm the tournament rules give."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec

from audit import seating
from audit.session import Session
from replay.protocol import Finding
from replay.registry import SEATS
from schemas import decode_stored
from schemas.common import RoundSeated, TournamentRules


def seating_findings(session: Session) -> Iterator[Finding]:
    """Yields a finding for every round whose recorded seating differs from what the rules give."""
    projection = session.projection
    registered = projection.arrow["players"].to_pylist()
    seatings = projection.arrow["seatings"].to_pylist()
    for t in projection.tournaments:
        tid, game = t["tournament"], t["game"]
        players = [p["player"] for p in registered if p["tournament"] == tid]
        recorded = _recorded_tables(seatings, tid)
        draws = {e.round: e for e in _round_events(session, tid)}
        pairing = seating.pairing_name(msgspec.json.decode(t["rules"], type=TournamentRules).swiss_pairing_order)
        met: set[frozenset[str]] = set()
        had_bye: set[str] = set()
        for rnd in sorted(recorded):
            tables = recorded[rnd]
            event = draws.get(rnd)
            if rnd == 1:
                yield from _check_draw(tid, event, players, tables, SEATS[game])
            else:
                if t["format"] == "swiss" and event is not None and event.pairing not in (None, pairing):
                    yield _finding(tid, event.seq, "audit.W02", f"round {rnd} records pairing {event.pairing!r}; "
                                   f"the tournament rules give {pairing!r}", "第十八条")
                expected = _expected(session, tid, t["format"], rnd, met, frozenset(had_bye))
                yield from _compare(tid, event.seq if event else None, rnd, expected, tables, t["format"])
            met.update(frozenset((a, b)) for row in tables for a in row for b in row if a < b)
            had_bye.update(row[0] for row in tables if len(row) == 1)


def deal_findings(session: Session) -> Iterator[Finding]:
    """Yields a finding for every Paohuzi table whose deal differs from the others of its board (第五条)."""
    from replay.paohuzi import check_board_deals

    # only the events the check reads are decoded: deck, deal, 亮张 and draws, about a fifth of a game
    boards: dict[tuple[str, str], dict[str, list[bytes]]] = {}
    for row in session.db.run("deal_events"):
        tables = boards.setdefault((row["tournament"] or "", row["board"]), {})
        tables.setdefault(row["stream"], []).append(row["body"].encode())
    for _, tables in sorted(boards.items()):
        yield from check_board_deals(decode_stored(stored) for _, stored in sorted(tables.items()))


def _round_events(session: Session, tid: str) -> list[RoundSeated]:
    return [e for e in session.projection.tournament_events if e.stream == tid and isinstance(e, RoundSeated)]


def _recorded_tables(seatings: list[dict], tid: str) -> dict[int, list[list[str]]]:
    rounds: dict[int, dict[int, dict[int, str]]] = {}
    for r in seatings:
        if r["tournament"] == tid:
            rounds.setdefault(r["round"], {}).setdefault(r["table_no"], {})[r["seat"]] = r["player"]
    return {n: [[seats[s] for s in sorted(seats)] for _, seats in sorted(tables.items())] for n, tables in rounds.items()}


WARNINGS = frozenset({"audit.W04"})
"""Tournament codes that are warnings: a table seated otherwise than the movement gives is reported for
the arbiter (tournament.md §4 "reports every table"), while the games played there stand."""


def _finding(tid: str, seq: int | None, code: str, message: str, article: str = "附录三") -> Finding:
    return Finding(stream=tid, seq=seq if seq is not None else 0, code=code, article=article, message=message,
                   severity="warning" if code in WARNINGS else "error")


def _check_draw(tid: str, event, players: list[str], tables: list[list[str]], seats: int) -> Iterator[Finding]:  # noqa: ANN001
    draw = event.draw if event is not None else None
    if draw is None or draw.seed is None:
        yield _finding(tid, event.seq if event else None, "audit.W01", "round 1 records no seed: the draw cannot be reproduced")
        return
    if draw.commitment is not None and seating.commitment(draw.seed) != draw.commitment:
        yield _finding(tid, event.seq, "audit.W01", f"round-1 seed hashes to {seating.commitment(draw.seed)}, committed {draw.commitment}")
    if draw.method != seating.DRAW_METHOD:
        yield _finding(tid, event.seq, "audit.W01", f"round-1 draw method {draw.method!r} is unknown to the auditor")
        return
    expected = seating.draw_first_round(players, seats, draw.seed)
    yield from _compare(tid, event.seq, 1, expected, tables, "duplicate")


def _expected(session: Session, tid: str, fmt: str, rnd: int, met: set[frozenset[str]], had_bye: frozenset[str]) -> list[list[str]]:
    if fmt == "swiss":
        rows = session.db.run("pairing_order", tournament=tid, through=rnd - 1)
        return [list(pair) for pair in seating.swiss_pairs([r["player"] for r in rows], met, had_bye)]
    tables: dict[int, dict[int, str]] = {}
    for row in session.db.run("expected_seating", tournament=tid, round=rnd):
        tables.setdefault(row["table_no"], {})[row["seat"]] = row["player"]
    return [[seats[s] for s in sorted(seats)] for _, seats in sorted(tables.items())]


def _compare(tid: str, seq: int | None, rnd: int, expected: list[list[str]], tables: list[list[str]], fmt: str) -> Iterator[Finding]:
    if fmt == "swiss":  # a pairing is a set of opponents; who sits where is decided per game
        pairs = sorted(sorted(t) for t in expected)
        for pair in (sorted(t) for t in tables):
            if pair not in pairs:
                yield _finding(tid, seq, "audit.W02", f"round {rnd} pairs {' – '.join(pair)}; the Swiss pairing gives {pairs}", "第十八条")
        return
    for n, (want, got) in enumerate(zip(expected, tables), start=1):
        if want != got:
            yield _finding(tid, seq, "audit.W04", f"round {rnd} table {n} seats {got}; the movement rules give {want}")
