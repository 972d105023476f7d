-- name: board_mp
-- computes: per board and seat position (同方位), each participant's comparison set size N, MP
--   (2 per worse score, 1 per equal score), top = 2(N−1) and r = MP / top × 100; a board played at
--   one table only has no r (reported, excluded). The comparison set is every table of the round
--   that played the board, or under mp_field = group only the tables of the same movement group
--   (`field`: the group's number, NULL for the whole round). Scores are those of `results`: a game
--   the engine could not verify counts with its declared points and is flagged `unverified`
-- implements: tournament.md §2 (附录二: MP score-rate; PARAM mp_field), checkers.md §4.7
CREATE VIEW board_mp AS
WITH fields AS (  -- the group a table belongs to, where the tournament compares within groups
    SELECT DISTINCT s.tournament, s.round, s.table_no,
           coalesce(s.group_no, (s.table_no - 1) // CAST(json_extract(t.rules, '$.group_tables') AS INTEGER) + 1) AS field
    FROM seatings s JOIN tournaments t USING (tournament)
    WHERE json_extract_string(t.rules, '$.mp_field') = 'group'
), scored AS (
    SELECT r.tournament, r.round, coalesce(r.board, concat('r', r.round, '-g', r.game_no)) AS board,
           r.seat, r.player, r.stream, r.table_no, r.points, r.unverified, f.field
    FROM results r
    LEFT JOIN fields f ON f.tournament = r.tournament AND f.round = r.round AND f.table_no = r.table_no
    WHERE r.tournament IS NOT NULL AND r.seat IS NOT NULL AND r.game IN ('junqi', 'paohuzi') AND r.points IS NOT NULL
), compared AS (  -- the closed form of §2: worse = participants below, equal = those level (itself included)
    SELECT *, count(*) OVER (PARTITION BY tournament, board, field, seat) AS compared_with,
           rank() OVER (PARTITION BY tournament, board, field, seat ORDER BY points) - 1 AS worse,
           count(*) OVER (PARTITION BY tournament, board, field, seat, points) AS equal
    FROM scored
)
SELECT tournament, round, board, field, seat, player, stream, table_no, points, unverified, compared_with AS n,
       2 * worse + equal - 1 AS mp,
       2 * (compared_with - 1) AS top,
       CASE WHEN compared_with > 1 THEN 100.0 * (2 * worse + equal - 1) / (2 * (compared_with - 1)) END AS r
FROM compared
ORDER BY tournament, round, board, field, seat, mp DESC, player, stream;  -- as `mp` lists them, one order for every reader
