-- name: appeal_corrected
-- check: corrections
-- computes: every upheld appeal that no later ruling carries out (a ruling whose `appeal` names the decision)
-- implements: Junqi 第十四条 (1) (经过申诉改变的比赛的结果 … 裁判长有权修正比赛成绩, 并予以公布), 第十九条
SELECT d.stream, d.seq, 'audit.A05' AS code, '第十四条 (1)' AS article,
       format('申诉成立而未更正：{} 就 {} 的申诉于第 {} 号事件成立，没有裁决更正结果 the appeal by {} on {} was upheld at seq {}, and no ruling corrects the result',
              a.player, a.game, d.seq, a.player, a.game, d.seq) AS message
FROM decisions d JOIN appeals a ON a.stream = d.stream AND a.seq = d.appeal_seq
WHERE d.decision = 'upheld'
  AND NOT EXISTS (SELECT 1 FROM rulings r WHERE r.appeal_stream = d.stream AND r.appeal_seq = d.seq AND r.entry > d.entry)
ORDER BY d.stream, d.seq;
