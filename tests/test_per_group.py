"""Issue 32: the cross-table deal check (paohuzi.md §11, 第五条) reads a season's Paohuzi deals board
by board: `AuditDB.per_group` hands each board's rows to the check as the board ends, a batch of
rows at a time, instead of making every deal's bytes Python objects first. The groups, their order
and their rows are those of grouping the whole result; a query whose rows are not in its groups'
order is refused, not grouped wrongly."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import audit.query.db as db_module
from audit.query.db import AuditError
from audit.query.session import open_session
from tests.ledger_support import cli

BOARD = ("tournament", "board")


@pytest.fixture(scope="module")
def boards(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A duplicate Paohuzi tournament (6 players, 2 rounds) and, outside any tournament (its key
    NULL, grouped as ''), three boards each played at two tables."""
    root = tmp_path_factory.mktemp("boards") / "ledger"
    for args in (("--tournament", "--players", "6", "--rounds", "2"), ("--boards", "3", "--tables", "2")):
        done = cli("simulate", "paohuzi", *args, "--ledger", str(root))
        assert done.exit_code == 0, done.output
    return root


def _grouped_whole(rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The groups of a whole result, as `per_group` once made them: by key (NULL as ''), in key order."""
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple("" if row[k] is None else row[k] for k in BOARD), []).append(row)
    return [groups[key] for key in sorted(groups)]


def test_each_board_is_checked_whole_and_in_order(boards: Path) -> None:
    db = open_session(boards).db
    seen = list(db.per_group("deal_events", BOARD, lambda rows: [rows]))
    want = _grouped_whole(sorted(db.run("deal_events"), key=lambda r: (r["stream"], r["seq"])))
    assert len(want) >= 5 and seen == want
    assert {rows[0]["tournament"] for rows in seen} >= {None} and len({rows[0]["tournament"] for rows in seen}) == 2
    assert all(len({r["stream"] for r in rows}) >= 2 for rows in seen)  # each board played at two tables or more


def test_rows_out_of_their_groups_order_are_refused(boards: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    query = db_module.QUERIES["deal_events"]
    by_stream = replace(query, sql=query.sql.replace("ORDER BY coalesce(g.tournament, ''), g.board, e.stream, e.seq",
                                                     "ORDER BY e.stream DESC, e.seq"))
    assert by_stream.sql != query.sql
    monkeypatch.setitem(db_module.QUERIES, "deal_events", by_stream)
    with pytest.raises(AuditError, match="not in the order of tournament, board"):
        list(open_session(boards).db.per_group("deal_events", BOARD, lambda rows: [rows]))
