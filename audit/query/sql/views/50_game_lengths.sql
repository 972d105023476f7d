-- name: game_lengths
-- computes: every game's length, whatever the game: the actions its seats took (moves of checkers
--   and Junqi, discards, draws and melds of Paohuzi, as the engine replayed them) and the minutes
--   from game.started to its last event
-- implements: tournament.md §3 (move time and game length, re-derived from the events)
CREATE VIEW game_lengths AS
SELECT g.stream, g.game, g.tournament, g.round, g.table_no, g.game_no,
       coalesce(m.moves, 0) AS moves,
       round((g.ended_ts - g.started_ts) / 60000.0, 2) AS minutes,
       epoch_ms(g.started_ts) AS started_at, epoch_ms(g.ended_ts) AS ended_at
FROM games g
LEFT JOIN (SELECT stream, count(*) AS moves FROM steps WHERE action IS NOT NULL GROUP BY stream) m USING (stream)
ORDER BY g.tournament, g.round, g.table_no, g.game_no, g.stream;  -- one order for every reader
