-- name: seat_times
-- computes: each game seat's claimed move time: the sum of its game.move_time claims (a table,
--   built once at load from timings: the move-time totals check and every round's standings read it)
-- implements: tournament.md §3 (tie-break 3: total own move time, re-derived from timing events)
CREATE TABLE seat_times AS
SELECT stream, seat, sum(ms) AS ms FROM timings GROUP BY stream, seat;
