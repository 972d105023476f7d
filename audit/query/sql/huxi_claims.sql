-- name: huxi_claims
-- check: claims
-- computes: every Paohuzi 胡 whose claimed 胡息 or deal score (the winner's 2S) differs from the one
--   the engine derived from the cards (the maximising decomposition, the profile's 名堂 and §10)
-- implements: paohuzi.md §7, §8 (胡息), §10 (deal score); tournament.md §1
SELECT e.stream, e.seq, 'audit.C02' AS code, '第八条' AS article,
       format('申报胡息或得分与推导不符：申报 {} 胡息、得分 {}，推导 {} 胡息、得分 {} claimed {} 胡息 and score {}, derived {} 胡息 and score {}',
              coalesce(json_extract_string(e.body, '$.huxi'), '无'), coalesce(json_extract_string(e.body, '$.score'), '无'),
              CAST(json_extract(st.facts, '$.huxi') AS INTEGER), coalesce(CAST(2 * CAST(json_extract(st.facts, '$.score_s') AS INTEGER) AS VARCHAR), '无'),
              coalesce(json_extract_string(e.body, '$.huxi'), 'no'), coalesce(json_extract_string(e.body, '$.score'), 'no'),
              CAST(json_extract(st.facts, '$.huxi') AS INTEGER), coalesce(CAST(2 * CAST(json_extract(st.facts, '$.score_s') AS INTEGER) AS VARCHAR), 'none')) AS message
FROM events e JOIN steps st ON st.stream = e.stream AND st.seq = e.seq
WHERE e.kind = 'paohuzi.hu' AND st.kind = 'paohuzi.hu' AND json_extract(st.facts, '$.huxi') IS NOT NULL
  AND (CAST(json_extract(e.body, '$.huxi') AS INTEGER) IS DISTINCT FROM CAST(json_extract(st.facts, '$.huxi') AS INTEGER)
       OR (json_extract(e.body, '$.score') IS NOT NULL
           AND CAST(json_extract(e.body, '$.score') AS INTEGER) <> 2 * CAST(json_extract(st.facts, '$.score_s') AS INTEGER)))
ORDER BY e.stream, e.seq;
