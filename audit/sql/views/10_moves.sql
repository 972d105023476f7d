-- name: moves
-- computes: every action the engines accepted or flagged, with the facts the SQL checks use
-- implements: DESIGN.md replay/ (derived facts per move: contact, step and quiet counters, turns)
CREATE VIEW moves AS
SELECT stream, seq, ts, kind, seat, action,
       CAST(json_extract(facts, '$.contact') AS BOOLEAN) AS contact,
       CAST(json_extract(facts, '$.step') AS INTEGER) AS step,
       CAST(json_extract(facts, '$.quiet') AS INTEGER) AS quiet,
       CAST(json_extract(facts, '$.turn') AS INTEGER) AS turn,
       CAST(json_extract(facts, '$.out') AS INTEGER) AS pieces_out,
       facts
FROM steps
WHERE action IS NOT NULL;
