-- name: junqi_quiet
-- check: quiet
-- computes: the Junqi 50-step no-contact count re-derived with window functions over the move facts
--   (steps per ply; a timed-out turn is a quiet step when timeout_counts_as_step; a move with contact
--   resets it), beside the engine's counter; and every game where the count reached quiet_limit
--   without the engine declaring QUIET_LIMIT there, or the reverse
-- implements: junqi.md §8.2 (50-step no-contact draw; quiet_limit, quiet_trigger), 第九条
WITH g AS (  -- each game's settings, read once
    SELECT stream, termination,
           CAST(json_extract(profile, '$.quiet_limit') AS INTEGER) AS quiet_limit,
           json_extract_string(profile, '$.quiet_trigger') AS trigger_op,
           CAST(json_extract(profile, '$.timeout_counts_as_step') AS BOOLEAN) AS timeouts_count
    FROM games
    WHERE game = 'junqi' AND json_extract_string(profile, '$.step_unit') = 'ply'
      AND NOT CAST(json_extract(profile, '$.elimination_resets_quiet') AS BOOLEAN)
), m AS (
    SELECT st.stream, st.seq, coalesce(st.contact, false) AS contact, st.quiet AS engine_quiet,
           sum(CASE WHEN st.contact THEN 1 ELSE 0 END) OVER w AS contacts,
           g.quiet_limit, g.trigger_op, g.termination
    FROM steps st JOIN g USING (stream)
    WHERE (st.kind = 'junqi.moved' AND st.contact IS NOT NULL) OR (st.kind = 'game.timed_out' AND g.timeouts_count)
    WINDOW w AS (PARTITION BY st.stream ORDER BY st.seq ROWS UNBOUNDED PRECEDING)
), counted AS (
    SELECT *, CASE WHEN contact THEN 0
                   ELSE row_number() OVER (PARTITION BY stream, contacts ORDER BY seq) - (CASE WHEN contacts > 0 THEN 1 ELSE 0 END)
              END AS sql_quiet
    FROM m
), reached AS (
    SELECT stream, min(seq) AS seq FROM counted
    WHERE sql_quiet > quiet_limit OR (trigger_op = '>=' AND sql_quiet = quiet_limit) GROUP BY stream
)
SELECT stream, seq, 'audit.Q01' AS code, '第九条' AS article,
       format('SQL counts {} quiet steps after this move, the engine {}', sql_quiet, engine_quiet) AS message
FROM counted WHERE engine_quiet IS NOT NULL AND sql_quiet <> engine_quiet
UNION ALL
SELECT g.stream, r.seq, 'audit.Q02', '第九条',
       format('the no-contact count reaches the limit at seq {}, but the game ended {}', r.seq, g.termination)
FROM g JOIN reached r USING (stream) JOIN (SELECT stream, max(seq) AS last FROM counted GROUP BY stream) l USING (stream)
WHERE g.termination IS DISTINCT FROM 'QUIET_LIMIT' OR r.seq <> l.last
UNION ALL
SELECT g.stream, NULL, 'audit.Q02', '第九条', 'the engine ended the game QUIET_LIMIT, SQL never reaches the limit'
FROM g
WHERE g.termination = 'QUIET_LIMIT' AND g.stream NOT IN (SELECT stream FROM reached)
  AND g.stream IN (SELECT stream FROM m)
ORDER BY 1, 2;
