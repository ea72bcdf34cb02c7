"""The column types of a SQLite copy, as the transpiler takes them: `read_schema(conn)`.

A module of its own, below `dialect` and `mysql_dump`, both of which read them. An ENUM or SET column is
TEXT in a copy, and SQLite keeps no member list in a declared type: the copy writes its MySQL type in a
comment after the column's type (`member_comment`), and `read_schema` gives that type back, which MySQL's
ordering and numeric value of such a column need (`typed_rewrites`).
"""

from __future__ import annotations

import re
import sqlite3


def read_schema(conn: sqlite3.Connection) -> dict[str, dict[str, str]]:
    """Table -> column -> declared type of a SQLite database, as `to_sqlite(schema=...)` takes it; a column
    that declares a collation has it after its type ('VARCHAR(40) COLLATE utf8mb3_general_ci'): the MySQL
    collation of a copy's text column, whose character set a COLLATE of a query must match. An ENUM or SET
    column of a copy has its MySQL type ("ENUM('bozza','inviata') COLLATE utf8mb4_0900_ai_ci")."""
    schema = {}
    for table, definition in conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'"
    ):
        columns = conn.execute("SELECT name, type FROM pragma_table_info(?)", (table,)).fetchall()
        upper = (definition or "").upper()
        named = "COLLATE" in upper or "/*" in upper
        schema[table] = {
            column: _as_written(declared, definition, column) if named else declared
            for column, declared in columns
        }
    return schema


def member_comment(kind: str, members: tuple[str, ...]) -> str:
    """The comment a copy writes after an ENUM or SET column's type: `/* ENUM('a','b') */`, each member a
    MySQL string ('' for a quote, \\\\ for a backslash) in which no `*/` ends the comment early (`*\\/`,
    which MySQL reads as `*/`)."""
    quoted = ",".join(
        "'" + member.replace("\\", "\\\\").replace("'", "''").replace("*/", "*\\/") + "'"
        for member in members
    )
    return f"/* {kind}({quoted}) */"


def _as_written(declared: str, definition: str, column: str) -> str:
    """The declared type, and the collation the column's definition names right after it, as the copies
    write it (`"nome" VARCHAR(40) COLLATE utf8mb3_general_ci`; a collation written elsewhere in the
    definition is not looked for: the text's character set is then unknown, which only makes COLLATE
    lenient); the MySQL type of its `member_comment` instead of the declared one, when it has one."""
    quoted = re.escape(column.replace('"', '""'))
    name = rf'(?:"{quoted}"|`{re.escape(column)}`|\[{re.escape(column)}\]|\b{re.escape(column)}\b)'
    found = re.search(
        rf'{name}\s+{re.escape(declared)}(?:\s+COLLATE\s+["`]?(\w+)["`]?)?(?:\s*/\*\s*((?:ENUM|SET)\(.*?\))\s*\*/)?',
        definition,
        re.IGNORECASE | re.DOTALL,
    )
    if found is None:
        return declared
    collation, mysql_type = found.groups()
    written = mysql_type or declared
    return f"{written} COLLATE {collation}" if collation else written
