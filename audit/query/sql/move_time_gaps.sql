-- name: move_time_gaps
-- check: timing
-- computes: every claimed move time (game.move_time) that differs from the server's timestamp gap
--   before its move by more than the tournament's tolerance (default 1,000 ms)
-- implements: tournament.md §3 (move time checked against the gaps between event timestamps)
WITH tolerance AS (  -- each game's tolerance, read once from its tournament's rules
    SELECT g.stream, coalesce(CAST(json_extract(tr.rules, '$.move_time_tolerance_ms') AS BIGINT), 1000) AS ms
    FROM games g LEFT JOIN tournaments tr ON tr.tournament = g.tournament
), candidates AS (  -- the claims off by more than the smallest tolerance: a season's claims are never joined whole
    SELECT * FROM timings
    WHERE gap_ms IS NULL OR abs(ms - gap_ms) > least((SELECT min(ms) FROM tolerance), 1000)
)
SELECT t.stream, t.seq, 'audit.T01' AS code, 'tournament.md §3' AS article,
       CASE WHEN t.gap_ms IS NOT NULL  -- format() of a NULL gives NULL: a claim with nothing to check it against says so
            THEN format('座位{}申报第 {} 号事件那一手用时 {} 毫秒，时间戳为 {} 毫秒 seat {} claims {} ms for the move at seq {}, the timestamps give {} ms',
                        t.seat, t.move_seq, t.ms, t.gap_ms, t.seat, t.ms, t.move_seq, t.gap_ms)
            WHEN t.move_seq IS NULL
            THEN format('{}申报用时 {} 毫秒，但未指明哪一手：无从核对 {} claims {} ms but names no move: nothing to check it against',
                        coalesce('座位' || t.seat, '未指明座位者'), t.ms, coalesce('seat ' || t.seat, 'no seat'), t.ms)
            ELSE format('{}申报第 {} 号事件那一手用时 {} 毫秒，但本流没有该事件：无从核对 {} claims {} ms for the move at seq {}, which is not in the stream: nothing to check it against',
                        coalesce('座位' || t.seat, '未指明座位者'), t.move_seq, t.ms, coalesce('seat ' || t.seat, 'no seat'), t.ms, t.move_seq)
       END AS message
FROM candidates t
LEFT JOIN tolerance tol ON tol.stream = t.stream
WHERE t.gap_ms IS NULL OR abs(t.ms - t.gap_ms) > coalesce(tol.ms, 1000)
ORDER BY t.stream, t.seq;
