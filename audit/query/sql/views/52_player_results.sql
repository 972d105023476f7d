-- name: player_results
-- computes: one row per player per game, of every game type: where it was played (tournament,
--   round, table), the seat, the result the engine derived (win, loss, draw; Junqi's alliance wins
--   together; NULL when the engine derived none), the points the standings count (from `results`,
--   `unverified` where the declared result stands in), the player's own actions and own claimed
--   move time, and the game's length
-- implements: tournament.md §1 (each game's result and points), §3 (own move time)
CREATE VIEW player_results AS
SELECT r.game, r.stream, r.tournament, r.round, r.table_no, r.game_no, r.player, r.seat,
       CASE WHEN g.winners IS NULL OR g.termination = 'UNVERIFIED' THEN NULL
            WHEN array_length(g.winners) = 0 THEN 'draw'
            WHEN list_contains(g.winners, r.seat) THEN 'win' ELSE 'loss' END AS result,
       r.points, r.unverified,
       coalesce(a.moves, 0) AS moves,
       coalesce(t.ms, 0) AS own_ms,
       l.moves AS game_moves, l.minutes AS game_minutes
FROM results r
JOIN games g USING (stream)
JOIN game_lengths l USING (stream)
LEFT JOIN (SELECT stream, seat, count(*) AS moves FROM steps WHERE action IS NOT NULL GROUP BY stream, seat) a
       ON a.stream = r.stream AND a.seat = r.seat
LEFT JOIN seat_times t ON t.stream = r.stream AND t.seat = r.seat
ORDER BY r.tournament, r.round, r.table_no, r.game_no, r.stream, r.seat;  -- one order for every reader
