-- name: moves
-- computes: every action the engines accepted or flagged, with the facts the SQL checks use
-- implements: DESIGN.md replay/ (derived facts per move: contact, step and quiet counters, turns)
CREATE VIEW moves AS
SELECT stream, seq, ts, kind, seat, action, contact, step, quiet, turn, out AS pieces_out, facts
FROM steps
WHERE action IS NOT NULL;
