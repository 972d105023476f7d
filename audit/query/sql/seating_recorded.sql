-- name: seating_recorded
-- check: seating
-- computes: every seat of a tournament game whose player differs from the round's recorded seating
-- implements: tournament.md §4 (the seating each round should have had), 附录三
SELECT s.stream, 0::BIGINT AS seq, 'audit.W03' AS code, '附录三' AS article,
       format('第 {} 轮第 {} 桌座位{}与编排不符：对局中为 {}，本轮编排为 {} round {} table {} seat {}: the game seats {}, the round''s seating {}',
              s.round, s.table_no, s.seat, coalesce(s.player, '无人'), coalesce(r.player, '无人'),
              s.round, s.table_no, s.seat, coalesce(s.player, 'nobody'), coalesce(r.player, 'nobody')) AS message
FROM seats s
LEFT JOIN seatings r ON r.tournament = s.tournament AND r.round = s.round AND r.table_no = s.table_no AND r.seat = s.seat
WHERE s.tournament IS NOT NULL AND r.player IS DISTINCT FROM s.player
ORDER BY s.stream, s.seat;
