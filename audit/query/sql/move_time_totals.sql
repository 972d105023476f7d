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
       format('{}用时合计不一致：SQL 合计 {}，引擎 {} {}: SQL sums {} of move time, the engine {}',  -- format() of a NULL is NULL
              coalesce('座位' || coalesce(s.seat, e.seat), '未指明座位者'), coalesce(s.ms || ' 毫秒', '无'), coalesce(e.ms || ' 毫秒', '无'),
              coalesce('seat ' || coalesce(s.seat, e.seat), 'no seat'), coalesce(s.ms || ' ms', 'none'), coalesce(e.ms || ' ms', 'none')) AS message
FROM sql_total s FULL JOIN engine_total e ON e.stream = s.stream AND e.seat = s.seat
WHERE s.ms IS DISTINCT FROM e.ms
  AND NOT EXISTS (SELECT 1 FROM findings f WHERE f.stream = coalesce(s.stream, e.stream) AND f.check_name = 'rules' AND f.severity = 'error')
ORDER BY 1, coalesce(s.seat, e.seat);
