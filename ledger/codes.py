"""The ledger's finding code: a log that does not verify is one finding, `ledger.V01`, whoever reports
it (`audit` stops there). Kept beside the log it is about, as each engine keeps its catalogue beside
its rules (issue 29 point 5); `audit/presentation/codes.py` indexes every catalogue for README and the CLI.
"""

from __future__ import annotations

V01 = "ledger.V01"
"""The log does not verify: frames, tree, tiles, checkpoints or signatures."""

ROWS: list[tuple[str, str, str | None, str, str]] = [
    # ID, severity, article, rule, what a finding means (the rule in Chinese: audit/presentation/terms.py)
    ("V01", "E", None, "the log verifies: frames, tree, tiles, checkpoints, signatures",
     "the log is damaged (the audit stops there)"),
]
