-- name: crosstable_swiss
-- computes: the crosstable of a checkers Swiss tournament: each player's opponent and match points in
--   every round, with how the round was scored (match, bye, forfeit: see `swiss_matches`)
-- implements: tournament.md §5 (第十八条), checkers.md §12, checkers 第十二条
SELECT round, player, opponent, mp, kind, game_points FROM swiss_matches($tournament, 1000000) ORDER BY player, round;
