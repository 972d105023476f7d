-- name: player_games
-- computes: every game of a player: seat, derived result and points, the claimed points, whether
--   they agree, the points the standings count and where they come from (derived, claimed or none:
--   see `results`), own move time, and the log entry of the game's start
-- implements: tournament.md §6 (the chain from primitive events to rank), checkers.md §4.7
SELECT s.round, s.table_no, s.game_no, s.stream, s.seat, g.termination, g.winners, s.points AS derived_points,
       c.points[s.seat + 1] AS claimed_points, c.points[s.seat + 1] IS NOT DISTINCT FROM s.points AS claim_agrees,
       r.points AS counted_points, r.source AS counted_from,
       (SELECT coalesce(sum(t.ms), 0) FROM timings t WHERE t.stream = s.stream AND t.seat = s.seat) AS own_move_ms,
       s.entry AS start_entry
FROM seats s JOIN games g USING (stream) LEFT JOIN claims c USING (stream)
JOIN results r ON r.stream = s.stream AND r.seat = s.seat
WHERE s.tournament = $tournament AND s.player = $player
ORDER BY s.round, s.game_no, s.table_no;
