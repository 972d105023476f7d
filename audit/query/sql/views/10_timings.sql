-- name: timings
-- computes: every game.move_time claim beside the timestamp gap it should equal: from the start of
--   the mover's turn (the last event before the move other than a draw offer or answer, card,
--   disconnection or ruling, which happen while the clock runs) to the move itself. A table, built
--   once at load: the move-time checks, the move-time tie-breaks and every round's standings read it
-- implements: tournament.md §3 (move time re-derived from timing events, checked against timestamp gaps)
CREATE TABLE timings AS
WITH claimed AS (  -- each claim's body parsed once for both fields
    SELECT stream, seq, ts, seat, CAST(f[1] AS BIGINT) AS ms, CAST(f[2] AS BIGINT) AS move_seq
    FROM (SELECT stream, seq, ts, seat, json_extract(body, ['$.ms', '$.move_seq']) AS f
          FROM events WHERE kind = 'game.move_time')
), numbered AS (  -- a number per stream, so that the window below sorts integers, not stream names
    SELECT stream, row_number() OVER (ORDER BY stream) AS sid FROM (SELECT DISTINCT stream FROM events)
), clocked AS (
    SELECT sid, seq, ts - max(clock_ts) OVER (PARTITION BY sid ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS gap_ms
    FROM (SELECT n.sid, e.seq, e.ts,
                 CASE WHEN e.kind NOT IN ('game.draw_offered', 'game.draw_answered', 'game.penalty',
                                          'game.disconnected', 'game.ruling') THEN e.ts END AS clock_ts
          FROM events e JOIN numbered n USING (stream))
)
SELECT c.stream, c.seq, c.ts, c.seat, c.ms, c.move_seq, k.gap_ms
FROM claimed c JOIN numbered n USING (stream) LEFT JOIN clocked k ON k.sid = n.sid AND k.seq = c.move_seq;
