"""Each game's appeal window from its own book (issue 30 point 5): checkers sheet item 11 (下轮开赛前:
an objection is due before the next round starts), Junqi 第十八条 2 (24 h online, 3 h at a venue),
Paohuzi (its seed names no window: the Junqi book's hours, ArbitrationRules.appeal_window)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.audit_rows import HandBuilt

HOUR = 3_600_000


def _event(game: str, rules: dict[str, Any]) -> HandBuilt:
    """Two rounds of one game each: round 1 ends at 1 h, round 2 starts at 5 h and ends at 6 h."""
    b = HandBuilt()
    b.rows["tournaments"].append({"tournament": "cup", "game": game, "name": "cup", "format": "swiss" if game == "checkers" else "duplicate",
                                  "stage": "preliminary", "profile": "{}", "rules": json.dumps(rules)})
    for rnd, (start, end) in enumerate(((0, HOUR), (5 * HOUR, 6 * HOUR)), start=1):
        b.game(f"cup/r{rnd}", game, "{}", "TEST", [0], [("A", 1.0), ("B", 0.0)], tournament="cup", round=rnd, table_no=1)
        b.rows["games"][-1].update(started_ts=start, ended_ts=end)
    return b


@pytest.mark.parametrize(("game", "rules", "round_1", "round_2"), [
    pytest.param("checkers", {}, 5 * HOUR, 30 * HOUR, id="checkers-sheet-11-next-round"),
    pytest.param("checkers", {"arbitration": {"appeal_window": "hours"}}, 25 * HOUR, 30 * HOUR, id="checkers-set-to-hours"),
    pytest.param("junqi", {}, 25 * HOUR, 30 * HOUR, id="junqi-18-2-online"),
    pytest.param("junqi", {"arbitration": {"event_type": "venue"}}, 4 * HOUR, 9 * HOUR, id="junqi-18-2-venue"),
    pytest.param("paohuzi", {}, 25 * HOUR, 30 * HOUR, id="paohuzi-the-junqi-hours"),
    pytest.param("paohuzi", {"arbitration": {"appeal_window": "next_round"}}, 5 * HOUR, 30 * HOUR, id="paohuzi-set-to-next-round"),
])
def test_the_appeal_window_closes_as_the_game_book_says(game: str, rules: dict[str, Any], round_1: int, round_2: int) -> None:
    """Round 1's window closes at round 2's start under the checkers sheet (item 11), else 24 h (3 h at
    a venue) after the end; the last round, with no next round, takes the hours."""
    rows = _event(game, rules).db().query("SELECT stream, window_end_ts FROM game_status ORDER BY stream")[1]
    assert rows == [("cup/r1", round_1), ("cup/r2", round_2)]
