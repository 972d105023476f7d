-- name: timeouts
-- check: timeouts
-- computes: timeouts per player and game counted from game.timed_out events against the allowance:
--   checkers ends the game when a seat goes over its stage's allowance (4, 6 or 8). A Junqi seat is
--   out at its max_timeouts-th timeout (its partner may play on), so no seat can time out more often,
--   and a game that ends TIMEOUTS has a seat that reached the limit. Reports games that disagree
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
), per_game AS (
    SELECT stream, any_value(game) AS game, termination,
           coalesce(bool_or(timeouts > allowed), false) AS over,
           coalesce(bool_or(timeouts >= allowed), false) AS reached,
           list(seat || ' ' || player || ' ' || timeouts || '/' || coalesce(CAST(allowed AS VARCHAR), '∞') ORDER BY seat) AS tally
    FROM counted GROUP BY stream, termination
)
SELECT stream, NULL::BIGINT AS seq, 'audit.O01' AS code, CASE game WHEN 'junqi' THEN '第九条' ELSE '第四条' END AS article,
       format('超时次数与终局不符：超时（次数/允许）{}；对局已结束（{}） timeouts (count/allowed) {}; the game ended ({})',
              array_to_string(list_transform(tally, lambda t: '座位' || t), '、'), coalesce(w.zh, termination),
              array_to_string(list_transform(tally, lambda t: 'seat ' || t), ', '), coalesce(w.en, termination)) AS message
FROM per_game LEFT JOIN termination_words w ON w.name = per_game.termination
WHERE CASE game
        WHEN 'junqi' THEN over OR (termination = 'TIMEOUTS' AND NOT reached)
        ELSE over <> (termination = 'TIMEOUTS') END
ORDER BY stream;
