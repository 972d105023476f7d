-- name: standings
-- computes: the duplicate ranking through round n (a table macro): R = mean board rate r, then
--   1. opponents' average R (each opponent once, or once per game met under opponents = per_game),
--   2. beaten opponents' average R (counted the same way), 3. total own move time (less ranks
--   higher), 4. own move time per game with the longest and shortest game dropped (less ranks
--   higher; with two games or fewer nothing is left, and trimmed_few_games says whether that is no
--   value or the mean of every game; `trimmed_basis` shows which); ties left after 4 are unresolved (加赛) and the movement falls
--   back on player number. `unverified` counts the player's games whose declared result stands in
--   for one the engine could not derive (see `results`); `status` is the least settled of the
--   player's games (unresolved, under_appeal, provisional, else final; see `game_status`) and
--   `void_games` counts the games a ruling voided (they leave the comparison; their opponents count
--   as met or not as TournamentRules.void_game says)
-- implements: tournament.md §3 (附录二 二; PARAMs opponents, trimmed_few_games, void_game) and §4 (附录三:
--   cumulative R between rounds)
CREATE MACRO standings(t, n) AS TABLE
WITH rules AS (  -- the tournament's settings, with the defaults of schemas/common.py TournamentRules
    SELECT coalesce(max(json_extract_string(rules, '$.opponents')), 'distinct') AS opponents,
           coalesce(max(json_extract_string(rules, '$.trimmed_few_games')), 'none') AS few_games,
           coalesce(max(json_extract_string(rules, '$.void_game')), 'met') AS void_game
    FROM tournaments WHERE tournament = t
), r AS (  -- averages are summed in a fixed order, so that float rounding never depends on the threads
    SELECT player, avg(r ORDER BY stream, seat) AS r_mean, count(*) AS boards
    FROM board_mp WHERE tournament = t AND round <= n AND r IS NOT NULL GROUP BY player
), played AS (
    SELECT player, count(DISTINCT stream) FILTER (WHERE unverified) AS unverified,
           count(DISTINCT stream) FILTER (WHERE status = 'void') AS void_games,
           CASE WHEN bool_or(status = 'unresolved') THEN 'unresolved' WHEN bool_or(status = 'under_appeal') THEN 'under_appeal'
                WHEN bool_or(status = 'provisional') THEN 'provisional' ELSE 'final' END AS status
    FROM results WHERE tournament = t AND round <= n GROUP BY player
), met AS (  -- each opponent with the games met and the games in which this player scored more; a
             -- voided game (no points) is a game met under void_game = met, none under unplayed
    SELECT a.player, b.player AS opponent, count(*) AS games, count(*) FILTER (WHERE a.points > b.points) AS beaten
    FROM results a JOIN results b ON a.stream = b.stream AND a.seat <> b.seat, rules
    WHERE a.tournament = t AND a.round <= n AND (a.game <> 'junqi' OR a.seat % 2 <> b.seat % 2)
      AND (a.source <> 'void' OR rules.void_game = 'met')
    GROUP BY a.player, b.player
), weighted AS (  -- how often each opponent counts: once (distinct), or once per game (per_game)
    SELECT m.player, m.opponent, r.r_mean,
           CASE WHEN rules.opponents = 'per_game' THEN m.games ELSE 1 END AS met_weight,
           CASE WHEN m.beaten = 0 THEN 0 WHEN rules.opponents = 'per_game' THEN m.beaten ELSE 1 END AS beaten_weight
    FROM met m JOIN r ON r.player = m.opponent, rules
), opp AS (
    SELECT player, sum(r_mean * met_weight ORDER BY opponent) / sum(met_weight) AS opp_r,
           sum(r_mean * beaten_weight ORDER BY opponent) / nullif(sum(beaten_weight), 0) AS beaten_r
    FROM weighted GROUP BY player
), per_game AS (
    SELECT s.player, s.stream, coalesce(sum(tm.ms), 0) AS own_ms
    FROM seats s LEFT JOIN seat_times tm ON tm.stream = s.stream AND tm.seat = s.seat
    WHERE s.tournament = t AND s.round <= n GROUP BY s.player, s.stream
), times AS (
    SELECT player, sum(own_ms) AS move_ms, count(*) AS games,
           CASE WHEN count(*) > 2 THEN (sum(own_ms) - max(own_ms) - min(own_ms)) / (count(*) - 2.0)
                WHEN any_value(rules.few_games) = 'all_games' THEN avg(own_ms) END AS trimmed_ms,
           CASE WHEN count(*) > 2 THEN format('{} of {} games', count(*) - 2, count(*))
                ELSE format('{} games: trimmed_few_games = {}', count(*), any_value(rules.few_games)) END AS trimmed_basis
    FROM per_game, rules GROUP BY player
), chain AS (
        -- rounded to 6 places so that float noise never separates equal averages; R is taken to 9
        -- places before it is shown with one, so that an exact half (56.25) rounds up, not on noise
    SELECT p.player, r.r_mean, round(round(r.r_mean, 9), 1) AS r_shown, r.boards, round(o.opp_r, 6) AS opp_r,
           round(o.beaten_r, 6) AS beaten_r, tm.move_ms, round(tm.trimmed_ms, 6) AS trimmed_ms, tm.trimmed_basis,
           tm.games, p.unverified, p.void_games, p.status
    FROM played p LEFT JOIN r USING (player) LEFT JOIN opp o USING (player) LEFT JOIN times tm USING (player)
)
SELECT rank() OVER w AS rank,
       count(*) OVER (PARTITION BY r_shown, opp_r, beaten_r, move_ms, trimmed_ms) > 1 AS unresolved,
       row_number() OVER (ORDER BY r_shown DESC NULLS LAST, opp_r DESC NULLS LAST, beaten_r DESC NULLS LAST,
                                   move_ms ASC NULLS LAST, trimmed_ms ASC NULLS LAST, player) AS movement_rank,
       *
FROM chain
WINDOW w AS (ORDER BY r_shown DESC NULLS LAST, opp_r DESC NULLS LAST, beaten_r DESC NULLS LAST,
                      move_ms ASC NULLS LAST, trimmed_ms ASC NULLS LAST);
