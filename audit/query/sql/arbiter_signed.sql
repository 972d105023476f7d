-- name: arbiter_signed
-- check: arbiters
-- computes: every ruling and committee decision not signed by an arbiter the ledger knows: unsigned,
--   signed by a key no arbiter.registered event before it names, by a key of the wrong role (rulings:
--   referee or chief referee; decisions: committee), or with a signature that does not verify over
--   the stored event (audit/query/arbitration.py); such an event is ignored: the standings, the game's
--   status and the appeal list read only signed ones
-- implements: Junqi 第十三条 三, 第十四条; DESIGN.md (corrections are events that refer to what they correct)
SELECT stream, seq, 'audit.A06' AS code, '第十四条' AS article,
       format('{} at seq {}: {} (arbiter {}); 不予采用 ignored: it changes no result and decides nothing', kind, seq,
              replace(signature, '_', ' '), coalesce(arbiter, 'none')) AS message
FROM (SELECT stream, seq, 'game.ruling' AS kind, signature, arbiter FROM rulings
      UNION ALL SELECT stream, seq, 'appeal.decided', signature, arbiter FROM decisions)
WHERE signature <> 'valid'
ORDER BY stream, seq;
