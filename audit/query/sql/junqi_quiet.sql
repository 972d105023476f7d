-- name: junqi_quiet
-- check: quiet
-- computes: the Junqi 50-step no-contact count re-derived with window functions over the move facts
--   (steps per ply; a timed-out turn is a quiet step when timeout_counts_as_step; a move with contact
--   resets it), beside the engine's counter; and every game where the count reached quiet_limit
--   without the engine declaring QUIET_LIMIT there, or the reverse
-- implements: junqi.md §8.2 (50-step no-contact draw; quiet_limit, quiet_trigger), 第九条
WITH g AS (  -- each game's settings, read once, and a number per game for the windows to sort on
    SELECT stream, dense_rank() OVER (ORDER BY stream) AS gid, derived_termination AS termination,  -- play, before rulings
           CAST(json_extract(profile, '$.quiet_limit') AS INTEGER) AS quiet_limit,
           json_extract_string(profile, '$.quiet_trigger') AS trigger_op,
           CAST(json_extract(profile, '$.timeout_counts_as_step') AS BOOLEAN) AS timeouts_count
    FROM games
    WHERE game = 'junqi' AND json_extract_string(profile, '$.step_unit') = 'ply'
      AND NOT CAST(json_extract(profile, '$.elimination_resets_quiet') AS BOOLEAN)
), m AS (  -- each counted step with its place in the game
    SELECT g.gid, st.seq, coalesce(st.contact, false) AS contact, st.quiet AS engine_quiet,
           row_number() OVER (PARTITION BY g.gid ORDER BY st.seq) AS n
    FROM steps st JOIN g USING (stream)
    WHERE (st.kind = 'junqi.moved' AND st.contact IS NOT NULL) OR (st.kind = 'game.timed_out' AND g.timeouts_count)
), counted AS (  -- quiet steps: the steps since the last contact (or since the start), this one included
    --   (n rises with seq, so the last contact's n is the last one so far: last_value, cheaper than max)
    SELECT gid, seq, engine_quiet,
           CASE WHEN contact THEN 0
                ELSE n - coalesce(last_value(CASE WHEN contact THEN n END IGNORE NULLS) OVER (PARTITION BY gid ORDER BY seq ROWS UNBOUNDED PRECEDING), 0)
           END AS sql_quiet
    FROM m
), reached AS (
    SELECT c.gid, min(c.seq) AS seq FROM counted c JOIN g USING (gid)
    WHERE c.sql_quiet > g.quiet_limit OR (g.trigger_op = '>=' AND c.sql_quiet = g.quiet_limit) GROUP BY c.gid
)
SELECT g.stream, c.seq, 'audit.Q01' AS code, '第九条' AS article,
       format('无接触计数不一致：此步后 SQL 计 {} 步，引擎计 {} 步 SQL counts {} quiet steps after this move, the engine {}',
              c.sql_quiet, c.engine_quiet, c.sql_quiet, c.engine_quiet) AS message
FROM counted c JOIN g USING (gid) WHERE c.engine_quiet IS NOT NULL AND c.sql_quiet <> c.engine_quiet
UNION ALL
SELECT g.stream, r.seq, 'audit.Q02', '第九条',
       format('无接触计数在第 {} 号事件达到上限，但{} the no-contact count reaches the limit at seq {}, but {}',
              r.seq, CASE WHEN g.termination IS NULL THEN '对局尚未结束' ELSE '对局已结束（' || coalesce(w.zh, '「' || lower(replace(g.termination, '_', ' ')) || '」') || '）' END, r.seq,
              CASE WHEN g.termination IS NULL THEN 'the game has not ended' ELSE 'the game ended (' || coalesce(w.en, lower(replace(g.termination, '_', ' '))) || ')' END)
FROM g JOIN reached r USING (gid) JOIN (SELECT gid, max(seq) AS last FROM counted GROUP BY gid) l USING (gid)
LEFT JOIN termination_words w ON w.name = g.termination
WHERE g.termination IS DISTINCT FROM 'QUIET_LIMIT' OR r.seq <> l.last
UNION ALL
SELECT g.stream, NULL, 'audit.Q02', '第九条',
       format('引擎判{}，但 SQL 的无接触计数从未达到上限 the engine ended the game ({}), SQL never reaches the limit',
              coalesce(w.zh, g.termination), coalesce(w.en, g.termination))
FROM g LEFT JOIN termination_words w ON w.name = g.termination
WHERE g.termination = 'QUIET_LIMIT' AND g.gid NOT IN (SELECT gid FROM reached)
  AND g.gid IN (SELECT gid FROM counted)
ORDER BY 1, 2, 3;
