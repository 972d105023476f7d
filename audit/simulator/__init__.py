"""Competition software's side: the client that signs and sends batches (`matchledger send`),
the simulator that plays bot games and tournaments through the real recorder or a live service,
the faults it can plant, and the demo.

May import: audit.query, audit.certification, ledger, replay, schemas. Not the service.
"""
