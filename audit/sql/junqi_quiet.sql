-- name: junqi_quiet
-- check: quiet
-- computes: the Junqi 50-step no-contact count re-derived with window functions over the move facts
--   (steps per ply; a move with contact resets it), beside the engine's counter; and every game
--   where the count reached quiet_limit without the engine declaring QUIET_LIMIT there, or the reverse
-- implements: junqi.md §8.4 (50-step no-contact draw; quiet_limit, quiet_trigger), tournament.md §1
WITH m AS (
    SELECT mv.stream, mv.seq, mv.contact, mv.quiet AS engine_quiet,
           sum(CASE WHEN mv.contact THEN 1 ELSE 0 END) OVER w AS contacts,
           CAST(json_extract(g.profile, '$.quiet_limit') AS INTEGER) AS quiet_limit,
           json_extract_string(g.profile, '$.quiet_trigger') AS trigger_op,
           g.termination
    FROM moves mv JOIN games g USING (stream)
    WHERE g.game = 'junqi' AND mv.kind = 'junqi.moved' AND mv.contact IS NOT NULL
      AND json_extract_string(g.profile, '$.step_unit') = 'ply'
      AND NOT CAST(json_extract(g.profile, '$.elimination_resets_quiet') AS BOOLEAN)
    WINDOW w AS (PARTITION BY mv.stream ORDER BY mv.seq ROWS UNBOUNDED PRECEDING)
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
FROM counted WHERE sql_quiet IS DISTINCT FROM engine_quiet
UNION ALL
SELECT g.stream, r.seq, 'audit.Q02', '第九条',
       format('the no-contact count reaches the limit at seq {}, but the game ended {}', r.seq, g.termination)
FROM games g JOIN reached r USING (stream)
WHERE g.termination IS DISTINCT FROM 'QUIET_LIMIT'
   OR r.seq <> (SELECT max(seq) FROM counted c WHERE c.stream = g.stream)
UNION ALL
SELECT g.stream, NULL, 'audit.Q02', '第九条', 'the engine ended the game QUIET_LIMIT, SQL never reaches the limit'
FROM games g
WHERE g.game = 'junqi' AND g.termination = 'QUIET_LIMIT' AND g.stream NOT IN (SELECT stream FROM reached)
  AND g.stream IN (SELECT stream FROM m)
ORDER BY 1, 2;
