-- name: deal_events
-- computes: what the cross-table deal check reads of every Paohuzi game played on a board, board by
--   board (a board's rows together, as `per_group` reads them), each game's in log order: its
--   start, the board's deck and commitment (created, revealed), the deal, the 亮张 and every card
--   drawn from the wall, as stored (of one tournament, or of all)
-- implements: paohuzi.md §2 and §11 (第五条: every table of a duplicate board gets the same deck)
SELECT g.tournament, g.board, e.stream, e.seq, e.body
FROM games g JOIN events e USING (stream)
WHERE g.game = 'paohuzi' AND g.board <> '' AND ($tournament IS NULL OR g.tournament = $tournament)
  AND e.kind IN ('game.started', 'paohuzi.board_created', 'paohuzi.board_revealed', 'paohuzi.dealt',
                 'paohuzi.liangzhang', 'paohuzi.drawn')
ORDER BY coalesce(g.tournament, ''), g.board, e.stream, e.seq;
