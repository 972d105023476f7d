-- name: swiss
-- computes: checkers Swiss standings through round n (a table macro): 大分 (match points: more game
--   points in the round's match wins 1, equal ½; a bye, a table of one player, scores bye_points
--   and is neither a game nor a win), 小分 = Buchholz (final 大分 of the opponents met; a bye adds
--   nothing), 累进分 (the sum of the running totals after each round played in the event, a round
--   without points for the player, a bye's included, carrying the total on), direct encounter inside
--   the group tied on those three when all of it has met (else the number of games won, forfeit wins
--   included), win rate over the games counted (over the board, and a forfeit as one game), then
--   Buchholz after the last round played − 1, − 2 … 1, from every opponent's running total after
--   that round. The matches, byes, withdrawal forfeits and void matches, and which opponents count
--   as met, are those of `swiss_matches` (`forfeits` counts the forfeits). Games count with the
--   points of `results`: a game the engine could not verify counts with its declared result, and
--   `unverified` counts such games of the player; `status` is the least settled of the player's
--   games (see `game_status`)
-- implements: tournament.md §5 (第十八条), checkers.md §4.7, §12.1–§12.3, checkers 第十二条;
--   TournamentRules.void_game
CREATE MACRO swiss(t, n) AS TABLE
WITH matches AS (
    SELECT * FROM swiss_matches(t, n)
), settled AS (
    SELECT player, CASE WHEN bool_or(status = 'unresolved') THEN 'unresolved' WHEN bool_or(status = 'under_appeal') THEN 'under_appeal'
                        WHEN bool_or(status = 'provisional') THEN 'provisional' ELSE 'final' END AS status
    FROM results WHERE game = 'checkers' AND tournament = t AND round <= n GROUP BY player
), rounds AS (  -- every round of the event through n that has a result
    SELECT DISTINCT round FROM matches
), running AS (  -- each player's total after each round, carried over a round without a result for it
    SELECT k.round, p.player, coalesce(sum(m.mp), 0) AS total
    FROM rounds k CROSS JOIN (SELECT DISTINCT player FROM matches) p LEFT JOIN matches m ON m.player = p.player AND m.round <= k.round
    GROUP BY k.round, p.player
), totals AS (
    SELECT player, sum(mp) AS big, sum(won) AS wins, sum(played) AS games, count(*) AS rounds_played,
           sum(unverified) AS unverified, count(*) FILTER (WHERE kind = 'forfeit') AS forfeits
    FROM matches GROUP BY player
), progressive AS (
    SELECT player, sum(total) AS ps FROM running GROUP BY player
), buchholz AS (
    SELECT m.player, coalesce(sum(o.big), 0) AS bh FROM matches m LEFT JOIN totals o ON o.player = m.opponent AND m.met GROUP BY m.player
), bh_after AS (  -- Buchholz snapshot after round k: opponents met in rounds 1..k, their totals after round k
    SELECT m.player, k.round AS k, coalesce(sum(r.total), 0) AS bh
    FROM rounds k
    JOIN matches m ON m.round <= k.round
    LEFT JOIN running r ON r.player = m.opponent AND r.round = k.round AND m.met
    GROUP BY m.player, k.round
), bh_prev AS (  -- §12.3: from the round before the last one played back to round 1, however large n is
    SELECT player, list(bh ORDER BY k DESC) FILTER (WHERE k < last_round) AS bh_prev
    FROM bh_after, (SELECT max(round) AS last_round FROM matches) GROUP BY player
), base AS (
    SELECT t.player, t.big, b.bh, p.ps, t.wins, t.games, t.wins / nullif(t.games, 0) AS win_rate, coalesce(h.bh_prev, []) AS bh_prev,
           t.unverified, t.forfeits, coalesce(st.status, 'final') AS status
    FROM totals t JOIN buchholz b USING (player) JOIN progressive p USING (player) LEFT JOIN bh_prev h USING (player)
    LEFT JOIN settled st USING (player)
), tied AS (
    SELECT *, dense_rank() OVER (ORDER BY big DESC, bh DESC, ps DESC) AS tie_group,
           count(*) OVER (PARTITION BY big, bh, ps) AS tie_size
    FROM base
), encounters AS (  -- points scored against the other members of the tie group, and how many of them were met
    SELECT a.player, sum(m.game_points) AS de_points, count(DISTINCT m.opponent) AS met_in_group
    FROM tied a JOIN matches m ON m.player = a.player AND m.met JOIN tied b ON b.player = m.opponent AND b.tie_group = a.tie_group
    GROUP BY a.player
), complete AS (
    SELECT tie_group, bool_and(coalesce(e.met_in_group, 0) = tie_size - 1) AS all_met
    FROM tied LEFT JOIN encounters e USING (player) GROUP BY tie_group
)
SELECT rank() OVER w AS rank, row_number() OVER (ORDER BY big DESC, bh DESC, ps DESC, de_or_wins DESC, win_rate DESC, bh_prev DESC, player) AS movement_rank,
       count(*) OVER (PARTITION BY big, bh, ps, de_or_wins, win_rate, bh_prev) > 1 AS unresolved, *
FROM (
    SELECT tied.player, big, bh, ps,
           CASE WHEN tie_size > 1 AND c.all_met THEN coalesce(e.de_points, 0) END AS direct_encounter,
           wins, games, round(win_rate, 6) AS win_rate, bh_prev,
           CASE WHEN tie_size > 1 AND c.all_met THEN coalesce(e.de_points, 0) ELSE wins END AS de_or_wins,
           unverified, forfeits, status
    FROM tied LEFT JOIN encounters e USING (player) JOIN complete c USING (tie_group)
)
WINDOW w AS (ORDER BY big DESC, bh DESC, ps DESC, de_or_wins DESC, win_rate DESC, bh_prev DESC);
