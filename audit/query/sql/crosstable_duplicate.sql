-- name: crosstable_duplicate
-- computes: the crosstable of a duplicate tournament: each player's mean board rate r (%) in every
--   round, over the boards with a rate (a voided game's board has none for its players)
-- implements: tournament.md §2 (附录二: MP score-rate), §4 (rounds of the movement)
SELECT round, player, avg(r ORDER BY stream, seat) AS r, count(*) AS boards
FROM board_mp WHERE tournament = $tournament AND r IS NOT NULL
GROUP BY round, player ORDER BY player, round;
