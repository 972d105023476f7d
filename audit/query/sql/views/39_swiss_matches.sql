-- name: swiss_matches
-- computes: every checkers Swiss player-round through round n (a table macro): the opponent, the game
--   points and games won and counted in the match, and its match points (`mp`): more game points in
--   the round's match wins 1, equal ½ (`kind` match); a bye, a table of one player, scores bye_points
--   (`kind` bye); after a player's withdrawal (a `withdrawal` ruling in the tournament stream) a match
--   seated from its round on and not played gives the opponent 1 and the withdrawn player 0 (`kind`
--   forfeit: one game for each, won by the opponent, §12.3 "wins … including forfeit wins"); a match
--   whose every game a ruling voided scores 0 for both (`kind` void). `met` says whether the opponent
--   counts as met (Buchholz, direct encounter, no second pairing): yes for a match or a forfeit, no for
--   a bye, and for a void match as the tournament rules' `void_game` says (`met`, the default, or
--   `unplayed`). Games count with the points of `results`: a game the engine could not verify counts
--   with its declared result (`unverified`)
-- implements: tournament.md §5 (第十八条), checkers.md §4.7, §12.1, §12.3, checkers 第十二条 (未赛场次均判对手胜);
--   TournamentRules.void_game
CREATE MACRO swiss_matches(t, n) AS TABLE
WITH setting AS (  -- the default of schemas/common.py TournamentRules.void_game
    SELECT coalesce(max(json_extract_string(rules, '$.void_game')), 'met') AS void_game FROM tournaments WHERE tournament = t
), game_pts AS (
    SELECT round, table_no, player, sum(points) AS pts, bool_and(status = 'void') AS voided,
           count(*) FILTER (WHERE points = 1.0) AS won, count(*) FILTER (WHERE points IS NOT NULL) AS played,
           count(*) FILTER (WHERE unverified) AS unverified
    FROM results
    WHERE game = 'checkers' AND tournament = t AND round <= n
    GROUP BY ALL
), withdrawn AS (  -- 第十二条: from this round on, the player's matches not played go to the opponent
    SELECT player, min(from_round) AS from_round FROM rulings
    WHERE ruling = 'withdrawal' AND stream = t AND player IS NOT NULL AND signature = 'valid' GROUP BY player
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
    SELECT a.round, a.player, b.player AS opponent, coalesce(a.pts, 0) AS game_points, a.won, a.played, a.unverified,
           CAST(CASE WHEN a.voided THEN 0 WHEN a.pts > b.pts THEN 1 WHEN a.pts = b.pts THEN 0.5 ELSE 0 END AS DOUBLE) AS mp,
           CASE WHEN a.voided THEN 'void' ELSE 'match' END AS kind,
           NOT a.voided OR setting.void_game = 'met' AS met
    FROM game_pts a JOIN game_pts b ON a.round = b.round AND a.table_no = b.table_no AND a.player <> b.player, setting
    UNION ALL
    SELECT round, player, NULL, 0, 0, 0, 0, mp, 'bye', false FROM byes
    UNION ALL
    SELECT round, player, opponent, 0, CAST(mp AS BIGINT), 1, 0, mp, 'forfeit', true FROM awarded WHERE mp IS NOT NULL
)
SELECT * FROM matches;
