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
    WHERE s.tournament IS NOT NULL AND s.seat IS NOT NULL AND g.game IN ('junqi', 'paohuzi') AND s.points IS NOT NULL
), compared AS (  -- the closed form of §2: worse = participants below, equal = those level (itself included)
    SELECT *, count(*) OVER (PARTITION BY tournament, board, seat) AS compared_with,
           rank() OVER (PARTITION BY tournament, board, seat ORDER BY points) - 1 AS worse,
           count(*) OVER (PARTITION BY tournament, board, seat, points) AS equal
    FROM scored
)
SELECT tournament, round, board, seat, player, stream, table_no, points, compared_with AS n,
       2 * worse + equal - 1 AS mp,
       2 * (compared_with - 1) AS top,
       CASE WHEN compared_with > 1 THEN 100.0 * (2 * worse + equal - 1) / (2 * (compared_with - 1)) END AS r
FROM compared;
