-- name: player_boards
-- computes: every board of a player: its score (flagged when the engine could not verify it), the
--   comparison set (who else sat in that position in the same field, with their scores), MP, top and r
-- implements: tournament.md §2 (附录二) and §6
SELECT a.round, a.board, a.field, a.seat, a.points, a.unverified, a.n, a.mp, a.top, round(a.r, 1) AS r,
       list(b.player || '=' || b.points ORDER BY b.points DESC, b.player) FILTER (WHERE b.player <> a.player) AS compared_with
FROM board_mp a JOIN board_mp b ON a.tournament = b.tournament AND a.board = b.board AND a.seat = b.seat
  AND a.field IS NOT DISTINCT FROM b.field
WHERE a.tournament = $tournament AND a.player = $player
GROUP BY ALL ORDER BY a.round, a.board;
