"""Tournament checks that need more than one SQL query: the round-1 draw re-run from its revealed
seed, the seating every later round should have had (snake seating computed in SQL, or the Swiss
pairing from the SQL standings after the previous round), and the same deal at every table of a
Paohuzi board; a Swiss round must also record the pairing algorithm the tournament rules give."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import msgspec
import pyarrow.compute as pc

from audit.query.arbitration import honoured
from audit.query.db import AuditDB
from audit.query.session import Database, Session
from replay import seating
from replay.protocol import Finding
from replay.registry import SEATS
from schemas import decode_stored
from schemas.common import RoundSeated, TournamentRules


def seating_findings(session: Session) -> Iterator[Finding]:
    """Yields a finding for every round whose recorded seating differs from what the rules give
    from the standings as known when the round was seated (tournament.md §4, checkers.md §12.2): a
    ruling recorded after that changes later standings, not the seating's correctness."""
    projection = session.projection
    registered = projection.arrow["players"].to_pylist()
    seatings = projection.arrow["seatings"].to_pylist()
    for t in projection.tournaments:
        tid, game = t["tournament"], t["game"]
        players = [p["player"] for p in registered if p["tournament"] == tid]
        recorded = _recorded_tables(seatings, tid)
        draws = {e.round: e for e in _round_events(session, tid)}
        seated = {r["round"]: r["entry"] for r in seatings if r["tournament"] == tid}
        pairing = seating.pairing_name(msgspec.json.decode(t["rules"], type=TournamentRules).swiss_pairing_order)
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
                db = as_of(session, seated.get(rnd))
                expected = _expected(db, tid, t["format"], rnd, frozenset(had_bye))
                yield from _compare(tid, event.seq if event else None, rnd, expected, tables, t["format"])
            had_bye.update(row[0] for row in tables if len(row) == 1)


def as_of(session: Session, entry: int | None) -> Database:
    """Returns the session's database as it stood before log entry `entry`: the rulings recorded at
    or after it left out (their games' results recomputed without them), or the session's own when
    there are none."""
    tables = session.projection.tables()
    rulings = tables["rulings"]
    if entry is None or not any(e is not None and e >= entry for e in rulings["entry"].to_pylist()):
        return session.db
    tables.update(honoured(tables, keep=lambda r: r["entry"] < entry))
    tables["rulings"] = rulings.filter(pc.less(rulings["entry"], entry))
    return AuditDB(tables)


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


def _finding(tid: str, seq: int | None, code: str, message: str, article: str = "附录三") -> Finding:
    """A seating finding: an error in every game (附录三, 第十八条), the choices the rules leave named in its message."""
    return Finding(stream=tid, seq=seq if seq is not None else 0, code=code, article=article, message=message)


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
    yield from _compare(tid, event.seq, 1, Expected(expected), tables, "duplicate")


def _expected(db: Database, tid: str, fmt: str, rnd: int, had_bye: frozenset[str]) -> Expected:
    """Returns the seating the rules give round `rnd`: Swiss pairs, or duplicate tables with, for
    each player, the places in rank order it may take (a tie after §3 criteria 1–4 leaves the order open)."""
    if fmt == "swiss":
        rows = db.run("pairing_order", tournament=tid, through=rnd - 1)
        met = {frozenset((r["player"], r["opponent"])) for r in db.run("swiss_met", tournament=tid, through=rnd - 1)}
        return Expected([list(pair) for pair in seating.swiss_pairs([r["player"] for r in rows], met, had_bye)])
    tables: dict[int, dict[int, str]] = {}
    out = Expected([])
    for row in db.run("expected_seating", tournament=tid, round=rnd):
        tables.setdefault(row["table_no"], {})[row["seat"]] = row["player"]
        out.places[row["player"]] = (row["tie_lo"], row["tie_hi"])
        out.place_of[(row["table_no"], row["seat"])] = row["k"]
        out.by_place[row["k"]] = row["player"]
    out.tables = [[seats[s] for s in sorted(seats)] for _, seats in sorted(tables.items())]
    return out


@dataclass
class Expected:
    """The seating the rules give a round: its tables, and (duplicate) each player's allowed places
    `places` (first and last 0-based rank it may hold), the place of each (table, seat), and who
    holds each place by default (player number breaking ties)."""

    tables: list[list[str]]
    places: dict[str, tuple[int, int]] = field(default_factory=dict)
    place_of: dict[tuple[int, int], int] = field(default_factory=dict)
    by_place: dict[int, str] = field(default_factory=dict)

    def allows(self, table: int, seat: int, player: str) -> bool:
        """Tells whether `player` may sit at (table, seat): the seat's place is one its tie group spans."""
        lo, hi = self.places.get(player, (-1, -2))
        return lo <= self.place_of.get((table, seat), -1) <= hi

    def choice(self, row: list[str]) -> str:
        """Names the open choices among a table's players (ties after §3 criteria 1–4), or ''."""
        tied = [(p, self.places[p]) for p in row if p in self.places and self.places[p][0] < self.places[p][1]]
        groups = sorted({lohi for _, lohi in tied})
        return "; ".join(f"并列 tied after §3 criteria 1–4: {', '.join(self.by_place[k] for k in range(lo, hi + 1))} "
                         f"(places {lo + 1}–{hi + 1}, any order allowed)" for lo, hi in groups)


def _compare(tid: str, seq: int | None, rnd: int, expected: Expected, tables: list[list[str]], fmt: str) -> Iterator[Finding]:
    if fmt == "swiss":  # a pairing is a set of opponents; who sits where is decided per game
        pairs = sorted(sorted(t) for t in expected.tables)
        for pair in (sorted(t) for t in tables):
            if pair not in pairs:
                yield _finding(tid, seq, "audit.W02", f"round {rnd} pairs {' – '.join(pair)}; the Swiss pairing gives {pairs}", "第十八条")
        return
    for n, (want, got) in enumerate(zip(expected.tables, tables), start=1):
        if want == got or (expected.places and all(expected.allows(n, s, p) for s, p in enumerate(got))):
            continue
        choice = expected.choice(want + got)
        yield _finding(tid, seq, "audit.W04", f"第{rnd}轮第{n}桌座次不符合移位规则 round {rnd} table {n} seats {got}; the movement "
                       f"rules give {want}" + (f" ({choice})" if choice else ""))
