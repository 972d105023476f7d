-- name: swiss_repeats
-- check: seating
-- computes: every pair of players seated against each other in more than one round of a Swiss event
--   (a round whose every game a ruling voided does not count under void_game = unplayed: they did not meet)
-- implements: tournament.md §5 (players never meet twice), checkers.md §12.2 (E_REPEAT_PAIRING); TournamentRules.void_game
WITH unmet AS (
    SELECT r.tournament, r.round, r.table_no FROM results r JOIN tournaments t USING (tournament)
    WHERE coalesce(json_extract_string(t.rules, '$.void_game'), 'met') = 'unplayed'
    GROUP BY r.tournament, r.round, r.table_no HAVING bool_and(r.source = 'void')
)
SELECT t.tournament AS stream, NULL::BIGINT AS seq, 'audit.W02' AS code, '第十八条' AS article,
       format('重复相遇：{} 与 {} 在第 {} 轮都相遇 {} and {} meet in rounds {}', a.player, b.player,
              array_to_string(list(DISTINCT a.round ORDER BY a.round), '、'), a.player, b.player, array_to_string(list(DISTINCT a.round ORDER BY a.round), ', ')) AS message
FROM seatings a JOIN seatings b ON a.tournament = b.tournament AND a.round = b.round AND a.table_no = b.table_no AND a.player < b.player
JOIN tournaments t ON t.tournament = a.tournament AND t.format = 'swiss'
WHERE NOT EXISTS (SELECT 1 FROM unmet u WHERE u.tournament = a.tournament AND u.round = a.round AND u.table_no = a.table_no)
GROUP BY t.tournament, a.player, b.player
HAVING count(DISTINCT a.round) > 1
ORDER BY 1, 5;
