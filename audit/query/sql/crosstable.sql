-- name: crosstable
-- computes: for every two players of a tournament who met as opponents, the games they met in and
--   the points the first scored in those games (the points the standings count, see `results`).
--   Opponents: in Junqi the seats of the other alliance (partners sit opposite, seats of the same
--   parity); in Paohuzi and checkers every other seat of the game
-- implements: tournament.md §6 (the results behind the standings, player against player);
--   junqi.md §2.1 (alliances)
SELECT a.player, b.player AS opponent, count(*) AS games, sum(a.points) AS points
FROM results a JOIN results b ON a.stream = b.stream AND a.seat <> b.seat
WHERE a.tournament = $tournament AND (a.game <> 'junqi' OR (a.seat + b.seat) % 2 = 1)
GROUP BY a.player, b.player
ORDER BY a.player, b.player;
