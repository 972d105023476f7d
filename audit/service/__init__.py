"""`matchledger serve`: the HTTP service competition software streams signed batches to, its
front processes and HTTP/1.1 server, what the writer's process and its fronts share
(`process.py`), and the live findings it publishes.

May import: audit.live, audit.query, ledger, replay, schemas.
"""
