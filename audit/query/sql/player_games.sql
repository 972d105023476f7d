-- name: player_games
-- computes: every game of a player: seat, derived result and points (play), the claimed points,
--   whether they agree, the ruling that changed the result (`ruling`: its seq, kind, arbiter and the
--   appeal decision it carries out) and the points after it, the points the standings count and where
--   they come from (derived, ruling, claimed, void or none: see `results`), the game's `status`
--   (final, provisional, under_appeal, unresolved, void: see `game_status`), own move time, the
--   log entry of the game's start, and `ignored`: the rulings of the game that count for nothing
--   because no registered arbiter of their role signed them, each with the reason
-- implements: tournament.md §6 (the chain from primitive events to rank), checkers.md §4.7, Junqi 第十四条 (1);
--   Junqi 第十四条 and DESIGN.md "nothing unsigned counts" (a ruling not signed by a registered arbiter is ignored)
WITH ignored AS (
    SELECT stream, list(format('#{} {} by {}: ignored, {}', seq, ruling, coalesce(arbiter, 'nobody'),
                               CASE signature WHEN 'unsigned' THEN '未签名 unsigned'
                                              WHEN 'unknown_signer' THEN '签名者未登记 signer not registered in log.arbiters'
                                              WHEN 'wrong_role' THEN '签名者无此职权 signer''s role may not rule'
                                              ELSE '签名无效 signature does not verify' END) ORDER BY seq) AS ignored
    FROM rulings WHERE signature <> 'valid' GROUP BY stream
), named AS (  -- each game's last result-changing ruling, named
    SELECT g.stream, format('#{} {} by {}{}', r.seq, r.ruling, coalesce(r.arbiter, 'nobody (unsigned)'),
                            CASE WHEN r.appeal_seq IS NOT NULL THEN format(' carrying out {}#{} ({})', r.appeal_stream, r.appeal_seq,
                                                                            coalesce(d.decision, 'no such decision')) ELSE '' END) AS ruling
    FROM games g JOIN rulings r ON r.stream = g.stream AND r.seq = g.ruled_by
    LEFT JOIN decisions d ON d.stream = r.appeal_stream AND d.seq = r.appeal_seq
)
SELECT s.round, s.table_no, s.game_no, s.stream, s.seat, g.derived_termination AS termination, g.derived_winners AS winners,
       s.derived_points, c.points[s.seat + 1] AS claimed_points, c.points[s.seat + 1] IS NOT DISTINCT FROM s.derived_points AS claim_agrees,
       n.ruling, CASE WHEN n.ruling IS NOT NULL THEN s.points END AS ruled_points,
       r.points AS counted_points, r.source AS counted_from, r.status,
       (SELECT coalesce(sum(t.ms), 0) FROM timings t WHERE t.stream = s.stream AND t.seat = s.seat) AS own_move_ms,
       s.entry AS start_entry, coalesce(i.ignored, []) AS ignored
FROM seats s JOIN games g USING (stream) LEFT JOIN claims c USING (stream) LEFT JOIN ignored i USING (stream)
JOIN results r ON r.stream = s.stream AND r.seat = s.seat
LEFT JOIN named n ON n.stream = s.stream
WHERE s.tournament = $tournament AND s.player = $player
ORDER BY s.round, s.game_no, s.table_no;
