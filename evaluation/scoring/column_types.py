"""The column types of a SQLite copy, as the transpiler takes them: `read_schema(conn)`.

A module of its own, below `dialect` and `mysql_dump`, both of which read them.
"""

from __future__ import annotations

import re
import sqlite3


def read_schema(conn: sqlite3.Connection) -> dict[str, dict[str, str]]:
    """Table -> column -> declared type of a SQLite database, as `to_sqlite(schema=...)` takes it; a column
    that declares a collation has it after its type ('VARCHAR(40) COLLATE utf8mb3_general_ci'): the MySQL
    collation of a copy's text column, whose character set a COLLATE of a query must match."""
    schema = {}
    for table, definition in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    ):
        columns = conn.execute("SELECT name, type FROM pragma_table_info(?)", (table,)).fetchall()
        named = "COLLATE" in (definition or "").upper()
        schema[table] = {
            column: _with_collation(declared, definition, column) if named else declared
            for column, declared in columns
        }
    return schema


def _with_collation(declared: str, definition: str, column: str) -> str:
    """The declared type, and the collation the column's definition names right after it, as the copies
    write it (`"nome" VARCHAR(40) COLLATE utf8mb3_general_ci`; a collation written elsewhere in the
    definition is not looked for: the text's character set is then unknown, which only makes COLLATE
    lenient)."""
    quoted = re.escape(column.replace('"', '""'))
    name = rf'(?:"{quoted}"|`{re.escape(column)}`|\[{re.escape(column)}\]|\b{re.escape(column)}\b)'
    found = re.search(rf'{name}\s+{re.escape(declared)}\s+COLLATE\s+["`]?(\w+)', definition, re.IGNORECASE)
    return f"{declared} COLLATE {found.group(1)}" if found else declared
