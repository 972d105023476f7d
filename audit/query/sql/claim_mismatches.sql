-- name: claim_mismatches
-- check: claims
-- computes: every game.ended claim whose termination, winners or points differ from the result the
--   engine derived; games with rule findings are left to the rules check (their derived result
--   needs an arbiter's ruling first). The claim is held to the result of play, before any ruling
-- implements: tournament.md §1 (totals the software claims are claims to check), DESIGN.md audit/
SELECT c.stream, c.seq, 'audit.C01' AS code, NULL AS article,
       format('claimed {} winners {} points {}, derived {} winners {} points {}',  -- format() of any NULL is NULL
              coalesce(c.termination, 'no end'), coalesce(CAST(c.winners AS VARCHAR), 'none'), coalesce(CAST(c.points AS VARCHAR), 'none'),
              coalesce(g.derived_termination, 'no end (the game is not over)'), coalesce(CAST(g.derived_winners AS VARCHAR), 'none'),
              CASE WHEN d.derived = 0 THEN 'none' ELSE CAST(d.points AS VARCHAR) END) AS message
FROM claims c
JOIN games g USING (stream)
JOIN (SELECT stream, list(derived_points ORDER BY seat) AS points, count(derived_points) AS derived FROM seats GROUP BY stream) d USING (stream)
WHERE NOT EXISTS (SELECT 1 FROM findings f WHERE f.stream = c.stream AND f.check_name = 'rules' AND f.severity = 'error')
  AND (g.derived_termination IS DISTINCT FROM c.termination
       OR list_sort(g.derived_winners) IS DISTINCT FROM list_sort(c.winners)
       OR d.points IS DISTINCT FROM c.points)
ORDER BY c.stream;
