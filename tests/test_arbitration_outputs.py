"""Outputs that agree (issue 30 point 10): the audit's JSON of a damaged log's finding has every key
README lists, calls the damaged entry an entry (never a seq), and its log check adds up."""

from __future__ import annotations

import json
from pathlib import Path

from tests.ledger_support import cli


def test_a_damaged_log_finding_has_every_key_and_its_counts_add_up(tmp_path: Path) -> None:
    """README's `audit` JSON: findings carry check, stream, seq, code, article, rule_book, message,
    severity, source; the damaged entry is `entry`; the log check's passed + failed = checked, and
    passed is the count the verdict says was verified before it."""
    root = str(tmp_path / "l")
    result = cli("simulate", "checkers", "--tournament", "--players", "4", "--rounds", "1", "--inject", "bad-byte", "--ledger", root, "--json")
    entry = json.loads(result.stdout)["planted"]["entry"]
    report = json.loads(cli("audit", "--ledger", root, "--json").stdout)
    (finding,) = report["findings"]
    assert {"check", "stream", "seq", "code", "article", "rule_book", "message", "severity", "source"} <= set(finding)
    assert (finding["code"], finding["severity"], finding["seq"], finding["entry"]) == ("ledger.V01", "error", None, entry)
    log = next(c for c in report["checks"] if c["check"] == "log")
    assert (log["passed"], log["failed"]) == (entry, 1) and f"({entry} entries verified before it)" in report["reason"]
