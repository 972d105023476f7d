"""The audit on Apache Spark over a lake export: the session, the tables, the named queries in
Spark SQL and the replay on the executors.

May import: audit.lake, audit.query, ledger, replay, schemas.
"""
