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
SELECT d.stream, d.seq, 'audit.A02' AS code, '第十九条 1' AS article,
       CASE WHEN a.seq IS NULL THEN format('decision on appeal seq {}, which is no appeal.filed of {}', d.appeal_seq, d.stream)
            WHEN row_number() OVER (PARTITION BY d.stream, d.appeal_seq ORDER BY d.seq) > 1
                 THEN format('a second decision on the appeal at seq {}: the committee''s decision is final (第十三条 三)', d.appeal_seq)
            ELSE format('decision {} on the appeal at seq {}: {} of {} votes for it, from {} members (a committee of at least {}, an odd number, deciding by majority)',
                        d.decision, d.appeal_seq, d.for_decision, d.committee, d.members, coalesce(r.committee_min, 3)) END AS message
FROM decisions d LEFT JOIN appeals a ON a.stream = d.stream AND a.seq = d.appeal_seq LEFT JOIN rules r ON r.stream = d.stream
QUALIFY a.seq IS NULL
     OR row_number() OVER (PARTITION BY d.stream, d.appeal_seq ORDER BY d.seq) > 1
     OR d.members <> d.committee OR d.committee < coalesce(r.committee_min, 3) OR d.committee % 2 = 0
     OR 2 * d.for_decision <= d.committee
ORDER BY d.stream, d.seq;
