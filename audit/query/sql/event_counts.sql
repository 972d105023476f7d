-- name: event_counts
-- computes: how many items each certification check looks at: replayed events, claims, seats,
--   timing claims and seatings (of one tournament, or of the whole ledger)
-- implements: DESIGN.md audit/ (a table of checks with passed and failed counts)
-- Each table is counted per game first and only those counts (a row a game) are matched with the
-- games: DuckDB takes a kept table's dataset for a row or so and would build the match's hash
-- table over its every row instead (270 MB of a 4.4 M-entry season's `steps`, issue 32).
WITH g AS (SELECT stream FROM games WHERE $tournament IS NULL OR tournament = $tournament)
SELECT (SELECT coalesce(sum(n), 0) FROM (SELECT stream, count(*) AS n FROM steps GROUP BY stream) c WHERE c.stream IN (SELECT stream FROM g)) AS steps,
       (SELECT coalesce(sum(n), 0) FROM (SELECT stream, count(*) AS n FROM claims GROUP BY stream) c WHERE c.stream IN (SELECT stream FROM g)) AS claims,
       (SELECT coalesce(sum(n), 0) FROM (SELECT stream, count(*) AS n FROM seats GROUP BY stream) c WHERE c.stream IN (SELECT stream FROM g)) AS seats,
       (SELECT coalesce(sum(n), 0) FROM (SELECT stream, count(*) AS n FROM timings GROUP BY stream) c WHERE c.stream IN (SELECT stream FROM g)) AS timings,
       (SELECT count(*) FROM seatings WHERE $tournament IS NULL OR tournament = $tournament) AS seatings;
