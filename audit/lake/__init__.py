"""The Parquet export of the projection for a data lake: its layout (Hive partitions), its signed
manifest and the Trino registration.

May import: audit.query, audit.presentation (the data dictionary), ledger, replay, schemas.
"""
