"""Certification: verify the log, replay every game, run every check, and the signed audit
certificate anyone can check offline.

May import: audit.query, ledger, replay, schemas.
"""
