-- name: timeouts
-- check: timeouts
-- computes: timeouts per player and game counted from game.timed_out events against the allowance:
--   checkers ends the game when a seat goes over its stage's allowance (4, 6 or 8); a Junqi seat is
--   out at its max_timeouts-th timeout and its alliance loses TIMEOUTS when both members are out.
--   Reports a game whose termination disagrees
-- implements: checkers.md §6 (第四条: 4 / 6 / 8 timeouts by stage), junqi.md §7.3 and §8.1 (max_timeouts)
WITH counted AS (
    SELECT g.stream, g.game, g.termination, s.seat, s.player,
           (SELECT count(*) FROM events e WHERE e.stream = g.stream AND e.kind = 'game.timed_out' AND e.seat = s.seat) AS timeouts,
           CASE g.game
             WHEN 'checkers' THEN CAST(json_extract(g.profile, '$.timeouts_allowed.' || json_extract_string(g.profile, '$.stage')) AS INTEGER)
             WHEN 'junqi' THEN CAST(json_extract(g.profile, '$.max_timeouts') AS INTEGER)
           END AS allowed
    FROM games g JOIN seats s USING (stream)
    WHERE g.termination IS NOT NULL AND g.game IN ('checkers', 'junqi')
), seat_out AS (
    SELECT *, allowed IS NOT NULL AND (CASE game WHEN 'junqi' THEN timeouts >= allowed ELSE timeouts > allowed END) AS out
    FROM counted
), per_game AS (
    SELECT stream, termination,
           CASE any_value(game)
             WHEN 'junqi' THEN bool_and(out) FILTER (WHERE seat % 2 = 0) OR bool_and(out) FILTER (WHERE seat % 2 = 1)
             ELSE bool_or(out) END AS ends,
           list(player || ' ' || timeouts || '/' || coalesce(CAST(allowed AS VARCHAR), '∞') ORDER BY seat) AS tally
    FROM seat_out GROUP BY stream, termination
)
SELECT stream, NULL::BIGINT AS seq, 'audit.O01' AS code, '第四条' AS article,
       format('timeouts {}; the game ended {}', tally, termination) AS message
FROM per_game
WHERE coalesce(ends, false) <> (termination = 'TIMEOUTS')
ORDER BY stream;
