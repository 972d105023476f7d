"""Certification: verify the log, replay every game, run every check query and tournament check,
and report each check with its passed and failed counts, the worst examples and every finding."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit.query.checks import CHECKS, check_of
from audit.query.db import QUERIES
from audit.query.findings import finding_text
from audit.query.session import Session, open_verified_session
from audit.query.tournament_checks import BoardDeals, SeatingRounds, deal_findings, seating_findings
from ledger import VerifyReport
from ledger.codes import V01 as LEDGER_UNVERIFIED
from replay.protocol import Finding

EXAMPLES = 3


@dataclass
class CheckResult:
    """One check's verdict: items checked, items failed, and the first failures."""

    name: str
    title: str
    checked: int = 0
    failed: int = 0
    examples: list[str] = field(default_factory=list)
    ran: bool = True

    @property
    def passed(self) -> int:
        return self.checked - self.failed

    @property
    def applies(self) -> bool:
        """Tells whether the check had anything to look at (a Junqi rule in a checkers tournament has not)."""
        return self.checked > 0 or self.failed > 0


@dataclass
class Certification:
    """The certification of a ledger (or one tournament in it)."""

    log: VerifyReport
    checks: list[CheckResult]
    findings: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    games: int = 0
    tournament: str | None = None
    profiles: list[dict[str, Any]] = field(default_factory=list)
    """The rule profiles in force, as recorded (`profiles_in_force`)."""
    as_of: str | None = None
    """When the games' status was judged (ISO 8601, UTC): the competition's latest event."""

    @property
    def ok(self) -> bool:
        """Tells whether the ledger is certified: the log verifies, there are games, and no finding."""
        return self.log.ok and self.games > 0 and not self.findings

    @property
    def reason(self) -> str:
        """Returns why the ledger is or is not certified, with the size the log was verified to."""
        log = self.log
        if not log.ok:
            where = f" at entry {log.index}" if log.index is not None else ""
            return f"the log does not verify{where}: {log.error} ({log.size} entries verified before it)"
        if self.games == 0:
            scope = f"tournament {self.tournament} has" if self.tournament else "the ledger holds"
            return f"{scope} no games: there is nothing to certify"
        return f"{len(self.findings)} findings" if self.findings else "no findings"

    def verdict(self) -> str:
        """Returns the one-line verdict, with the log's verified size and root."""
        head = "CERTIFIED" if self.ok else "NOT CERTIFIED"
        unsigned = (f"; {self.log.unsigned} unsigned entries after size {self.log.size} not certified "
                    f"(签名检查点之后的 {self.log.unsigned} 个未签名条目不予认证)") if self.log.ok and self.log.unsigned else ""
        return (f"{head}: {self.reason}; {self.games} games, log verified to size {self.log.size}, root {self.log.root}{unsigned}; "
                f"{len(self.warnings)} warnings")


def certify(root: Path, tournament: str | None = None, progress: Callable[[int], None] | None = None) -> Certification:
    """Runs every check over a ledger; a damaged log stops the audit after the log check."""
    return certify_session(*open_verified_session(root, progress), tournament)


def certify_session(report: VerifyReport, session: Session | None, tournament: str | None = None,
                    rounds: SeatingRounds | None = None, boards: BoardDeals | None = None) -> Certification:
    """Runs every check over a session (None when its log did not verify, which stops the audit
    after the log check): a ledger's in DuckDB, or an export's on Spark (audit/spark/session.py).
    `rounds` and `boards` keep each round's seating and each board's deal findings (an audit's
    state), and give an earlier audit's."""
    results = {c.name: CheckResult(c.name, c.title) for c in CHECKS}
    failed = 0 if report.ok else 1  # the entries verified, and the one that did not: passed + failed = checked
    results["log"].checked, results["log"].failed = report.size + failed, failed
    if session is None:
        results["log"].examples.append(f"entry {report.index}: {report.error}")
        for check in results.values():
            check.ran = check.name == "log"
        where = f" (entry {report.index})" if report.index is not None else ""
        finding = {"check": "log", "stream": None, "seq": None, "entry": report.index, "code": LEDGER_UNVERIFIED, "article": None,
                   "rule_book": None, "message": f"{report.error}{where}", "severity": "error", "source": "verify"}
        return Certification(report, list(results.values()), [finding], [], tournament=tournament)
    if tournament is not None:
        session.tournament_game(tournament)
    rows = collect_findings(session, tournament, rounds, boards)
    errors = [r for r in rows if r["severity"] == "error"]
    for row in errors:
        result = results[row["check"]]
        result.failed += 1
        if len(result.examples) < EXAMPLES:
            result.examples.append(_example(row))
    _count_checked(session, results, tournament)
    from audit.query.standings import status_time

    return Certification(report, list(results.values()), errors, [r for r in rows if r["severity"] != "error"],
                         sum(session.game_counts(tournament).values()), tournament, profiles_in_force(session, tournament), status_time(session))


def profiles_in_force(session: Session, tournament: str | None) -> list[dict[str, Any]]:
    """Returns the rule profiles as their start events recorded them (JSON text): each tournament's
    (with its rules), then each distinct game profile with the number of games played under it."""
    opened = [{"tournament": t["tournament"], "game": t["game"], "profile": t["profile"], "rules": t["rules"], "games": None}
              for t in session.projection.tournaments if tournament is None or t["tournament"] == tournament]
    played = session.game_counts(tournament)
    return opened + [{"tournament": t or None, "game": game, "profile": profile, "rules": None, "games": n}
                     for (t, game, profile), n in sorted(played.items())]


def collect_findings(session: Session, tournament: str | None, rounds: SeatingRounds | None = None,
                     boards: BoardDeals | None = None, per_game: set[str] | None = None) -> list[dict[str, Any]]:
    """Gathers engine, SQL and tournament findings (of one tournament's streams, or of all), one per
    fault: per (check, stream, seq, code), and a claim the engine found false (with its article,
    as `replay` reports it) not again as the SQL's audit.C01. With `per_game`, only the per-game
    check queries' (`SCOPED`) findings of those games, and the engines': a share of the live audit's
    first round close, whose tournament checks run once over every game's kept rows."""
    from audit.certification.scoped import SCOPED

    engine = session.projection.findings
    rows = [_row(f, check_of(f.code), "replay") for f in engine]
    claims = {(r["stream"], r["seq"]) for r in rows if r["check"] == "claims"}
    for query in QUERIES.values():
        if query.check and (per_game is None or query.name in SCOPED):
            for row in session.db.run(query.name, tournament=tournament):
                if (row["code"] != "audit.C01" or (row["stream"], row["seq"]) not in claims) and (per_game is None or row["stream"] in per_game):
                    rows.append({**row, "check": query.check, "severity": "error", "source": f"sql:{query.name}"})
    python = [] if per_game is not None else [("seating", f) for f in seating_findings(session, rounds)] + \
        [("deals", f) for f in deal_findings(session, boards)]
    rows += [_row(f, check, "tournament") for check, f in python]
    owners = session.games_of({row["stream"] for row in rows})  # the games found at fault, not every game
    books = _rule_books(session, owners)
    seen: set[tuple[str, str, Any, str]] = set()
    unique = []
    for row in rows:
        key = (row["check"], row["stream"], row["seq"], row["code"])
        if _within(row["stream"], tournament, owners) and key not in seen:
            seen.add(key)
            unique.append({**row, "rule_book": books.get(row["stream"])})
    return unique


def _rule_books(session: Session, owners: dict[str, dict[str, Any]]) -> dict[str, str]:
    """Returns the rule book each game (of `owners`) or tournament stream's articles cite (its game's)."""
    from replay.protocol import RULE_BOOKS

    games = [(stream, g["game"]) for stream, g in owners.items()]
    games += [(t["tournament"], t["game"]) for t in session.projection.tournaments]
    return {stream: RULE_BOOKS[game] for stream, game in games if game in RULE_BOOKS}


def _example(row: dict[str, Any]) -> str:
    """Returns one finding, whole, as the line every command prints it."""
    return finding_text(row)


def _row(f: Finding, check: str, source: str) -> dict[str, Any]:
    return {"check": check, "stream": f.stream, "seq": f.seq, "code": f.code, "article": f.article,
            "message": f.message, "severity": f.severity, "source": source, "seat": f.seat, "player": f.player}


def _within(stream: str | None, tournament: str | None, owners: dict[str, dict[str, Any]]) -> bool:
    """Tells whether a stream is the tournament's own or one of its games' (any, without a tournament)."""
    return tournament is None or stream == tournament or stream is not None and owners.get(stream, {}).get("tournament") == tournament


def _arbitration_counts(session: Session, tournament: str | None) -> dict[str, int]:
    """Counts the appeals (with their decisions), the rulings, and the signed events of a tournament's arbitration."""
    def count(name: str) -> int:  # one table read, not every one (a kept projection's `steps` stays in its files)
        rows = session.projection.column(name, "stream").to_pylist()
        owners = session.games_of(rows) if tournament is not None else {}
        return sum(1 for s in rows if _within(s, tournament, owners))

    return {"appeals": count("appeals"), "corrections": count("rulings") + count("decisions"),
            "arbiters": count("rulings") + count("decisions")}


def _count_checked(session: Session, results: dict[str, CheckResult], tournament: str | None) -> None:
    """Sets how many items each check looked at, so that passed = checked − failed."""
    played = session.game_counts(tournament)
    by_game = {name: sum(n for (_, game, _), n in played.items() if game == name) for name in ("junqi", "paohuzi", "checkers")}
    games = sum(played.values())
    kinds = dict(session.db.run("event_counts", tournament=tournament)[0]) if games else {}
    counts = {
        "rules": kinds.get("steps", 0),
        "claims": kinds.get("claims", 0),
        "points": kinds.get("seats", 0),
        "deals": by_game["paohuzi"],
        "timing": kinds.get("timings", 0),
        "timeouts": games,
        "quiet": by_game["junqi"],
        "steps": by_game["junqi"],
        "leave-camp": by_game["checkers"],
        "seating": kinds.get("seatings", 0),
        **_arbitration_counts(session, tournament),
    }
    for name, count in counts.items():
        results[name].checked = max(count, results[name].failed)
