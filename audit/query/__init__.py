"""The projection of the log and every question asked of it: the Arrow tables built by replaying
the log, DuckDB and the named SQL of sql/, audit sessions, standings, the checks a certification
runs and a finding's one line, arbitration and appeals, the derived files kept beside the log, the
JSON splitter.

May import: ledger, replay, schemas. Nothing else of audit.
"""
