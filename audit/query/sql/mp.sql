-- name: mp
-- computes: every board's MP and rate r per participant, with its comparison field and set size,
--   and whether its score is a declared one the engine could not verify
-- implements: tournament.md §2 (附录二)
SELECT round, board, field, seat, player, table_no, points, unverified, n, mp, top, round(r, 1) AS r
FROM board_mp WHERE tournament = $tournament ORDER BY round, board, field, seat, mp DESC, player;
