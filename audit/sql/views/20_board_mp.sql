-- name: board_mp
-- computes: per board and seat position (同方位), each participant's comparison set size N, MP
--   (2 per worse score, 1 per equal score), top = 2(N−1) and r = MP / top × 100; a board played at
--   one table only has no r (reported, excluded)
-- implements: tournament.md §2 (附录二: MP score-rate)
CREATE VIEW board_mp AS
WITH scored AS (
    SELECT s.tournament, s.round, coalesce(s.board, concat('r', s.round, '-g', s.game_no)) AS board,
           s.seat, s.player, s.stream, s.table_no, s.points
    FROM seats s JOIN games g USING (stream)
    WHERE s.tournament IS NOT NULL AND g.game IN ('junqi', 'paohuzi') AND s.points IS NOT NULL
)
SELECT a.tournament, a.round, a.board, a.seat, a.player, a.stream, a.table_no, a.points,
       count(*) AS n,
       2 * count(*) FILTER (WHERE b.points < a.points) + count(*) FILTER (WHERE b.points = a.points) - 1 AS mp,
       2 * (count(*) - 1) AS top,
       CASE WHEN count(*) > 1 THEN
           100.0 * (2 * count(*) FILTER (WHERE b.points < a.points) + count(*) FILTER (WHERE b.points = a.points) - 1)
           / (2 * (count(*) - 1)) END AS r
FROM scored a JOIN scored b ON a.tournament = b.tournament AND a.board = b.board AND a.seat = b.seat
GROUP BY ALL;
