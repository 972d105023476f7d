-- name: player_seating
-- computes: where a player was seated each round, and with whom
-- implements: tournament.md §4 and §6 (the seating each round should have had)
SELECT a.round, a.table_no, a.seat, list(b.player ORDER BY b.seat) AS table_players, a.entry AS seating_entry
FROM seatings a JOIN seatings b ON a.tournament = b.tournament AND a.round = b.round AND a.table_no = b.table_no
WHERE a.tournament = $tournament AND a.player = $player
GROUP BY ALL ORDER BY a.round;
