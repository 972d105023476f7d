-- name: results
-- computes: every seat of every game with the points the standings count: the engine's derived
--   points; where the engine derived no result or marked the game UNVERIFIED (a log that ends
--   without a result, a replay stopped at an illegal event), the points the software declared in
--   its last game.ended claim, flagged `unverified`; a game with neither keeps its seats with no
--   points, flagged too, so that no game ever leaves the standings unnoticed. `source` says where
--   the points come from: derived (the engine), claimed, or none. A table, built once at load:
--   every round's standings read it several times
-- implements: checkers.md §4.7 and §5.4a (the declared result stands for the standings, flagged);
--   tournament.md §6 (each game's derived result and points, and whether it matches the claim)
CREATE TABLE results AS
WITH judged AS (
    SELECT stream, game, termination IS NOT NULL AND termination <> 'UNVERIFIED' AS verified FROM games
)
SELECT s.stream, j.game, s.tournament, s.round, s.table_no, s.game_no, s.board, s.seat, s.player,
       CASE WHEN j.verified THEN s.points ELSE coalesce(c.points[s.seat + 1], s.points) END AS points,
       CASE WHEN NOT j.verified AND c.points[s.seat + 1] IS NOT NULL THEN 'claimed'
            WHEN s.points IS NOT NULL THEN 'derived' ELSE 'none' END AS source,
       NOT j.verified AS unverified
FROM seats s JOIN judged j USING (stream)
LEFT JOIN claims c ON c.stream = s.stream AND NOT j.verified;  -- a verified game never reads its claim
