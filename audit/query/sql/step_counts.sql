-- name: step_counts
-- computes: per game: moves, the longest no-contact run (Junqi), the final step counter, termination
-- implements: junqi.md §8.2–§8.4; checkers.md §5 (turn counts)
SELECT g.stream, g.game, g.termination, count(mv.seq) AS moves,
       max(mv.step) AS last_step, max(mv.quiet) AS longest_quiet, max(mv.turn) AS last_turn
FROM games g LEFT JOIN moves mv USING (stream)
WHERE $tournament IS NULL OR g.tournament = $tournament
GROUP BY ALL ORDER BY g.stream;
