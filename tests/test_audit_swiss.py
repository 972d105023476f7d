"""Checkers Swiss standings (tournament.md §5, checkers.md §12.4): the 6-player worked example, every column."""

from __future__ import annotations

from audit.query.projection import Projection
from tests.audit_support import add_game, database

# checkers.md §12.4: (round, first, second, first's points, second's points)
RESULTS = [
    (1, "A", "D", 1, 0), (1, "B", "E", 1, 0), (1, "C", "F", 1, 0),
    (2, "A", "B", 1, 0), (2, "C", "D", 0.5, 0.5), (2, "E", "F", 1, 0),
    (3, "A", "C", 1, 0), (3, "B", "F", 0.5, 0.5), (3, "E", "D", 0, 1),
    (4, "A", "E", 0.5, 0.5), (4, "B", "C", 0.5, 0.5), (4, "D", "F", 0, 1),
]

# rank, player, 大分, 累进分, 小分, wins, BH after R3 / R2 / R1
EXPECTED = [
    (1, "A", 3.5, 9.5, 7.0, 3, [4.5, 1.5, 0.0]),
    (2, "C", 2.0, 6.0, 8.5, 1, [5.0, 0.5, 0.0]),
    (3, "B", 2.0, 5.5, 8.5, 1, [4.5, 3.0, 0.0]),
    (4, "D", 1.5, 3.5, 8.5, 1, [5.5, 3.5, 1.0]),
    (5, "E", 1.5, 3.5, 8.5, 1, [3.5, 1.0, 1.0]),
    (6, "F", 1.5, 2.0, 7.0, 1, [4.0, 2.5, 1.0]),
]


def test_swiss_worked_example_every_column() -> None:
    proj = Projection()
    for n, (rnd, a, b, pa, pb) in enumerate(RESULTS):
        add_game(proj, "T", "checkers", rnd, n % 3 + 1, 1, [a, b], [pa, pb])
    rows = database(proj).run("swiss_standings", tournament="T", through=4)
    got = [(r["rank"], r["player"], r["big"], r["ps"], r["bh"], r["wins"], r["bh_prev"]) for r in rows]
    assert got == EXPECTED
    d, e = rows[3], rows[4]
    assert d["direct_encounter"] == 1.0 and e["direct_encounter"] == 0.0, "D beat E in round 3: direct encounter splits them"
    assert not any(r["unresolved"] for r in rows)
