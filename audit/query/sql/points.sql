-- name: points
-- check: points
-- computes: each seat's game points re-derived in SQL from the game's result and profile, beside the
--   engine's: Junqi 5/3/1 to each member of an alliance (a losing seat whose resignation the engine
--   accepted scores the profile's forfeit_points when set), checkers 1/½/0 (0 each when
--   both lose when the profile says so), Paohuzi the deal score from the hu facts (S = 囤 × 番 × base; winner +2S, each loser −S, or the
--   discarder pays both); every disagreement is a finding. Both sides are the result of play, before
--   any ruling (a ruling's points are its own: replay/rulings.py)
-- implements: tournament.md §1 (第十条, 附录一; checkers 第十八条(4)), paohuzi.md §10
WITH hu AS (
    SELECT stream, seat,
           CAST(json_extract(facts, '$.score_s') AS DOUBLE) AS s,
           CAST(json_extract(facts, '$.payer') AS INTEGER) AS payer
    FROM steps WHERE kind = 'paohuzi.hu' AND json_extract(facts, '$.score_s') IS NOT NULL
), derived AS (
    SELECT s.stream, s.seat, s.player, s.derived_points AS engine_points, g.game, g.derived_termination AS termination,
           CASE g.game
             WHEN 'junqi' THEN CASE
                 WHEN array_length(g.derived_winners) = 0 THEN CAST(json_extract(g.profile, '$.points.draw') AS DOUBLE)
                 WHEN list_contains(g.derived_winners, s.seat) THEN CAST(json_extract(g.profile, '$.points.win') AS DOUBLE)
                 WHEN json_extract_string(g.profile, '$.forfeit_points') IS NOT NULL AND EXISTS (
                     SELECT 1 FROM steps r WHERE r.stream = s.stream AND r.kind = 'game.resigned' AND r.seat = s.seat
                       AND json_extract(r.facts, '$.resigned') IS NOT NULL)
                   THEN CAST(json_extract(g.profile, '$.forfeit_points') AS DOUBLE)
                 ELSE CAST(json_extract(g.profile, '$.points.loss') AS DOUBLE) END
             WHEN 'checkers' THEN CASE
                 WHEN array_length(g.derived_winners) > 0 THEN CASE WHEN list_contains(g.derived_winners, s.seat) THEN 1.0 ELSE 0.0 END
                 WHEN g.derived_termination = 'DISSOLVED' AND json_extract_string(g.profile, '$.double_forfeit') = 'double_loss' THEN 0.0
                 WHEN g.derived_termination = 'LEAVE_CAMP' AND json_extract_string(g.profile, '$.both_fail_same_round') = 'double_loss' THEN 0.0
                 ELSE 0.5 END
             WHEN 'paohuzi' THEN CASE
                 WHEN g.derived_termination <> 'HU' THEN 0.0
                 WHEN list_contains(g.derived_winners, s.seat) THEN 2 * h.s
                 WHEN h.payer IS NULL THEN -h.s
                 WHEN h.payer = s.seat THEN -2 * h.s
                 ELSE 0.0 END
           END AS sql_points
    FROM seats s JOIN games g USING (stream)
    LEFT JOIN hu h ON h.stream = s.stream
    WHERE g.derived_termination IS NOT NULL AND g.derived_termination <> 'UNVERIFIED'  -- UNVERIFIED keeps the claim: nothing to derive
)
SELECT stream, NULL::BIGINT AS seq, 'audit.P01' AS code, 'tournament.md §1' AS article,
       format('座位{}（{}）得分不一致：SQL 推导 {}，{}引擎 {} seat {} ({}): SQL derives {} points, the {} engine {}',
              seat, player, coalesce(replace(regexp_replace(CAST(sql_points AS VARCHAR), '\.0$', ''), '-', '−') || ' 分', '无'),
              CASE game WHEN 'junqi' THEN '军棋' WHEN 'paohuzi' THEN '跑胡子' WHEN 'checkers' THEN '跳棋' ELSE game END,
              coalesce(replace(regexp_replace(CAST(engine_points AS VARCHAR), '\.0$', ''), '-', '−') || ' 分', '无'),
              seat, player, coalesce(regexp_replace(CAST(sql_points AS VARCHAR), '\.0$', ''), 'none'), game,
              coalesce(regexp_replace(CAST(engine_points AS VARCHAR), '\.0$', ''), 'none')) AS message
FROM derived
WHERE sql_points IS DISTINCT FROM engine_points
ORDER BY stream, seat;
