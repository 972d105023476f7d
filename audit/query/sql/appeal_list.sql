-- name: appeal_list
-- computes: every appeal with its game, grounds, filing time, appeal window, deadline, the
--   committee's decision and votes, and the ruling that carried an upheld decision out; `open` when
--   it awaits a decision or, upheld, its correction ($tournament NULL: every tournament). Only a
--   decision and a ruling signed by a registered arbiter of their role count; `ignored` lists the
--   others with the reason (they decide and correct nothing)
-- implements: Junqi 第十八–十九条, 第十四条 (1), 第十三条 三; DESIGN.md "nothing unsigned counts"
WITH ignored AS (
    SELECT a.stream, a.seq, list(format('{}#{} {} by {}: {}', x.stream, x.seq, x.what, coalesce(x.arbiter, 'nobody'),
                                        replace(x.signature, '_', ' ')) ORDER BY x.entry) AS ignored
    FROM appeals a JOIN (
        SELECT entry, stream, seq, 'decision' AS what, arbiter, signature, stream AS appeal_stream, appeal_seq, seq AS decision_seq
        FROM decisions WHERE signature <> 'valid'
        UNION ALL
        SELECT r.entry, r.stream, r.seq, r.ruling, r.arbiter, r.signature, d.stream, d.appeal_seq, d.seq
        FROM rulings r JOIN decisions d ON r.appeal_stream = d.stream AND r.appeal_seq = d.seq WHERE r.signature <> 'valid'
    ) x ON x.appeal_stream = a.stream AND x.appeal_seq = a.seq
    GROUP BY a.stream, a.seq
)
SELECT a.stream AS tournament, a.seq, a.player, a.game, a.ruling_seq, a.grounds, a.ts AS filed_ts,
       st.window_end_ts, a.ts <= st.window_end_ts AS in_time, a.deadline_ts,
       d.seq AS decision_seq, d.decision, d.for_decision, d.committee, d.ts AS decided_ts, d.arbiter, d.signature,
       r.stream AS ruling_stream, r.seq AS correction_seq, r.ruling AS correction,
       d.seq IS NULL OR (d.decision = 'upheld' AND r.seq IS NULL) AS open, coalesce(i.ignored, []) AS ignored
FROM appeals a
LEFT JOIN game_status st ON st.stream = a.game
LEFT JOIN decisions d ON d.stream = a.stream AND d.appeal_seq = a.seq AND d.signature = 'valid'
LEFT JOIN rulings r ON r.appeal_stream = d.stream AND r.appeal_seq = d.seq AND r.signature = 'valid'
LEFT JOIN ignored i ON i.stream = a.stream AND i.seq = a.seq
WHERE $tournament IS NULL OR a.stream = $tournament
QUALIFY row_number() OVER (PARTITION BY a.stream, a.seq ORDER BY d.seq, r.entry) = 1
ORDER BY a.stream, a.seq;
