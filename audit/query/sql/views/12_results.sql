-- name: results
-- computes: every seat of every game with the points the standings count: the engine's points after
--   the game's rulings (replay/rulings.py: an override, forfeit, penalty or score correction changes
--   them, a voided game has none and leaves the comparison); where the engine derived no result or
--   marked the game UNVERIFIED and no ruling settled it, the points the software declared in its
--   last game.ended claim, flagged `unverified`; a game with neither keeps its seats with no
--   points, flagged too, so that no game ever leaves the standings unnoticed. `source` says where
--   the points come from: derived (the engine), ruling, claimed, void or none; `status` and
--   `ruled_by` come from `game_status`. A table, built once at load: every round's standings read it
-- implements: checkers.md §4.7 and §5.4a (the declared result stands for the standings, flagged);
--   tournament.md §6 (each game's derived result and points, and whether it matches the claim);
--   Junqi 第十四条 (1) (results corrected by the chief referee's ruling)
CREATE TABLE results AS
WITH judged AS (
    SELECT stream, game, termination IS NOT NULL AND termination <> 'UNVERIFIED' AS verified, termination, ruled_by FROM games
)
SELECT s.stream, j.game, s.tournament, s.round, s.table_no, s.game_no, s.board, s.seat, s.player,
       CASE WHEN j.verified THEN s.points ELSE coalesce(c.points[s.seat + 1], s.points) END AS points,
       CASE WHEN j.termination IN ('VOID', 'REPLAY_ORDERED') THEN 'void'
            WHEN NOT j.verified AND c.points[s.seat + 1] IS NOT NULL THEN 'claimed'
            WHEN s.points IS NOT NULL AND j.ruled_by IS NOT NULL THEN 'ruling'
            WHEN s.points IS NOT NULL THEN 'derived' ELSE 'none' END AS source,
       NOT j.verified AS unverified, st.status, j.ruled_by
FROM seats s JOIN judged j USING (stream) JOIN game_status st USING (stream)
LEFT JOIN claims c ON c.stream = s.stream AND NOT j.verified;  -- a verified game never reads its claim
