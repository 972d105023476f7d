"""The SQL that registers an export in Trino's Hive connector (`trino.sql`): one schema, one external
table per exported table (column types from its Arrow schema, its descriptions as comments,
partitioned by tournament and round), and the call that finds each table's partitions.

Run it with the Hive catalog as the session's (`trino --catalog hive --file trino.sql`). The Hive
connector has no TIMESTAMP WITH TIME ZONE column: the UTC instants are TIMESTAMP(3), the UTC time
without its zone."""

from __future__ import annotations

import pyarrow as pa

from audit.lake.layout import PARTITIONS

TRINO_FILE = "trino.sql"
SCHEMA = "matchledger"
"""The Trino schema the tables are created in."""
_PLAIN = {pa.bool_(): "BOOLEAN", pa.int8(): "TINYINT", pa.int16(): "SMALLINT", pa.int32(): "INTEGER", pa.int64(): "BIGINT",
          pa.float32(): "REAL", pa.float64(): "DOUBLE", pa.string(): "VARCHAR", pa.large_string(): "VARCHAR",
          pa.binary(): "VARBINARY", pa.large_binary(): "VARBINARY", pa.date32(): "DATE"}
_DIGITS = {"s": 0, "ms": 3, "us": 6, "ns": 9}
"""Fractional digits of a timestamp of each Arrow unit."""


class TrinoTypeError(ValueError):
    """An exported column has an Arrow type the Hive connector cannot read."""


def registration_sql(tables: dict[str, pa.Schema], location: str) -> str:
    """Returns the statements that register every table (written under `location/<table>/`) in
    Trino's Hive connector, in the order they must run."""
    lines = [f"-- Registers a matchledger Parquet export in Trino's Hive connector: trino --catalog hive --file {TRINO_FILE}",
             f"CREATE SCHEMA IF NOT EXISTS {SCHEMA};", ""]
    for name, schema in tables.items():
        lines += [_create_table(name, schema, f"{location.rstrip('/')}/{name}"),
                  f"CALL system.sync_partition_metadata({_string(SCHEMA)}, {_string(name)}, 'FULL');", ""]
    return "\n".join(lines)


def _create_table(name: str, schema: pa.Schema, location: str) -> str:
    """Returns the CREATE TABLE of one table: its columns in file order, the partition columns last
    (as the connector requires and the files have them)."""
    if list(schema.names[-len(PARTITIONS):]) != list(PARTITIONS):
        raise TrinoTypeError(f"table {name}: the partition columns {PARTITIONS} are not its last columns")
    columns = ",\n".join(f"  {_identifier(f.name)} {trino_type(f.type, f'{name}.{f.name}')}{_comment(f.metadata)}" for f in schema)
    partitions = ", ".join(_string(p) for p in PARTITIONS)
    return (f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{_identifier(name)} (\n{columns}\n){_comment(schema.metadata)}\n"
            f"WITH (\n  external_location = {_string(location)},\n  format = 'PARQUET',\n  partitioned_by = ARRAY[{partitions}]\n);")


def trino_type(kind: pa.DataType, column: str) -> str:
    """Returns the Trino type the Hive connector reads a Parquet column of this Arrow type as.

    :raises TrinoTypeError: for a type it has none for.
    """
    if kind in _PLAIN:
        return _PLAIN[kind]
    if pa.types.is_dictionary(kind):
        return trino_type(kind.value_type, column)
    if pa.types.is_timestamp(kind):
        return f"TIMESTAMP({_DIGITS[kind.unit]})"
    if pa.types.is_decimal(kind):
        return f"DECIMAL({kind.precision}, {kind.scale})"
    if pa.types.is_list(kind) or pa.types.is_large_list(kind):
        return f"ARRAY({trino_type(kind.value_type, column)})"
    if pa.types.is_struct(kind):
        return f"ROW({', '.join(f'{_identifier(f.name)} {trino_type(f.type, column)}' for f in kind)})"
    raise TrinoTypeError(f"column {column}: no Trino type for Arrow {kind}")


def _identifier(name: str) -> str:
    """Quotes an identifier (`round`, `first`, `format` … are keywords of Trino)."""
    return '"' + name.replace('"', '""') + '"'


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _comment(metadata: dict[bytes, bytes] | None) -> str:
    """Returns a column's or table's description (from the data dictionary) as a COMMENT clause."""
    text = (metadata or {}).get(b"description")
    return f" COMMENT {_string(text.decode())}" if text else ""
