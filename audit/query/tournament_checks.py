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
from audit.query.db import PER_STREAM, AuditDB
from audit.query.session import Database, Session
from replay import seating
from replay.protocol import Finding
from replay.registry import SEATS
from schemas import decode_stored
from schemas.common import RoundSeated, TournamentRules


@dataclass
class SeatingRounds:
    """Each round's seating findings, by tournament and round, with the entry that seated it: what an
    audit keeps in its state, and what an incremental audit takes again for a round seated before
    the earlier checkpoint whose standings no new entry can change (`fresh_from`), instead of
    judging it again as of its seating (the season's 11 s of `audit --since`, issue 32)."""

    earlier: dict[tuple[str, int], tuple[int | None, list[Finding]]] = field(default_factory=dict)
    """The earlier audit's rounds: (tournament, round) → (the entry that seated it, its findings)."""
    before: int = 0
    """The earlier audit's checkpoint size: a round seated at or after it is judged again."""
    fresh_from: dict[str, int] = field(default_factory=dict)
    """By tournament, the first round a new entry can change (a game of round k changes the
    standings after k, so round k + 1 on; a registration, round 1); its later rounds are judged again."""
    found: dict[tuple[str, int], tuple[int | None, list[Finding]]] = field(default_factory=dict)
    """This audit's rounds, as `earlier`."""

    def reused(self, tid: str, rnd: int, entry: int | None) -> list[Finding] | None:
        """Returns the earlier findings of a round that nothing new can change, else None."""
        kept = self.earlier.get((tid, rnd))
        if kept is None or entry is None or kept[0] != entry or entry >= self.before or rnd >= self.fresh_from.get(tid, rnd + 1):
            return None
        return kept[1]

    def rows(self) -> list[dict[str, object]]:
        """Returns this audit's rounds as rows an audit state keeps (JSON)."""
        kept = [_Round(tid, rnd, entry, found) for (tid, rnd), (entry, found) in sorted(self.found.items())]
        return msgspec.to_builtins(kept)  # type: ignore[no-any-return]

    @classmethod
    def of_rows(cls, rows: list[dict[str, object]], before: int, fresh_from: dict[str, int]) -> SeatingRounds:
        """Returns the rounds an earlier audit kept (`rows`), to be taken again where nothing new changes them."""
        earlier = {(r.tournament, r.round): (r.entry, r.findings) for r in msgspec.convert(rows, list[_Round])}
        return cls(earlier=earlier, before=before, fresh_from=fresh_from)


class _Round(msgspec.Struct, frozen=True):
    """One round's seating findings as an audit state keeps them."""

    tournament: str
    round: int
    entry: int | None
    findings: list[Finding]


def seating_findings(session: Session, rounds: SeatingRounds | None = None) -> Iterator[Finding]:
    """Yields a finding for every round whose recorded seating differs from what the rules give
    from the standings as known when the round was seated (tournament.md §4, checkers.md §12.2): a
    ruling recorded after that changes later standings, not the seating's correctness. With
    `rounds`, each round's findings are kept there, and an earlier audit's taken again where they hold."""
    for (tid, rnd, entry), found in _each_round(session, rounds):
        if rounds is not None:
            rounds.found[(tid, rnd)] = (entry, found)
        yield from found


def _each_round(session: Session, rounds: SeatingRounds | None) -> Iterator[tuple[tuple[str, int, int | None], list[Finding]]]:
    projection = session.projection
    registered = projection.arrow["players"].to_pylist()
    seatings = projection.arrow["seatings"].to_pylist()
    dbs: dict[tuple[int, ...], Database] = {}
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
            key = (tid, rnd, seated.get(rnd))
            found = rounds.reused(*key) if rounds is not None else None
            if found is not None:
                yield key, found
            elif rnd == 1:
                yield key, list(_check_draw(tid, event, players, tables, SEATS[game]))
            else:
                found = []
                if t["format"] == "swiss" and event is not None and event.pairing not in (None, pairing):
                    found.append(_finding(tid, event.seq, "audit.W02", f"第{rnd}轮记录的编排算法为「{event.pairing}」，赛事规则规定为「{pairing}」 "
                                          f"round {rnd} records pairing {event.pairing}; the tournament rules give {pairing}", "第十八条"))
                db = _as_of_once(session, seated.get(rnd), dbs)
                expected = _expected(db, tid, t["format"], rnd, frozenset(had_bye))
                yield key, found + list(_compare(tid, event.seq if event else None, rnd, expected, tables, t["format"]))
            had_bye.update(row[0] for row in tables if len(row) == 1)


def _as_of_once(session: Session, entry: int | None, last: dict[tuple[int, ...], Database]) -> Database:
    """Returns `as_of(session, entry)`, the database `last` holds when it left out the same rulings:
    rounds seated before the same rulings are judged on the same standings (the 50 rounds of a
    season before one ruling: one database, not 50 built over the season's tables, issue 32)."""
    key = _left_out(session, entry)
    if key not in last:
        last.clear()  # one kept at a time: the rounds come in order, a tournament's cuts only narrowing
        last[key] = as_of(session, entry)
    return last[key]


def _left_out(session: Session, entry: int | None) -> tuple[int, ...]:
    """Returns the entries of the rulings recorded at or after log entry `entry` (none when it is None)."""
    if entry is None:
        return ()
    return tuple(sorted(e for e in session.projection.table("rulings")["entry"].to_pylist() if e is not None and e >= entry))


def as_of(session: Session, entry: int | None) -> Database:
    """Returns the session's database as it stood before log entry `entry`: the rulings recorded at
    or after it left out (their games' results recomputed without them), or the session's own when
    there are none."""
    if not _left_out(session, entry):
        return session.db
    rulings = session.projection.table("rulings")  # the others are read only where a ruling asks (kept ones stay in their files)
    projection, keep = session.projection, lambda r: r["entry"] < entry
    if isinstance(session.db, AuditDB) and projection.held is not None:
        # The kept or spilled tables are scanned where they lie, not read whole for every round (a
        # season's steps); the rulings and the games' openings are among the held entries.
        tables = dict(projection.sources())
        tables.update(honoured({name: projection.table(name) for name in ("games", "seats", "rulings")}, keep, projection.held.stored_of))
    else:
        tables = projection.tables()  # only now: on Spark, the driver holds no game's rows until asked
        tables.update(honoured(tables, keep))
    tables["rulings"] = rulings.filter(pc.less(rulings["entry"], entry))
    # The tables resting on each stream's events alone are the session's: no ruling changes them, and
    # an incremental audit's `events` holds only the stored bytes its checks read (audit/certification/since.py).
    built = session.db.built_tables() if isinstance(session.db, AuditDB) else {}
    bodies = session.db.bodies if isinstance(session.db, AuditDB) else None
    return AuditDB(tables, built={name: built[name] for name in PER_STREAM if name in built} or None, bodies=bodies)


@dataclass
class BoardDeals:
    """Each Paohuzi board's deal findings, by (tournament, board): what an audit keeps in its state,
    and what an incremental audit takes again for a board none of whose games is touched, reading
    and judging only the touched boards' deals (the season's 5.8 s of `audit --since`, issue 32)."""

    earlier: dict[tuple[str, str], list[Finding]] = field(default_factory=dict)
    touched: set[tuple[str, str]] | None = None
    """The boards (tournament, board) with a touched game, judged again; None: every board."""
    found: dict[tuple[str, str], list[Finding]] = field(default_factory=dict)

    def rows(self) -> list[dict[str, object]]:
        """Returns this audit's boards as rows an audit state keeps (JSON)."""
        return msgspec.to_builtins([_Board(t, b, found) for (t, b), found in sorted(self.found.items())])  # type: ignore[no-any-return]

    @classmethod
    def of_rows(cls, rows: list[dict[str, object]], touched: set[tuple[str, str]]) -> BoardDeals:
        """Returns the boards an earlier audit kept (`rows`), the `touched` ones to be judged again."""
        return cls(earlier={(r.tournament, r.board): r.findings for r in msgspec.convert(rows, list[_Board])}, touched=touched)


class _Board(msgspec.Struct, frozen=True):
    """One board's deal findings as an audit state keeps them."""

    tournament: str
    board: str
    findings: list[Finding]


def deal_findings(session: Session, boards: BoardDeals | None = None) -> Iterator[Finding]:
    """Yields a finding for every Paohuzi table whose deal differs from the others of its board (第五条),
    board by board (on Spark's executors, each board where its rows are). With `boards`, each board's
    findings are kept there, and where it names the touched boards only those are read and judged."""
    if boards is None:
        yield from session.db.per_group("deal_events", _BOARD, board_deal_findings)
        return

    touched = boards.touched

    def judged(rows: list[dict]) -> list[tuple[tuple[str, str], list[Finding]]]:
        # Pure, as it may run on Spark's executors: the board and its findings go back to the driver.
        key = _board_of(rows[0])
        if touched is not None and key not in touched:
            return []  # an untouched board of a touched board's tournament: the earlier audit's findings stand
        return [(key, board_deal_findings(rows))]

    if touched is None:
        boards.found.update(session.db.per_group("deal_events", _BOARD, judged))
    else:  # the untouched boards' findings are the earlier audit's; only the touched boards' tournaments are read
        boards.found.update({key: found for key, found in boards.earlier.items() if key not in touched})
        for tournament in sorted({t for t, _ in touched}):
            boards.found.update(session.db.per_group("deal_events", _BOARD, judged, tournament=tournament or None))
    for _, found in sorted(boards.found.items()):  # in per_group's order: by tournament, then board
        yield from found


_BOARD = ("tournament", "board")


def _board_of(row: dict) -> tuple[str, str]:
    """Returns a `deal_events` row's board as `per_group` keys it (NULL as '')."""
    return (row["tournament"] or "", row["board"] or "")


def board_deal_findings(rows: list[dict]) -> list[Finding]:
    """The findings of one board's `deal_events` rows: only the events the check reads are decoded
    (deck, deal, 亮张 and draws, about a fifth of a game), each table's in log order."""
    from replay.paohuzi import check_board_deals

    tables: dict[str, list[bytes]] = {}
    for row in sorted(rows, key=lambda r: (r["stream"], r["seq"])):
        tables.setdefault(row["stream"], []).append(row["body"].encode())
    return list(check_board_deals(decode_stored(stored) for _, stored in sorted(tables.items())))


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
        yield _finding(tid, event.seq if event else None, "audit.W01", "第1轮未记录抽签种子，抽签无法复现 "
                                                                       "round 1 records no seed: the draw cannot be reproduced")
        return
    if draw.commitment is not None and seating.commitment(draw.seed) != draw.commitment:
        hashed = seating.commitment(draw.seed)
        yield _finding(tid, event.seq, "audit.W01", f"第1轮抽签种子的哈希为 {hashed}，与承诺值 {draw.commitment} 不符 "
                       f"round-1 seed hashes to {hashed}, committed {draw.commitment}")
    if draw.method != seating.DRAW_METHOD:
        yield _finding(tid, event.seq, "audit.W01", f"第1轮抽签方法「{draw.method}」审计方未知 "
                                                    f"round-1 draw method {draw.method} is unknown to the auditor")
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
        return "；".join(f"按第3节标准1–4并列：{'、'.join(self.by_place[k] for k in range(lo, hi + 1))}（第 {lo + 1}–{hi + 1} 名，任意顺序均可） "
                         f"tied after §3 criteria 1–4: {', '.join(self.by_place[k] for k in range(lo, hi + 1))} "
                         f"(places {lo + 1}–{hi + 1}, any order allowed)" for lo, hi in groups)


def _compare(tid: str, seq: int | None, rnd: int, expected: Expected, tables: list[list[str]], fmt: str) -> Iterator[Finding]:
    if fmt == "swiss":  # a pairing is a set of opponents; who sits where is decided per game
        pairs = sorted(sorted(t) for t in expected.tables)
        for pair in (sorted(t) for t in tables):
            if pair not in pairs:
                zh, en = "、".join(" – ".join(p) for p in pairs), ", ".join(" – ".join(p) for p in pairs)
                yield _finding(tid, seq, "audit.W02", f"第{rnd}轮对阵 {' – '.join(pair)} 不符合瑞士制编排（应为 {zh}） "
                               f"round {rnd} pairs {' – '.join(pair)}; the Swiss pairing gives {en}", "第十八条")
        return
    for n, (want, got) in enumerate(zip(expected.tables, tables), start=1):
        if want == got or (expected.places and all(expected.allows(n, s, p) for s, p in enumerate(got))):
            continue
        choice = expected.choice(want + got)
        yield _finding(tid, seq, "audit.W04", f"第{rnd}轮第{n}桌座次不符合移位规则：实际 {_seated(got, '座位', '、')}，"
                       f"规则应为 {_seated(want, '座位', '、')} round {rnd} table {n}: {_seated(got, 'seat ', ', ')}; "
                       f"the movement rules give {_seated(want, 'seat ', ', ')}" + (f"（{choice}）" if choice else ""))


def _seated(players: list[str], seat: str, comma: str) -> str:
    """Returns a table's players in seat order as people read them: `座位0 P1、座位1 P2` or `seat 0 P1, seat 1 P2`."""
    return comma.join(f"{seat}{s} {p}" for s, p in enumerate(players))
