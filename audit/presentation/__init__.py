"""What people read: the one row printer, tables for terminals, the terms and the articles in
Chinese and English, the HTML pages (a game's arbitration report, the tournament page), the
verdict, the time chart, a game's text record, the data dictionary and the code catalogue.

May import: audit.query, audit.certification, ledger, replay, schemas. Not the service, the live
audit, the simulator, the lake or Spark.
"""
