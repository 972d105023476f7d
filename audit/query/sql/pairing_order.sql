-- name: pairing_order
-- computes: the order in which the Swiss pairing after round $through takes the players: by 大分,
--   then player number (registration order) under swiss_pairing_order = points_seed; by the
--   standings' whole tie-break chain (movement_rank) under tiebreak_chain
-- implements: checkers.md §12.2 (reference generator: points desc, seed asc), 第十八条(2) (players
--   sorted by their total points before each round)
WITH setting AS (
    SELECT coalesce(max(json_extract_string(rules, '$.swiss_pairing_order')), 'points_seed') AS pairing_order
    FROM tournaments WHERE tournament = $tournament
), seeds AS (
    SELECT player, row_number() OVER (ORDER BY entry, player) AS seed FROM players WHERE tournament = $tournament
)
SELECT p.player, p.seed, coalesce(s.big, 0) AS big, s.movement_rank
FROM seeds p LEFT JOIN swiss($tournament, coalesce($through, 1000000)) s USING (player), setting
ORDER BY CASE WHEN setting.pairing_order = 'tiebreak_chain' THEN s.movement_rank END NULLS LAST, big DESC, p.seed;
