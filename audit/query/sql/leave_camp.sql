-- name: leave_camp
-- check: leave-camp
-- computes: the checkers leave-camp deadlines re-derived from the turn facts: after its 20th, 25th and
--   30th turn (turns count passes and timeouts, or only moves: turn_counter) a seat must have 5, 8 and
--   10 pieces out of its home camp (leave_camp_checks; with persistent_after_deadline at every later
--   turn too); the first seat to miss loses LEAVE_CAMP (leave_camp_penalty = loss, checked after the
--   seat's own turn). Reports games whose termination or winners disagree
-- implements: checkers.md §9 (第五条: leave-camp deadlines)
WITH judged AS (
    SELECT stream, profile, derived_termination AS termination, derived_winners AS winners,  -- play, before rulings
           json_extract_string(profile, '$.turn_counter') = 'moves_only' AS moves_only,
           CAST(json_extract(profile, '$.persistent_after_deadline') AS BOOLEAN) AS persistent
    FROM games
    WHERE game = 'checkers'
      AND json_extract_string(profile, '$.leave_camp_penalty') = 'loss'
      AND json_extract_string(profile, '$.leave_camp_check_time') = 'after_own_turn'
), turns AS (
    SELECT st.stream, st.seq, st.seat, st.kind, st.out AS pieces_out, j.persistent, j.termination, j.winners,
           CASE WHEN j.moves_only
                THEN count(*) FILTER (WHERE st.kind = 'checkers.moved') OVER (PARTITION BY st.stream, st.seat ORDER BY st.seq ROWS UNBOUNDED PRECEDING)
                ELSE st.turn END AS turn,
           j.moves_only
    FROM steps st JOIN judged j USING (stream)
    WHERE st.kind IN ('checkers.moved', 'game.timed_out', 'game.skipped') AND st.turn IS NOT NULL
), deadlines AS (
    SELECT stream, CAST(d[1] AS INTEGER) AS turn, CAST(d[2] AS INTEGER) AS required
    FROM (SELECT stream, unnest(CAST(json_extract(profile, '$.leave_camp_checks') AS INTEGER[][])) AS d FROM judged)
), due AS (  -- what each turn row must have out: the deadline of that turn, or with persistence the latest passed
    SELECT t.stream, t.seq, t.seat, t.turn, t.pieces_out, t.termination, t.winners, max(d.required) AS required
    FROM turns t JOIN deadlines d ON d.stream = t.stream
     AND (d.turn = t.turn OR (t.persistent AND d.turn < t.turn))
    WHERE NOT (t.moves_only AND t.kind <> 'checkers.moved')
    GROUP BY ALL
), missed AS (
    SELECT stream, arg_min(seat, seq) AS seat, min(seq) AS seq, any_value(termination) AS termination, any_value(winners) AS winners,
           arg_min('第 ' || turn || ' 回合后出营 ' || pieces_out || ' 子，应出 ' || required || ' 子', seq) AS why_zh,
           arg_min(pieces_out || ' out after turn ' || turn || ', ' || required || ' due', seq) AS why
    FROM due WHERE pieces_out < required GROUP BY stream
)
SELECT stream, seq, 'audit.L01' AS code, '第五条' AS article,
       CASE WHEN termination IS DISTINCT FROM 'LEAVE_CAMP'
            THEN format('座位{}未按期出营（{}），但{} seat {} misses a leave-camp deadline ({}), but {}',
                        seat, why_zh, CASE WHEN termination IS NULL THEN '对局尚未结束' ELSE '对局已结束（' || coalesce(w.zh, '「' || lower(replace(termination, '_', ' ')) || '」') || '）' END,
                        seat, why, CASE WHEN termination IS NULL THEN 'the game has not ended' ELSE 'the game ended (' || coalesce(w.en, lower(replace(termination, '_', ' '))) || ')' END)
            ELSE format('座位{}未按期出营（{}），但对局以{}结束，而它在胜方之中（{}） seat {} misses a leave-camp deadline ({}), but the game ends ({}) with it among the winners ({})',
                        seat, why_zh, w.zh, array_to_string(list_transform(winners, lambda s: '座位' || s), '、'),
                        seat, why, w.en, array_to_string(list_transform(winners, lambda s: 'seat ' || s), ', '))
       END AS message
FROM missed LEFT JOIN termination_words w ON w.name = missed.termination
WHERE termination IS DISTINCT FROM 'LEAVE_CAMP' OR list_contains(winners, seat)
UNION ALL
SELECT stream, NULL, 'audit.L01', '第五条',
       format('对局以{}结束，但每个座位都按期出营 the game ended ({}), but every seat met every deadline', w.zh, w.en)
FROM judged LEFT JOIN termination_words w ON w.name = judged.termination
WHERE termination = 'LEAVE_CAMP' AND stream NOT IN (SELECT stream FROM missed)
ORDER BY 1, 2;
