-- name: arbiter_signed
-- check: arbiters
-- computes: every ruling and committee decision not signed by an arbiter the ledger knows: unsigned,
--   signed by a key no arbiter.registered event before it names, by a key of the wrong role (rulings:
--   referee or chief referee; decisions: committee), or with a signature that does not verify over
--   the stored event (audit/query/arbitration.py); such an event is ignored: the standings, the game's
--   status and the appeal list read only signed ones
-- implements: Junqi 第十三条 三, 第十四条; DESIGN.md (corrections are events that refer to what they correct)
SELECT stream, seq, 'audit.A06' AS code, '第十四条' AS article,
       format('{}（第 {} 号事件）{}（仲裁员 {}），不予采用 {} at seq {}: {} (arbiter {}); ignored: it changes no result and decides nothing',
              CASE kind WHEN 'game.ruling' THEN '裁决 game.ruling' ELSE '申诉决定 appeal.decided' END, seq,
              coalesce(w.zh, signature), coalesce(arbiter, '无'), kind, seq, coalesce(w.en, signature), coalesce(arbiter, 'none')) AS message
FROM (SELECT stream, seq, 'game.ruling' AS kind, signature, arbiter FROM rulings
      UNION ALL SELECT stream, seq, 'appeal.decided', signature, arbiter FROM decisions) AS signed
LEFT JOIN signature_words w ON w.name = signed.signature
WHERE signature <> 'valid'
ORDER BY stream, seq;
