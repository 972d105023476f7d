-- name: appeal_list
-- computes: every appeal with its game, grounds, filing time, appeal window, deadline, the
--   committee's decision and votes, and the ruling that carried an upheld decision out; `open` when
--   it awaits a decision or, upheld, its correction ($tournament NULL: every tournament)
-- implements: Junqi 第十八–十九条, 第十四条 (1)
SELECT a.stream AS tournament, a.seq, a.player, a.game, a.ruling_seq, a.grounds, a.ts AS filed_ts,
       st.window_end_ts, a.ts <= st.window_end_ts AS in_time, a.deadline_ts,
       d.seq AS decision_seq, d.decision, d.for_decision, d.committee, d.ts AS decided_ts, d.arbiter, d.signature,
       r.stream AS ruling_stream, r.seq AS correction_seq, r.ruling AS correction,
       d.seq IS NULL OR (d.decision = 'upheld' AND r.seq IS NULL) AS open
FROM appeals a
LEFT JOIN game_status st ON st.stream = a.game
LEFT JOIN decisions d ON d.stream = a.stream AND d.appeal_seq = a.seq
LEFT JOIN rulings r ON r.appeal_stream = d.stream AND r.appeal_seq = d.seq
WHERE $tournament IS NULL OR a.stream = $tournament
QUALIFY row_number() OVER (PARTITION BY a.stream, a.seq ORDER BY d.seq, r.entry) = 1
ORDER BY a.stream, a.seq;
