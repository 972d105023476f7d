-- name: game_window
-- computes: a game's end (its last game.ended claim), the end of its appeal window and its status
--   (see `game_status`): what `appeal file` checks a filing time against
-- implements: Junqi 第十八条 2 (过期无效), checkers sheet item 11 (下轮开赛前); ArbitrationRules.appeal_window
SELECT stream, tournament, end_ts, window_end_ts, status FROM game_status WHERE stream = $game;
