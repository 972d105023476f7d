-- name: move_time_totals
-- check: timing
-- computes: each seat's total move time per game summed in SQL from the timing events, beside the
--   total the engine's clock kept; a disagreement is a finding (games with rule findings are left to
--   the rules check: an engine stops its clock where the rules stop the game)
-- implements: tournament.md §3 (tie-break 3: total own move time, re-derived from timing events)
WITH sql_total AS (
    SELECT stream, seat, ms FROM seat_times
), engine_total AS (
    SELECT stream, seat, max(time_used) AS ms
    FROM steps WHERE kind = 'game.move_time' GROUP BY stream, seat
)
SELECT coalesce(s.stream, e.stream) AS stream, NULL::BIGINT AS seq, 'audit.T02' AS code, 'tournament.md §3' AS article,
       format('seat {}: SQL sums {} ms of move time, the engine {} ms', coalesce(s.seat, e.seat), coalesce(CAST(s.ms AS VARCHAR), 'no'), coalesce(CAST(e.ms AS VARCHAR), 'no')) AS message
FROM sql_total s FULL JOIN engine_total e ON e.stream = s.stream AND e.seat = s.seat
WHERE s.ms IS DISTINCT FROM e.ms
  AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.stream = coalesce(s.stream, e.stream) AND f.check_name = 'rules' AND f.severity = 'error')
ORDER BY 1, coalesce(s.seat, e.seat);
