"""The checks of a certification, and which check each engine finding code belongs to."""

from __future__ import annotations

from dataclasses import dataclass

from replay.checkers.codes import public


@dataclass(frozen=True)
class Check:
    """One line of the certification table."""

    name: str
    title: str


CHECKS: tuple[Check, ...] = (
    Check("log", "log intact: frames, tree, checkpoints, signatures"),
    Check("rules", "every layout, deal, move and claim of a move legal (replay)"),
    Check("claims", "claimed results and scores equal the derived ones"),
    Check("points", "game points: SQL and engines agree"),
    Check("deals", "duplicate deals: every table of a board got the committed deck"),
    Check("timing", "claimed move times agree with timestamps and engine clocks"),
    Check("timeouts", "timeouts within the stage allowance"),
    Check("quiet", "Junqi 50-step no-contact rule: SQL and engine agree"),
    Check("steps", "Junqi total step limit"),
    Check("leave-camp", "checkers leave-camp deadlines"),
    Check("seating", "seating and pairing follow the draw and the movement rules"),
    Check("appeals", "appeals: filed in time, decided by a valid majority within the deadline (第十八–十九条)"),
    Check("corrections", "corrections: every upheld appeal corrected, no correction without an upheld appeal (第十四条)"),
    Check("arbiters", "every ruling and decision signed by an arbiter the ledger knows"),
)

_BY_CODE = {  # checkers codes by the names of their rules file
    "claims": {public("E_CLAIM"), "junqi.E02", "paohuzi.E01", "paohuzi.E02", "paohuzi.H01", "paohuzi.H02",
               "paohuzi.H03", "paohuzi.H04", "paohuzi.H05"},
    "deals": {f"paohuzi.D0{n}" for n in range(1, 9)},
    "timing": {public("W_MOVE_TIME"), public("W_CLOCK"), "junqi.T01", "junqi.T03", "paohuzi.W01"},
    "timeouts": {public("W_TIMEOUTS"), public("W_SLOW_MOVE"), "junqi.T02"},
    "leave-camp": {public("W_LEAVE_CAMP")},
    "corrections": {"audit.A07"},
}
_CHECK_OF = {code: check for check, codes in _BY_CODE.items() for code in codes}


def check_of(code: str) -> str:
    """Returns the check an engine finding code belongs to; rule findings by default."""
    return _CHECK_OF.get(code, "rules")
