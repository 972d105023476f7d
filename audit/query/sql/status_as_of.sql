-- name: status_as_of
-- computes: the time (ms) every game's status (final, provisional …) is judged at: the time asked
--   with --as-of, else the competition's latest event (see `game_status`)
-- implements: Junqi 第十八条 2 (a result is provisional while its appeal window is open)
SELECT max(now_ts) AS as_of_ts FROM game_status;
