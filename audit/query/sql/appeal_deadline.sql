-- name: appeal_deadline
-- check: appeals
-- computes: every appeal decided after its deadline (decision_days working or calendar days after
--   the filing, computed in audit/query/arbitration.py), or still undecided when the competition's
--   latest event (`competition_clock`, the "now" a game's appeal window is judged at too) is past the
--   deadline: the log's own log.* streams are not the competition, and the clock is one row built at
--   load, not a scan of every event (an incremental audit's `events` joins its bodies: 500 MB and
--   4.7 s of a 22 M-entry season's `--since`, issue 32)
-- implements: Junqi 第十九条 1 (须在2个工作日内给予答复); ArbitrationRules decision_days, decision_day_basis
SELECT a.stream, coalesce(d.seq, a.seq) AS seq, 'audit.A03' AS code, '第十九条 1' AS article,
       CASE WHEN d.seq IS NULL THEN format('申诉逾期未决：{} 就 {} 的申诉（第 {} 号事件）过答复期限 {} 小时仍未决定 appeal by {} on {} (seq {}) is undecided {} h after its deadline',
                                           a.player, a.game, a.seq, ((SELECT now_ts FROM competition_clock) - a.deadline_ts) // 3600000, a.player, a.game, a.seq,
                                           ((SELECT now_ts FROM competition_clock) - a.deadline_ts) // 3600000)
            ELSE format('申诉答复逾期：{} 就 {} 的申诉（第 {} 号事件）在答复期限后 {} 小时才决定 appeal by {} on {} (seq {}) was decided {} h after its deadline',
                        a.player, a.game, a.seq, (d.ts - a.deadline_ts) // 3600000, a.player, a.game, a.seq, (d.ts - a.deadline_ts) // 3600000) END AS message
FROM appeals a LEFT JOIN decisions d ON d.stream = a.stream AND d.appeal_seq = a.seq
WHERE (d.seq IS NULL AND (SELECT now_ts FROM competition_clock) > a.deadline_ts) OR d.ts > a.deadline_ts
QUALIFY row_number() OVER (PARTITION BY a.stream, a.seq ORDER BY d.seq) = 1
ORDER BY a.stream, a.seq;
