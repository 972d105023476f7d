-- name: junqi_step_limit
-- check: steps
-- computes: the total step count of every Junqi game counted in SQL over the move facts (timed-out
--   turns included when timeout_counts_as_step) against the profile's max_steps: a game that runs
--   past the limit, or ends MAX_STEPS short of it
-- implements: junqi.md §8.3 (total step limit, [PARAM] max_steps)
WITH counted AS (
    SELECT g.stream, g.derived_termination AS termination, CAST(json_extract(g.profile, '$.max_steps') AS INTEGER) AS max_steps,
           count(*) AS steps, max(st.seq) AS last_seq
    FROM games g JOIN steps st USING (stream)
    WHERE g.game = 'junqi' AND json_extract_string(g.profile, '$.step_unit') = 'ply'
      AND ((st.kind = 'junqi.moved' AND st.contact IS NOT NULL)
           OR (st.kind = 'game.timed_out' AND CAST(json_extract(g.profile, '$.timeout_counts_as_step') AS BOOLEAN)))
    GROUP BY ALL
)
SELECT stream, last_seq AS seq, 'audit.S01' AS code, '第九条' AS article,
       format('共走 {} 步，规定步数（max_steps）为 {}；{} {} steps played with max_steps {}; {}',
              steps, max_steps, CASE WHEN termination IS NULL THEN '对局尚未结束' ELSE '对局已结束（' || coalesce(w.zh, '「' || lower(replace(termination, '_', ' ')) || '」') || '）' END,
              steps, max_steps, CASE WHEN termination IS NULL THEN 'the game has not ended' ELSE 'the game ended (' || coalesce(w.en, lower(replace(termination, '_', ' '))) || ')' END) AS message
FROM counted LEFT JOIN termination_words w ON w.name = counted.termination
WHERE max_steps IS NOT NULL
  AND (steps > max_steps OR (termination = 'MAX_STEPS' AND steps < max_steps))
ORDER BY stream;
