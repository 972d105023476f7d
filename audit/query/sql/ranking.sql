-- name: ranking
-- computes: the final duplicate ranking of a tournament with every tie-break column
-- implements: tournament.md §3 (附录二 二)
SELECT * FROM standings($tournament, 1000000) ORDER BY movement_rank;
