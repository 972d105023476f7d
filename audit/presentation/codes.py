"""The `audit.*` finding codes, and the index of every code matchledger reports: the engines' own
catalogues (replay/junqi/codes.py, replay/paohuzi/codes.py, replay/checkers/codes.py), the ledger's
(ledger/codes.py) and these. Each code has its severity, the article of the rule book it cites, the rule (in English
and Chinese) and what the finding means. README's table of codes is generated from here (`python -m
audit.presentation.codes`) and a test holds both to the codes the engines and checks can emit.

The scheme: `<namespace>.<ID>`, the namespace a game (`junqi`, `paohuzi`, `checkers`), `audit`
(SQL and tournament checks) or `ledger` (the log); the ID, stable once published, is a letter for
the area and a number (`junqi.L06`: layout rule 6), the severity a field of its own. Checkers codes
also keep the name their rules file gives them (`checkers.M03` is `E_OCCUPIED`, checkers.md §4.7),
shown beside the code so that an arbiter reading checkers.md can trace a finding.
"""

from __future__ import annotations

from audit.presentation.engine_words import RULES
from audit.presentation.rows import Rows, markdown
from ledger.codes import ROWS as LEDGER_ROWS
from replay.checkers.codes import CATALOGUE as CHECKERS
from replay.junqi.codes import CODES as JUNQI
from replay.paohuzi.codes import CODES as PAOHUZI
from replay.protocol import RULE_BOOKS
from replay.values import Code, catalogue


def _with_rules(namespace: str, rows: list[tuple[str, str, str | None, str, str]]) -> dict[str, Code]:
    """Returns a namespace's codes, each with its rule in Chinese from audit/terms.py."""
    return catalogue(namespace, [(*row, RULES[f"{namespace}.{row[0]}"]) for row in rows])


AUDIT = _with_rules("audit", [
    # ID, severity, article, rule, what a finding means (the rule in Chinese: audit/presentation/terms.py)
    ("C01", "E", None, "claimed results equal the derived ones (SQL)",
     "a game.ended claim differs from the derived result"),
    ("C02", "E", "第八条", "the claimed 胡息 and deal score are the derived ones (SQL, Paohuzi)",
     "a 胡's claimed 胡息 or score differs"),
    ("P01", "E", "tournament.md §1", "game points follow from the result and the profile (SQL)",
     "SQL and the engine give different game points"),
    ("O01", "E", "第九条 / 第四条", "timeouts within the allowance (SQL)",
     "more timeouts than the allowance"),
    ("T01", "E", "tournament.md §3", "claimed move times agree with the timestamps (SQL)",
     "a move time differs from the timestamp gap"),
    ("T02", "E", "tournament.md §3", "SQL and the engines agree on each seat's move time",
     "the totals differ"),
    ("L01", "E", "第五条", "checkers leave-camp deadlines (SQL)",
     "SQL and the engine disagree on a leave-camp deadline"),
    ("Q01", "E", "第九条", "Junqi 50-step no-contact count (SQL)",
     "SQL and the engine disagree on the quiet count"),
    ("Q02", "E", "第九条", "Junqi quiet-limit end (SQL)",
     "SQL and the engine disagree on a quiet-limit draw (五十步无接触和棋)"),
    ("S01", "E", "第九条", "Junqi total step limit (SQL)",
     "SQL and the engine disagree on the step limit"),
    ("G01", "E", None, "every stream opens a game or a tournament",
     "a stream that is neither: its events are not replayed"),
    ("A01", "E", "第十八条 2", "an appeal is filed within the window (24 h online, 3 h at a venue), or declared void as late",
     "an appeal filed late but not declared void, or declared void though in time"),
    ("A02", "E", "第十九条 1, 第十三条 三", "decided once, by a majority of an odd committee of at least three",
     "a decision without a valid majority, by too small or even a committee, or a second decision"),
    ("A03", "E", "第十九条 1", "decided within the deadline (2 working days by default)",
     "an appeal decided late or not at all"),
    ("A04", "E", "第十四条 (1)", "a result is changed after the game's end only on an upheld appeal",
     "a result override after the end with no upheld appeal of that game"),
    ("A05", "E", "第十四条 (1)", "every upheld appeal is carried out by a ruling",
     "an upheld appeal with no correction"),
    ("A06", "E", "第十四条", "rulings and decisions are signed by a registered arbiter of the right role",
     "a ruling or decision unsigned, by an unknown key or role, or with a bad signature"),
    ("A07", "E", "第十四条", "a ruling states what its kind needs",
     "a ruling that cannot be applied (points of another game size …)"),
    ("E01", "E", None, "the live audit folds every event of a game",
     "an engine stopped on an event; later events are not folded live"),
    ("E02", "E", None, "the live audit runs the round's checks at its close",
     "a round check failed to run live (the batch audit still runs it)"),
    ("W01", "E", "附录三", "the round-1 draw is reproducible from its seed",
     "no seed, a seed missing its commitment, or an unknown method"),
    ("W02", "E", "第十八条", "Swiss pairing by the tournament rules' algorithm, no repeats",
     "a pairing or algorithm other than the rules give"),
    ("W03", "E", "附录三", "each game seats the players of the round's seating",
     "a game's seat holds another player than the seating"),
    ("W04", "E", "附录三", "snake seating by rank (瑞士移位法); where ties leave the order open, any order among the tied",
     "a table seated otherwise than the movement allows"),
])
"""The codes of the SQL checks, the tournament and appeal checks and the live audit."""

LEDGER = _with_rules("ledger", LEDGER_ROWS)
"""The code of a log that does not verify (its catalogue: ledger/codes.py)."""

CODES: dict[str, Code] = {**JUNQI, **PAOHUZI, **CHECKERS, **AUDIT, **LEDGER}
"""Every code, the engines' first, in README's order."""


def rule_book(code: str) -> str:
    """Returns the rule book a code's article is from."""
    namespace = code.partition(".")[0]
    return RULE_BOOKS.get(namespace, "the tournament's game's rule book" if namespace == "audit" else "–")


def markdown_table() -> str:
    """Returns README's table of every finding code."""
    return markdown(Rows(["code", "name", "severity", "article", "rule", "a finding means"],
                         [[f"`{c.code}`", f"`{c.name}`" if c.name else "–", c.severity, c.article or "–", c.rule, c.meaning]
                          for c in CODES.values()]))


if __name__ == "__main__":
    print(markdown_table(), end="")
