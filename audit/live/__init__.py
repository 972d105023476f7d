"""The live audit: each game folded as its events are committed, the findings kept in the
ledger's derived files, and the watcher that follows them over Server-Sent Events.

May import: audit.query, audit.certification, ledger, replay, schemas.
"""
