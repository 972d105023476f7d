-- name: swiss_standings
-- computes: the checkers Swiss standings after round $through (NULL: the last) with every tie-break column
-- implements: tournament.md §5 (第十八条), checkers.md §12.3
SELECT * FROM swiss($tournament, coalesce($through, 1000000)) ORDER BY movement_rank;
