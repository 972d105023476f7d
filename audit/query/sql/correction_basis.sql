-- name: correction_basis
-- check: corrections
-- computes: every correction of a finished game's result (a result_override recorded after the game's
--   game.ended claim) that rests on no upheld appeal of the game's tournament, and every ruling
--   whose `appeal` names no upheld decision on an appeal about that game
-- implements: Junqi 第十四条 (1) (the chief referee corrects results changed by an appeal, or a scoring
--   error: `score_correction`), 第十九条
SELECT r.stream, r.seq, 'audit.A04' AS code, '第十四条 (1)' AS article,
       CASE WHEN r.appeal_seq IS NULL
            THEN format('无申诉成立而改判：第 {} 号事件的裁决在对局结束后改变结果，却无成立的申诉（在 appeal 中指明决定） the {} ruling at seq {} changes the result after the game''s end without an upheld appeal (name the decision in `appeal`)',
                        r.seq, replace(r.ruling, '_', ' '), r.seq)
            WHEN d.seq IS NULL OR a.seq IS NULL
                 THEN format('裁决所依据的决定不存在：第 {} 号事件的裁决指明 {}#{}，它不是对本局申诉的决定 the {} ruling at seq {} names {}#{}, which is no decision on an appeal about this game',
                             r.seq, r.appeal_stream, r.appeal_seq, replace(r.ruling, '_', ' '), r.seq, r.appeal_stream, r.appeal_seq)
            ELSE format('裁决所依据的申诉未成立：第 {} 号事件的裁决执行 {}#{} 的决定，该决定为{} the {} ruling at seq {} carries out the decision at {}#{}, which is {}',
                        r.seq, r.appeal_stream, r.appeal_seq, coalesce(w.zh, d.decision),
                        replace(r.ruling, '_', ' '), r.seq, r.appeal_stream, r.appeal_seq, coalesce(w.en, d.decision)) END AS message
FROM rulings r
LEFT JOIN decisions d ON d.stream = r.appeal_stream AND d.seq = r.appeal_seq
LEFT JOIN appeals a ON a.stream = d.stream AND a.seq = d.appeal_seq AND a.game = r.stream
LEFT JOIN decision_words w ON w.name = d.decision
WHERE (r.appeal_seq IS NOT NULL AND (d.seq IS NULL OR a.seq IS NULL OR d.decision <> 'upheld'))
   OR (r.appeal_seq IS NULL AND r.ruling = 'result_override'
       AND r.seq > (SELECT c.seq FROM claims c WHERE c.stream = r.stream))
ORDER BY r.stream, r.seq;
