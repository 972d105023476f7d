-- name: appeal_majority
-- check: appeals
-- computes: every decision not taken by a valid majority: a committee smaller than committee_min or
--   of an even size, a member voting twice, fewer than a majority of the votes for the decision
--   given, or a decision on no appeal of the stream, or a second decision on one appeal (the first is final)
-- implements: Junqi 第十三条 三 (三人或以上的单数, 裁决为最终裁决), 第十九条 1 (少数服从多数);
--   ArbitrationRules committee_min
WITH rules AS (
    SELECT tournament AS stream, coalesce(CAST(json_extract(rules, '$.arbitration.committee_min') AS INTEGER), 3) AS committee_min
    FROM tournaments
)
SELECT stream, seq, 'audit.A02' AS code, '第十九条 1' AS article,
       CASE WHEN appeal IS NULL THEN format('决定所指的申诉不存在：{} 的第 {} 号事件不是申诉 appeal.filed decision on appeal seq {}, which is no appeal.filed of {}',
                                            stream, appeal_seq, appeal_seq, stream)
            WHEN nth > 1 THEN format('重复决定：第 {} 号事件的申诉已有决定，仲裁委员会的裁决为最终裁决（第十三条 三） a second decision on the appeal at seq {}: the committee''s decision is final (第十三条 三)',
                                     appeal_seq, appeal_seq)
            ELSE format('未以有效多数决定：对第 {} 号事件申诉的决定（{}）得 {} 票，共 {} 票、委员 {} 人（仲裁委员会须为不少于 {} 人的单数，少数服从多数） decision {} on the appeal at seq {}: {} of {} votes for it, from {} members (a committee of at least {}, an odd number, deciding by majority)',
                        appeal_seq, coalesce(w.zh, decision),
                        for_decision, committee, members, committee_min,
                        coalesce(w.en, decision), appeal_seq, for_decision, committee, members, committee_min) END AS message
FROM (SELECT d.*, a.seq AS appeal, coalesce(r.committee_min, 3) AS committee_min,
             row_number() OVER (PARTITION BY d.stream, d.appeal_seq ORDER BY d.seq) AS nth
      FROM decisions d LEFT JOIN appeals a ON a.stream = d.stream AND a.seq = d.appeal_seq LEFT JOIN rules r ON r.stream = d.stream) AS decided
LEFT JOIN decision_words w ON w.name = decided.decision
WHERE appeal IS NULL OR nth > 1 OR members <> committee OR committee < committee_min OR committee % 2 = 0 OR 2 * for_decision <= committee
ORDER BY stream, seq;
