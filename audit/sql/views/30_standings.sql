-- name: standings
-- computes: the duplicate ranking through round n (a table macro): R = mean board rate r, then
--   1. opponents' average R, 2. beaten opponents' average R, 3. total own move time (less ranks
--   higher), 4. own move time per game with the longest and shortest game dropped (less ranks
--   higher); ties left after 4 are unresolved (加赛) and the movement falls back on player number
-- implements: tournament.md §3 (附录二 二) and §4 (附录三: cumulative R between rounds)
CREATE MACRO standings(t, n) AS TABLE
WITH r AS (  -- averages are summed in a fixed order, so that float rounding never depends on the threads
    SELECT player, avg(r ORDER BY stream, seat) AS r_mean, count(*) AS boards
    FROM board_mp WHERE tournament = t AND round <= n AND r IS NOT NULL GROUP BY player
), players_in AS (
    SELECT DISTINCT s.player FROM seats s WHERE s.tournament = t AND s.round <= n
), met AS (
    SELECT a.player, b.player AS opponent, a.points > b.points AS beaten
    FROM seats a JOIN seats b ON a.stream = b.stream AND a.seat <> b.seat
    JOIN games g ON g.stream = a.stream
    WHERE a.tournament = t AND a.round <= n AND (g.game <> 'junqi' OR a.seat % 2 <> b.seat % 2)
), opp AS (
    SELECT m.player, avg(r.r_mean ORDER BY m.opponent) AS opp_r
    FROM (SELECT DISTINCT player, opponent FROM met) m JOIN r ON r.player = m.opponent GROUP BY m.player
), beaten AS (
    SELECT m.player, avg(r.r_mean ORDER BY m.opponent) AS beaten_r
    FROM (SELECT DISTINCT player, opponent FROM met WHERE beaten) m JOIN r ON r.player = m.opponent GROUP BY m.player
), per_game AS (
    SELECT s.player, s.stream, coalesce(sum(tm.ms), 0) AS own_ms
    FROM seats s LEFT JOIN seat_times tm ON tm.stream = s.stream AND tm.seat = s.seat
    WHERE s.tournament = t AND s.round <= n GROUP BY s.player, s.stream
), times AS (
    SELECT player, sum(own_ms) AS move_ms, count(*) AS games,
           CASE WHEN count(*) > 2 THEN (sum(own_ms) - max(own_ms) - min(own_ms)) / (count(*) - 2.0)
                ELSE avg(own_ms) END AS trimmed_ms
    FROM per_game GROUP BY player
), chain AS (
        -- rounded to 6 places so that float noise never separates equal averages; R is taken to 9
        -- places before it is shown with one, so that an exact half (56.25) rounds up, not on noise
    SELECT p.player, r.r_mean, round(round(r.r_mean, 9), 1) AS r_shown, r.boards, round(o.opp_r, 6) AS opp_r,
           round(b.beaten_r, 6) AS beaten_r, tm.move_ms, round(tm.trimmed_ms, 6) AS trimmed_ms, tm.games
    FROM players_in p LEFT JOIN r USING (player) LEFT JOIN opp o USING (player)
    LEFT JOIN beaten b USING (player) LEFT JOIN times tm USING (player)
)
SELECT rank() OVER w AS rank,
       count(*) OVER (PARTITION BY r_shown, opp_r, beaten_r, move_ms, trimmed_ms) > 1 AS unresolved,
       row_number() OVER (ORDER BY r_shown DESC NULLS LAST, opp_r DESC NULLS LAST, beaten_r DESC NULLS LAST,
                                   move_ms ASC NULLS LAST, trimmed_ms ASC NULLS LAST, player) AS movement_rank,
       *
FROM chain
WINDOW w AS (ORDER BY r_shown DESC NULLS LAST, opp_r DESC NULLS LAST, beaten_r DESC NULLS LAST,
                      move_ms ASC NULLS LAST, trimmed_ms ASC NULLS LAST);
