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
       CASE WHEN appeal IS NULL THEN format('decision on appeal seq {}, which is no appeal.filed of {}', appeal_seq, stream)
            WHEN nth > 1 THEN format('a second decision on the appeal at seq {}: the committee''s decision is final (第十三条 三)', appeal_seq)
            ELSE format('decision {} on the appeal at seq {}: {} of {} votes for it, from {} members (a committee of at least {}, an odd number, deciding by majority)',
                        decision, appeal_seq, for_decision, committee, members, committee_min) END AS message
FROM (SELECT d.*, a.seq AS appeal, coalesce(r.committee_min, 3) AS committee_min,
             row_number() OVER (PARTITION BY d.stream, d.appeal_seq ORDER BY d.seq) AS nth
      FROM decisions d LEFT JOIN appeals a ON a.stream = d.stream AND a.seq = d.appeal_seq LEFT JOIN rules r ON r.stream = d.stream) AS decided
WHERE appeal IS NULL OR nth > 1 OR members <> committee OR committee < committee_min OR committee % 2 = 0 OR 2 * for_decision <= committee
ORDER BY stream, seq;
