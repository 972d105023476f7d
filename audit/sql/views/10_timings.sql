-- name: timings
-- computes: every game.move_time claim beside the timestamp gap it should equal: from the start of
--   the mover's turn (the last event before the move other than a draw offer or answer, card,
--   disconnection or ruling, which happen while the clock runs) to the move itself
-- implements: tournament.md §3 (move time re-derived from timing events, checked against timestamp gaps)
CREATE VIEW timings AS
WITH claimed AS (
    SELECT stream, seq, ts, seat,
           CAST(json_extract(body, '$.ms') AS BIGINT) AS ms,
           CAST(json_extract(body, '$.move_seq') AS BIGINT) AS move_seq
    FROM events WHERE kind = 'game.move_time'
), clocked AS (
    SELECT stream, seq, ts,
           max(CASE WHEN kind NOT IN ('game.draw_offered', 'game.draw_answered', 'game.penalty',
                                      'game.disconnected', 'game.ruling') THEN ts END)
               OVER (PARTITION BY stream ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS turn_start
    FROM events
)
SELECT c.stream, c.seq, c.ts, c.seat, c.ms, c.move_seq, k.ts - k.turn_start AS gap_ms
FROM claimed c LEFT JOIN clocked k ON k.stream = c.stream AND k.seq = c.move_seq;
