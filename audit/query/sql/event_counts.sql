-- name: event_counts
-- computes: how many items each certification check looks at: replayed events, claims, seats,
--   timing claims and seatings (of one tournament, or of the whole ledger)
-- implements: DESIGN.md audit/ (a table of checks with passed and failed counts)
WITH g AS (SELECT stream FROM games WHERE $tournament IS NULL OR tournament = $tournament)
SELECT (SELECT count(*) FROM steps WHERE stream IN (SELECT stream FROM g)) AS steps,
       (SELECT count(*) FROM claims WHERE stream IN (SELECT stream FROM g)) AS claims,
       (SELECT count(*) FROM seats WHERE stream IN (SELECT stream FROM g)) AS seats,
       (SELECT count(*) FROM timings WHERE stream IN (SELECT stream FROM g)) AS timings,
       (SELECT count(*) FROM seatings WHERE $tournament IS NULL OR tournament = $tournament) AS seatings;
