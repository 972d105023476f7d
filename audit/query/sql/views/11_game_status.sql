-- name: game_status
-- computes: every game's standing in the arbitration procedure, as of `now_ts`: the time asked
--   (`--as-of`), else the latest event of the competition (not of the log's own log.* streams): `void` (voided, or replay ordered, by a ruling), `unresolved` (no ruling, and the
--   engine derived no result, stopped at an illegal event, or derived one the software's claim
--   contradicts), `under_appeal` (an appeal filed and not decided, or upheld and not yet corrected),
--   `provisional` (the appeal window still open) or `final`; with the game's end (its last
--   game.ended claim), the end of its appeal window and the ruling its result rests on (a table)
--   The window closes appeal_window_*_h after the end, or, for checkers (ArbitrationRules.appeal_window
--   = game_book or next_round), when the next round's first game starts (a last round: the hours)
-- implements: Junqi 第十八条 2 (appeal window 24 h online / 3 h at a venue, ArbitrationRules),
--   checkers sheet 11 (下轮开赛前选手未向组委会提出异议, 默认选手认可本轮比赛成绩),
--   第十九条, 第十四条 (1); checkers.md §4.7, §5.4a (unverified results flagged, never dropped)
CREATE TABLE game_status AS
WITH clock AS (  -- as of the time asked (`as_of`), else the competition's latest event: the log's own streams
                -- (an arbiter's registration, a source's batch) are not the competition and move no status
    SELECT coalesce((SELECT max(ts) FROM as_of), (SELECT now_ts FROM competition_clock)) AS now_ts
),
ended AS (SELECT stream, ts AS end_ts FROM claims),
windows AS (
    SELECT tournament, game,
           coalesce(json_extract_string(rules, '$.arbitration.appeal_window'), 'game_book') AS basis,
           3600000 * CASE coalesce(json_extract_string(rules, '$.arbitration.event_type'), 'online')
                       WHEN 'venue' THEN coalesce(CAST(json_extract(rules, '$.arbitration.appeal_window_venue_h') AS BIGINT), 3)
                       ELSE coalesce(CAST(json_extract(rules, '$.arbitration.appeal_window_online_h') AS BIGINT), 24) END AS window_ms
    FROM tournaments
),
next_round AS (  -- when each round's next round started: its first game
    SELECT tournament, round - 1 AS round, min(started_ts) AS next_ts FROM games WHERE tournament IS NOT NULL GROUP BY ALL
),
disagree AS (  -- the software's claim against the result of play
    SELECT c.stream
    FROM claims c JOIN games g USING (stream)
    JOIN (SELECT stream, list(derived_points ORDER BY seat) AS points FROM seats GROUP BY stream) d USING (stream)
    WHERE g.derived_termination IS DISTINCT FROM c.termination OR list_sort(g.derived_winners) IS DISTINCT FROM list_sort(c.winners)
       OR d.points IS DISTINCT FROM c.points
),
pending AS (  -- appeals of a game without a signed decision, or upheld and without the signed ruling that carries it out
    SELECT a.game AS stream FROM appeals a LEFT JOIN decisions d ON d.stream = a.stream AND d.appeal_seq = a.seq AND d.signature = 'valid'
    WHERE d.seq IS NULL
       OR (d.decision = 'upheld' AND NOT EXISTS (SELECT 1 FROM rulings r WHERE r.appeal_stream = d.stream AND r.appeal_seq = d.seq
                                                                          AND r.signature = 'valid'))
)
SELECT g.stream, g.tournament, g.termination, g.ruled_by, coalesce(e.end_ts, g.ended_ts) AS end_ts,
       CASE WHEN (w.basis = 'next_round' OR (w.basis = 'game_book' AND w.game = 'checkers')) AND n.next_ts IS NOT NULL
            THEN greatest(n.next_ts, coalesce(e.end_ts, g.ended_ts))
            ELSE coalesce(e.end_ts, g.ended_ts) + coalesce(w.window_ms, 86400000) END AS window_end_ts, clock.now_ts,
       CASE WHEN g.termination IN ('VOID', 'REPLAY_ORDERED') THEN 'void'
            WHEN g.ruled_by IS NULL AND (g.termination IS NULL OR g.termination = 'UNVERIFIED'
                                         OR g.stream IN (SELECT stream FROM disagree)) THEN 'unresolved'
            WHEN g.stream IN (SELECT stream FROM pending) THEN 'under_appeal'
            WHEN clock.now_ts <= window_end_ts THEN 'provisional'
            ELSE 'final' END AS status
FROM games g CROSS JOIN clock LEFT JOIN ended e USING (stream) LEFT JOIN windows w USING (tournament)
LEFT JOIN next_round n ON n.tournament = g.tournament AND n.round = g.round;
