-- name: move_time
-- computes: move time per player: games, own moves, total and mean own move time
-- implements: tournament.md §3 (tie-breaks 3 and 4)
SELECT s.tournament, s.player, count(DISTINCT s.stream) AS games, count(t.seq) AS timed_moves,
       coalesce(sum(t.ms), 0) AS move_ms, round(avg(t.ms), 1) AS mean_ms
FROM seats s LEFT JOIN timings t ON t.stream = s.stream AND t.seat = s.seat
WHERE $tournament IS NULL OR s.tournament = $tournament
GROUP BY ALL ORDER BY s.tournament, move_ms, s.player;
