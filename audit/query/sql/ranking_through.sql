-- name: ranking_through
-- computes: the movement ranking after round $through (cumulative R and the §3 chain, then player number;
--   $through NULL: after the last round)
-- implements: tournament.md §4 (附录三 五.1: players ranked by cumulative R between rounds)
SELECT * FROM standings($tournament, coalesce($through, 1000000)) ORDER BY movement_rank;
