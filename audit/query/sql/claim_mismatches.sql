-- name: claim_mismatches
-- check: claims
-- computes: every game.ended claim whose termination, winners or points differ from the result the
--   engine derived; games with rule findings are left to the rules check (their derived result
--   needs an arbiter's ruling first). The claim is held to the result of play, before any ruling
-- implements: tournament.md §1 (totals the software claims are claims to check), DESIGN.md audit/
WITH derived AS (  -- each game's derived points in seat order
    SELECT stream, list(derived_points ORDER BY seat) AS points, count(derived_points) AS counted FROM seats GROUP BY stream
), mismatched AS (
    SELECT c.stream, c.seq, c.termination, c.winners, c.points, g.derived_termination, g.derived_winners,
           CASE WHEN d.counted = 0 THEN NULL ELSE d.points END AS derived_points
    FROM claims c JOIN games g USING (stream) JOIN derived d USING (stream)
    WHERE NOT EXISTS (SELECT 1 FROM findings f WHERE f.stream = c.stream AND f.check_name = 'rules' AND f.severity = 'error')
      AND (g.derived_termination IS DISTINCT FROM c.termination
           OR list_sort(g.derived_winners) IS DISTINCT FROM list_sort(c.winners)
           OR d.points IS DISTINCT FROM c.points)
), said AS (  -- each side in words, Chinese and English: terminations from termination_words (a sender's own
    --   string quoted), seats as 座位N, a draw as 无（和局）, points per seat; format() of a NULL is NULL, so none has a word
    SELECT m.stream, m.seq,
           coalesce(wc.zh, '「' || lower(replace(m.termination, '_', ' ')) || '」', '无终局') AS claimed_zh,
           coalesce(wc.en, lower(replace(m.termination, '_', ' ')), 'no end') AS claimed_en,
           coalesce(wd.zh, '无终局（对局尚未结束）') AS derived_zh,
           coalesce(wd.en, 'no end (the game is not over)') AS derived_en,
           CASE WHEN array_length(m.winners) = 0 THEN '无（和局）' ELSE array_to_string(list_transform(m.winners, lambda s: '座位' || s), '、') END AS claimed_winners_zh,
           CASE WHEN array_length(m.winners) = 0 THEN 'none (a draw)' ELSE array_to_string(list_transform(m.winners, lambda s: 'seat ' || s), ', ') END AS claimed_winners_en,
           CASE WHEN array_length(m.derived_winners) = 0 THEN '无（和局）'
                ELSE array_to_string(list_transform(m.derived_winners, lambda s: '座位' || s), '、') END AS derived_winners_zh,
           CASE WHEN array_length(m.derived_winners) = 0 THEN 'none (a draw)'
                ELSE array_to_string(list_transform(m.derived_winners, lambda s: 'seat ' || s), ', ') END AS derived_winners_en,
           array_to_string(list_transform(m.points, lambda p: replace(regexp_replace(CAST(p AS VARCHAR), '\.0$', ''), '-', '−')), '、') AS claimed_points_zh,
           array_to_string(list_transform(m.points, lambda p: regexp_replace(CAST(p AS VARCHAR), '\.0$', '')), ', ') AS claimed_points_en,
           array_to_string(list_transform(m.derived_points, lambda p: replace(regexp_replace(CAST(p AS VARCHAR), '\.0$', ''), '-', '−')), '、') AS derived_points_zh,
           array_to_string(list_transform(m.derived_points, lambda p: regexp_replace(CAST(p AS VARCHAR), '\.0$', '')), ', ') AS derived_points_en
    FROM mismatched m
    LEFT JOIN termination_words wc ON wc.name = m.termination
    LEFT JOIN termination_words wd ON wd.name = m.derived_termination
)
SELECT stream, seq, 'audit.C01' AS code, NULL AS article,
       format('申报结果与推导不符：申报{}，胜方{}，各座位得分 {}；推导{}，胜方{}，各座位得分 {} claimed {}, winners {}, points by seat {}; derived {}, winners {}, points by seat {}',
              claimed_zh, coalesce(claimed_winners_zh, '无'), coalesce(claimed_points_zh, '无'),
              derived_zh, coalesce(derived_winners_zh, '无'), coalesce(derived_points_zh, '无'),
              claimed_en, coalesce(claimed_winners_en, 'none'), coalesce(claimed_points_en, 'none'),
              derived_en, coalesce(derived_winners_en, 'none'), coalesce(derived_points_en, 'none')) AS message
FROM said
ORDER BY stream;
