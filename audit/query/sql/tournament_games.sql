-- name: tournament_games
-- computes: every game of a tournament, none left out: where it was played, its players by seat,
--   the derived termination, the points the standings count per seat (see `results`), whether a
--   declared result stands unverified, and how many findings its replay reported
-- implements: tournament.md §6 (every game behind the standings); checkers.md §4.7
SELECT r.stream, r.round, r.table_no, r.game_no, r.board, g.termination,
       list(r.player ORDER BY r.seat) AS players, list(r.points ORDER BY r.seat) AS points,
       bool_or(r.unverified) AS unverified, coalesce(any_value(f.findings), 0) AS findings
FROM results r JOIN games g USING (stream)
LEFT JOIN (SELECT stream, count(*) AS findings FROM findings GROUP BY stream) f USING (stream)
WHERE r.tournament = $tournament
GROUP BY r.stream, r.round, r.table_no, r.game_no, r.board, g.termination
ORDER BY r.round, r.table_no, r.game_no, r.stream;
