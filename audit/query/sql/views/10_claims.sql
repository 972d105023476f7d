-- name: claims
-- computes: the competition software's last game.ended claim of each game: its time, termination,
--   winners, points (a table, built once at load: the claims check, the counts and `results` read it, and
--   each read of a view would scan every event again)
-- implements: DESIGN.md "claims are events too"; tournament.md §1 (points are claims to check)
CREATE TABLE claims AS
SELECT stream, seq, ts,
       json_extract_string(body, '$.termination') AS termination,
       CAST(json_extract(body, '$.winners') AS INTEGER[]) AS winners,
       CAST(json_extract(body, '$.points') AS DOUBLE[]) AS points
FROM events
WHERE kind = 'game.ended'
QUALIFY row_number() OVER (PARTITION BY stream ORDER BY seq DESC) = 1;
