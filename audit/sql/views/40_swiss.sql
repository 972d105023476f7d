-- name: swiss
-- computes: checkers Swiss standings through round n (a table macro): 大分 (match points: more game
--   points in the round's match wins 1, equal ½; a bye, a table of one player, scores bye_points
--   and is neither a game nor a win: wins are games won over the board), 小分 = Buchholz
--   (opponents' final 大分; a bye adds nothing), 累进分 (sum of running totals, a bye's included),
--   direct encounter inside the group tied on those three when all of it has met (else the number
--   of games won), win rate over the games played, then Buchholz after the last round played − 1,
--   − 2 … 1. Games count with the points of `results`: a game the engine could not verify counts
--   with its declared result, and `unverified` counts such games of the player; a voided game
--   counts for nobody. A player's withdrawal (a `withdrawal` ruling in the tournament stream)
--   awards every match from its round on that was seated and not played to the opponent: 1 match
--   point, 0 to the withdrawn player, no game (第十二条). `status` is the least settled of the
--   player's games (see `game_status`)
-- implements: tournament.md §5 (第十八条), checkers.md §4.7, §12.1–§12.3, checkers 第十二条
CREATE MACRO swiss(t, n) AS TABLE
WITH game_pts AS (
    SELECT round, table_no, player, sum(points) AS pts, bool_and(status = 'void') AS voided,
           count(*) FILTER (WHERE points = 1.0) AS won, count(*) FILTER (WHERE points IS NOT NULL) AS played,
           count(*) FILTER (WHERE unverified) AS unverified,
           CASE WHEN bool_or(status = 'unresolved') THEN 3 WHEN bool_or(status = 'under_appeal') THEN 2
                WHEN bool_or(status = 'provisional') THEN 1 ELSE 0 END AS unsettled
    FROM results
    WHERE game = 'checkers' AND tournament = t AND round <= n
    GROUP BY ALL
), withdrawn AS (  -- 第十二条: from this round on, the player's matches not played go to the opponent
    SELECT player, min(from_round) AS from_round FROM rulings
    WHERE ruling = 'withdrawal' AND stream = t AND player IS NOT NULL GROUP BY player
), forfeits AS (  -- a table seated with two players, one of them withdrawn by then, where no game was played
    SELECT s.round, s.table_no, s.player, list_filter(list(o.player), lambda x: x <> s.player)[1] AS opponent
    FROM seatings s JOIN seatings o ON o.tournament = s.tournament AND o.round = s.round AND o.table_no = s.table_no
    WHERE s.tournament = t AND s.round <= n
      AND NOT EXISTS (SELECT 1 FROM results r WHERE r.tournament = t AND r.round = s.round AND r.table_no = s.table_no)
    GROUP BY s.round, s.table_no, s.player HAVING count(*) = 2
), awarded AS (
    SELECT f.round, f.player, f.opponent,
           CAST(CASE WHEN wp.player IS NOT NULL AND f.round >= wp.from_round THEN 0
                     WHEN wo.player IS NOT NULL AND f.round >= wo.from_round THEN 1 END AS DOUBLE) AS mp
    FROM forfeits f LEFT JOIN withdrawn wp ON wp.player = f.player LEFT JOIN withdrawn wo ON wo.player = f.opponent
), byes AS (  -- a table seated with one player: the bye (轮空) scores bye_points (checkers.md §12.1)
    SELECT s.round, any_value(s.player) AS player,
           CASE any_value(json_extract_string(tr.profile, '$.bye_points')) WHEN 'draw' THEN 0.5 WHEN 'loss' THEN 0.0 ELSE 1.0 END AS mp
    FROM seatings s JOIN tournaments tr USING (tournament)
    WHERE s.tournament = t AND s.round <= n AND tr.format = 'swiss'
    GROUP BY s.round, s.table_no HAVING count(*) = 1
), matches AS (
    SELECT a.round, a.player, b.player AS opponent, a.pts AS game_points, a.won, a.played, a.unverified,
           CAST(CASE WHEN a.pts > b.pts THEN 1 WHEN a.pts = b.pts THEN 0.5 ELSE 0 END AS DOUBLE) AS mp
    FROM game_pts a JOIN game_pts b ON a.round = b.round AND a.table_no = b.table_no AND a.player <> b.player
    WHERE NOT a.voided  -- a match whose every game was voided has no result
    UNION ALL
    SELECT round, player, NULL, 0, 0, 0, 0, mp FROM byes
    UNION ALL
    SELECT round, player, opponent, 0, 0, 0, 0, mp FROM awarded WHERE mp IS NOT NULL
), settled AS (
    SELECT player, CASE max(unsettled) WHEN 3 THEN 'unresolved' WHEN 2 THEN 'under_appeal' WHEN 1 THEN 'provisional'
                   ELSE 'final' END AS status
    FROM game_pts GROUP BY player
), running AS (
    SELECT round, player, sum(mp) OVER (PARTITION BY player ORDER BY round) AS total FROM matches
), totals AS (
    SELECT player, sum(mp) AS big, sum(won) AS wins, sum(played) AS games, count(*) AS rounds_played,
           sum(unverified) AS unverified, count(*) FILTER (WHERE played = 0 AND opponent IS NOT NULL) AS forfeits
    FROM matches GROUP BY player
), progressive AS (
    SELECT player, sum(total) AS ps FROM running GROUP BY player
), buchholz AS (
    SELECT m.player, coalesce(sum(o.big), 0) AS bh FROM matches m LEFT JOIN totals o ON o.player = m.opponent GROUP BY m.player
), bh_after AS (  -- Buchholz snapshot after round k: opponents of rounds 1..k, their totals after round k
    SELECT m.player, k.round AS k, coalesce(sum(r.total), 0) AS bh
    FROM (SELECT DISTINCT round FROM matches) k
    JOIN matches m ON m.round <= k.round
    LEFT JOIN running r ON r.player = m.opponent AND r.round = k.round
    GROUP BY m.player, k.round
), bh_prev AS (  -- §12.3: from the round before the last one played back to round 1, however large n is
    SELECT player, list(bh ORDER BY k DESC) FILTER (WHERE k < (SELECT max(round) FROM matches)) AS bh_prev
    FROM bh_after GROUP BY player
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
    FROM tied a JOIN matches m ON m.player = a.player JOIN tied b ON b.player = m.opponent AND b.tie_group = a.tie_group
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
