-- name: leave_camp
-- check: leave-camp
-- computes: the checkers leave-camp deadlines re-derived from the turn facts: after its 20th, 25th and
--   30th turn a seat must have 5, 8 and 10 pieces out of its home camp (leave_camp_checks); the first
--   seat to miss one loses LEAVE_CAMP (leave_camp_penalty = loss). Reports games where the engine's
--   termination disagrees
-- implements: checkers.md §7 (第五条: leave-camp deadlines)
WITH turns AS (
    SELECT st.stream, st.seq, st.seat,
           st.turn, st.out AS pieces_out,
           g.profile, g.termination, g.winners
    FROM steps st JOIN games g USING (stream)
    WHERE g.game = 'checkers' AND st.kind IN ('checkers.moved', 'game.timed_out', 'game.skipped')
      AND json_extract_string(g.profile, '$.leave_camp_penalty') = 'loss'
      AND json_extract_string(g.profile, '$.leave_camp_check_time') = 'after_own_turn'
      AND st.turn IS NOT NULL
), deadlines AS (
    SELECT stream, CAST(d[1] AS INTEGER) AS turn, CAST(d[2] AS INTEGER) AS required
    FROM (SELECT DISTINCT stream, unnest(CAST(json_extract(profile, '$.leave_camp_checks') AS INTEGER[][])) AS d FROM turns)
), missed AS (
    SELECT t.stream, min(t.seq) AS seq, t.termination, any_value(t.winners) AS winners,
           arg_min(t.seat, t.seq) AS seat, arg_min(t.pieces_out || ' out after turn ' || t.turn || ', ' || d.required || ' due', t.seq) AS why
    FROM turns t JOIN deadlines d ON d.stream = t.stream AND d.turn = t.turn
    WHERE t.pieces_out < d.required
    GROUP BY t.stream, t.termination
)
SELECT stream, seq, 'audit.L01' AS code, '第五条' AS article,
       format('seat {} misses a leave-camp deadline ({}), but the game ended {}', seat, why, termination) AS message
FROM missed WHERE termination IS DISTINCT FROM 'LEAVE_CAMP'
UNION ALL
SELECT g.stream, NULL, 'audit.L01', '第五条', 'the game ended LEAVE_CAMP, but every seat met every deadline'
FROM games g
WHERE g.game = 'checkers' AND g.termination = 'LEAVE_CAMP' AND g.stream NOT IN (SELECT stream FROM missed)
ORDER BY 1, 2;
