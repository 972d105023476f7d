-- name: timings
-- computes: every game.move_time claim beside the timestamp gap it should equal: the time from the
--   event before the timed move to the move itself (the competition clock against the server clock)
-- implements: tournament.md §3 (move time re-derived from timing events, checked against timestamp gaps)
CREATE VIEW timings AS
WITH claimed AS (
    SELECT stream, seq, ts, seat,
           CAST(json_extract(body, '$.ms') AS BIGINT) AS ms,
           CAST(json_extract(body, '$.move_seq') AS BIGINT) AS move_seq
    FROM events WHERE kind = 'game.move_time'
), spaced AS (
    SELECT stream, seq, ts, ts - lag(ts) OVER (PARTITION BY stream ORDER BY seq) AS gap_ms FROM events
)
SELECT c.stream, c.seq, c.ts, c.seat, c.ms, c.move_seq, s.gap_ms
FROM claimed c LEFT JOIN spaced s ON s.stream = c.stream AND s.seq = c.move_seq;
