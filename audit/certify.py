"""Certification: verify the log, replay every game, run every check query and tournament check,
and report each check with its passed and failed counts, the worst examples and every finding."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from audit.checks import CHECKS, check_of
from audit.db import QUERIES
from audit.session import Session, open_verified_session
from audit.tournament_checks import deal_findings, seating_findings
from ledger import VerifyReport
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


@dataclass
class Certification:
    """The certification of a ledger (or one tournament in it)."""

    log: VerifyReport
    checks: list[CheckResult]
    findings: list[dict[str, Any]]
    warnings: list[dict[str, Any]]
    games: int = 0

    @property
    def ok(self) -> bool:
        return self.log.ok and not self.findings


def certify(root: Path, tournament: str | None = None, progress: Callable[[int], None] | None = None) -> Certification:
    """Runs every check over a ledger; a damaged log stops the audit after the log check."""
    results = {c.name: CheckResult(c.name, c.title) for c in CHECKS}
    report, session = open_verified_session(root, progress)
    results["log"].checked, results["log"].failed = report.size, 0 if report.ok else 1
    if session is None:
        results["log"].examples.append(f"entry {report.index}: {report.error}")
        for check in results.values():
            check.ran = check.name == "log"
        finding = {"check": "log", "stream": None, "seq": report.index, "code": "ledger.V01", "article": None,
                   "message": report.error, "source": "verify"}
        return Certification(report, list(results.values()), [finding], [])
    if tournament is not None:
        session.tournament_game(tournament)
    rows = collect_findings(session, tournament)
    errors = [r for r in rows if r["severity"] == "error"]
    for row in errors:
        result = results[row["check"]]
        result.failed += 1
        if len(result.examples) < EXAMPLES:
            result.examples.append(_example(row))
    _count_checked(session, results, tournament)
    return Certification(report, list(results.values()), errors, [r for r in rows if r["severity"] != "error"],
                         len(_games(session, tournament)))


def collect_findings(session: Session, tournament: str | None) -> list[dict[str, Any]]:
    """Gathers SQL, engine and tournament findings (of one tournament's streams, or of all), one per
    (check, stream, seq), SQL first."""
    rows: list[dict[str, Any]] = []
    for query in QUERIES.values():
        if query.check:
            for row in session.db.run(query.name, tournament=tournament):
                rows.append({**row, "check": query.check, "severity": "error", "source": f"sql:{query.name}"})
    engine = session.projection.findings
    python = [("seating", f) for f in seating_findings(session)] + [("deals", f) for f in deal_findings(session)]
    rows += [_row(f, check_of(f.code), "replay") for f in engine] + [_row(f, check, "tournament") for check, f in python]
    streams = _streams(session, tournament)
    seen: set[tuple[str, str, Any]] = set()
    unique = []
    for row in rows:
        key = (row["check"], row["stream"], row["seq"])
        if (streams is None or row["stream"] in streams) and key not in seen:
            seen.add(key)
            unique.append(row)
    return unique


def _example(row: dict[str, Any], width: int = 110) -> str:
    """Returns one finding as a short line for the table of checks."""
    where = row["stream"] if row["seq"] is None else f"{row['stream']}#{row['seq']}"
    text = f"{where} {row['code']}: {row['message']}"
    return text if len(text) <= width else text[: width - 1] + "…"


def _row(f: Finding, check: str, source: str) -> dict[str, Any]:
    return {"check": check, "stream": f.stream, "seq": f.seq, "code": f.code, "article": f.article,
            "message": f.message, "severity": f.severity, "source": source}


def _games(session: Session, tournament: str | None) -> list[dict[str, Any]]:
    return [g for g in session.projection.games if tournament is None or g["tournament"] == tournament]


def _streams(session: Session, tournament: str | None) -> set[str] | None:
    if tournament is None:
        return None
    return {tournament} | {g["stream"] for g in _games(session, tournament)}


def _count_checked(session: Session, results: dict[str, CheckResult], tournament: str | None) -> None:
    """Sets how many items each check looked at, so that passed = checked − failed."""
    games = _games(session, tournament)
    by_game = {name: sum(1 for g in games if g["game"] == name) for name in ("junqi", "paohuzi", "checkers")}
    kinds = dict(session.db.run("event_counts", tournament=tournament)[0]) if games else {}
    counts = {
        "rules": kinds.get("steps", 0),
        "claims": kinds.get("claims", 0),
        "points": kinds.get("seats", 0),
        "deals": by_game["paohuzi"],
        "timing": kinds.get("timings", 0),
        "timeouts": len(games),
        "quiet": by_game["junqi"],
        "steps": by_game["junqi"],
        "leave-camp": by_game["checkers"],
        "seating": kinds.get("seatings", 0),
    }
    for name, count in counts.items():
        results[name].checked = max(count, results[name].failed)
