-- name: mp
-- computes: every board's MP and rate r per participant, with the size of its comparison set
-- implements: tournament.md §2 (附录二)
SELECT round, board, seat, player, table_no, points, n, mp, top, round(r, 1) AS r
FROM board_mp WHERE tournament = $tournament ORDER BY round, board, seat, mp DESC, player;
