-- name: competition_clock
-- computes: the time of the competition's latest event, not of the log's own log.* streams (an
--   arbiter's registration, a source's batch are not the competition): the time every game's status
--   is judged at unless one is asked (`game_status`). A table of one row, built once at load; a kept
--   projection's extension takes the later of its kept time and the new entries' latest, instead of
--   scanning every event again (issue 32.2)
-- implements: Junqi 第十八条 2 (a game's appeal window is open until its end plus the window, judged now)
CREATE TABLE competition_clock AS
SELECT max(ts) AS now_ts FROM events WHERE stream NOT LIKE 'log.%';
