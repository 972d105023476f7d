-- name: game_points
-- computes: every player's game points in every game of a tournament (Junqi 5/3/1 per alliance member,
--   the Paohuzi deal score, checkers 1/½/0), with the software's claimed points beside them
-- implements: tournament.md §1 (第十条, 附录一; checkers 第十八条(4); paohuzi.md §10)
SELECT s.round, s.table_no, s.game_no, s.board, s.stream, s.seat, s.player, g.termination,
       s.points AS derived_points, c.points[s.seat + 1] AS claimed_points
FROM seats s JOIN games g USING (stream) LEFT JOIN claims c USING (stream)
WHERE $tournament IS NULL OR s.tournament = $tournament
ORDER BY s.round, s.game_no, s.table_no, s.seat;
