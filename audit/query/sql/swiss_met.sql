-- name: swiss_met
-- computes: every pair of players of a Swiss event seated together through round $through, so that a
--   later pairing may not bring them together again, except a match whose every game a ruling voided
--   under the tournament rules' void_game = unplayed (they did not meet: see `swiss_matches`)
-- implements: tournament.md §5 (players never meet twice), checkers.md §12.2; TournamentRules.void_game
SELECT DISTINCT a.player, b.player AS opponent
FROM seatings a JOIN seatings b ON a.tournament = b.tournament AND a.round = b.round AND a.table_no = b.table_no AND a.player < b.player
WHERE a.tournament = $tournament AND a.round <= coalesce($through, 1000000)
  AND NOT EXISTS (SELECT 1 FROM swiss_matches($tournament, coalesce($through, 1000000)) m
                  WHERE m.round = a.round AND m.player = a.player AND m.kind = 'void' AND NOT m.met)
ORDER BY 1, 2;
