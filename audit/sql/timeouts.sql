-- name: timeouts
-- check: timeouts
-- computes: timeouts per player and game counted from game.timed_out events against the allowance
--   (checkers: 4, 6 or 8 by stage; Junqi: max_timeouts): a game that went on after a seat exceeded
--   its allowance, or ended TIMEOUTS with no seat over it
-- implements: checkers.md §6 (第四条: 4 / 6 / 8 timeouts by stage), junqi.md §12 (max_timeouts)
WITH counted AS (
    SELECT g.stream, g.game, g.termination, g.winners, s.seat, s.player,
           (SELECT count(*) FROM events e WHERE e.stream = g.stream AND e.kind = 'game.timed_out' AND e.seat = s.seat) AS timeouts,
           CASE g.game
             WHEN 'checkers' THEN CAST(json_extract(g.profile, '$.timeouts_allowed.' || json_extract_string(g.profile, '$.stage')) AS INTEGER)
             WHEN 'junqi' THEN CAST(json_extract(g.profile, '$.max_timeouts') AS INTEGER)
           END AS allowed
    FROM games g JOIN seats s USING (stream)
    WHERE g.termination IS NOT NULL
), per_game AS (
    SELECT stream, termination, bool_or(allowed IS NOT NULL AND timeouts > allowed) AS exceeded,
           list(player || ' ' || timeouts || '/' || coalesce(CAST(allowed AS VARCHAR), '∞') ORDER BY seat) AS tally
    FROM counted GROUP BY stream, termination
)
SELECT stream, NULL::BIGINT AS seq, 'audit.O01' AS code, '第四条' AS article,
       format('timeouts {}; the game ended {}', tally, termination) AS message
FROM per_game
WHERE exceeded <> (termination = 'TIMEOUTS')
ORDER BY stream;
