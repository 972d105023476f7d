-- name: appeal_window
-- check: appeals
-- computes: every decided appeal whose decision does not match its filing time: filed after the
--   game's appeal window closed (24 h after the end online, 3 h at a venue) yet decided on its merits,
--   or filed in time yet declared void as late; and every appeal naming no game of its tournament
-- implements: Junqi 第十八条 2 (过期无效), 第十六条 一; ArbitrationRules appeal_window_*_h, event_type
SELECT a.stream, a.seq, 'audit.A01' AS code, '第十八条 2' AS article,
       CASE WHEN st.stream IS NULL THEN format('申诉所指对局不属本赛事：{} 的申诉指明对局 {}，它不是 {} 的对局 appeal by {} names game {}, which is not a game of {}',
                                                a.player, a.game, a.stream, a.player, a.game, a.stream)
            WHEN a.ts > st.window_end_ts THEN format('逾期申诉未判无效：{} 就 {} 的申诉在申诉期结束 {} 分钟后才提出，却被作出决定（{}，第 {} 号事件），而非逾期无效 appeal by {} on {} was filed {} min after the appeal window closed, but was decided {} (seq {}), not void as late',
                                                     a.player, a.game, (a.ts - st.window_end_ts) // 60000,
                                                     coalesce(w.zh, d.decision), d.seq,
                                                     a.player, a.game, (a.ts - st.window_end_ts) // 60000, coalesce(w.en, d.decision), d.seq)
            ELSE format('按时申诉被判逾期：{} 就 {} 的申诉在申诉期结束前 {} 分钟按时提出，却被判为逾期无效（第 {} 号事件） appeal by {} on {} was filed in time ({} min before the window closed) but declared void as late (seq {})',
                        a.player, a.game, (st.window_end_ts - a.ts) // 60000, d.seq, a.player, a.game, (st.window_end_ts - a.ts) // 60000, d.seq) END AS message
FROM appeals a
LEFT JOIN game_status st ON st.stream = a.game AND st.tournament = a.stream
LEFT JOIN decisions d ON d.stream = a.stream AND d.appeal_seq = a.seq
LEFT JOIN decision_words w ON w.name = d.decision
WHERE st.stream IS NULL
   OR (d.seq IS NOT NULL AND (a.ts > st.window_end_ts) <> (d.decision = 'void_late'))
ORDER BY a.stream, a.seq;
