"""`matchledger serve`: the HTTP service competition software streams signed batches to, its
front processes and HTTP/1.1 server, and the live findings it publishes.

May import: audit.live, audit.query, ledger, replay, schemas.
"""
