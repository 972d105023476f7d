-- name: expected_seating
-- computes: the seating a duplicate round should have: players ranked after the previous round
--   (cumulative R and the §3 chain, then player number), groups of group_tables tables, and snake
--   seating inside each group (rank k: group ⌊(k−1)/(P·N)⌋, table in group ⌊q/P⌋, seat q mod P,
--   reversed on every second table); P seats per table (4 Junqi, 3 Paohuzi). `k` is the player's
--   place in that order (0-based) and `tie_lo`…`tie_hi` the places of the players tied with it after
--   §3 criteria 1–4: the rules leave their order open (player number is only the default), so any
--   of those places is allowed
-- implements: tournament.md §4 (附录三 五.1: 瑞士移位法 and snake seating)
WITH params AS (
    SELECT t.tournament, CASE t.game WHEN 'junqi' THEN 4 ELSE 3 END AS p,
           coalesce(CAST(json_extract(t.rules, '$.group_tables') AS INTEGER),
                    (SELECT count(*) FROM players r WHERE r.tournament = t.tournament) // CASE t.game WHEN 'junqi' THEN 4 ELSE 3 END) AS n
    FROM tournaments t WHERE t.tournament = $tournament
), ranked AS (
    SELECT s.player, s.movement_rank - 1 AS k, p.p, p.n,
           min(s.movement_rank) OVER tie - 1 AS tie_lo, max(s.movement_rank) OVER tie - 1 AS tie_hi
    FROM standings($tournament, $round - 1) s, params p
    WINDOW tie AS (PARTITION BY s.r_shown, s.opp_r, s.beaten_r, s.move_ms, s.trimmed_ms)
)
SELECT $round AS round, (k // (p * n)) * n + (k % (p * n)) // p + 1 AS table_no,
       CASE WHEN ((k % (p * n)) // p) % 2 = 0 THEN (k % (p * n)) % p ELSE p - 1 - (k % (p * n)) % p END AS seat,
       player, k, tie_lo, tie_hi
FROM ranked ORDER BY table_no, seat;
