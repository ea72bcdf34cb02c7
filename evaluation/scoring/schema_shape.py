"""The shape of a schema: its tables, columns, types and keys, as a built SQLite database holds them.

A schema reaches participants in several forms (MySQL DDL, SQLite DDL, Spider's `tables.json`). Each
form is built into SQLite and read back as a `Shape`, so two forms agree exactly when their shapes are
equal, whatever their text. Types are the SQLite types the dump converter gives (VARCHAR(8), INTEGER,
DECIMAL(8,2), DATE...): two MySQL types that the converter maps alike (INT and INT UNSIGNED) compare
equal, because the scored database cannot tell them apart either.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    not_null: bool


@dataclass(frozen=True, order=True)
class ForeignKey:
    columns: tuple[str, ...]
    table: str
    references: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...]
    unique: tuple[tuple[str, ...], ...]
    foreign_keys: tuple[ForeignKey, ...]

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name.lower() == name.lower()), None)


Shape = tuple[Table, ...]


def read_shape(path: Path) -> Shape:
    """The shape of a built SQLite file, its tables in the order they were created."""
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        names = [
            name
            for (name,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY rowid"
            )
        ]
        tables = [_read_table(conn, name) for name in names]
    primary_keys = {table.name.lower(): table.primary_key for table in tables}
    return tuple(_with_implicit_references(table, primary_keys) for table in tables)


def _read_table(conn: sqlite3.Connection, name: str) -> Table:
    info = conn.execute('SELECT name, type, "notnull", pk FROM pragma_table_info(?)', (name,)).fetchall()
    columns = tuple(Column(column, declared, bool(not_null)) for column, declared, not_null, _ in info)
    primary_key = tuple(column for column, *_, position in sorted(info, key=lambda c: c[3]) if position)
    unique = []
    for index, is_unique, origin in conn.execute(
        'SELECT name, "unique", origin FROM pragma_index_list(?)', (name,)
    ):
        if is_unique and origin != "pk":
            unique.append(
                tuple(
                    column
                    for (column,) in conn.execute(
                        "SELECT name FROM pragma_index_info(?) ORDER BY seqno", (index,)
                    )
                )
            )
    references: dict[int, list[tuple[str, str, str | None]]] = {}
    for key, _seq, table, source, target in conn.execute(
        'SELECT id, seq, "table", "from", "to" FROM pragma_foreign_key_list(?) ORDER BY id, seq', (name,)
    ):
        references.setdefault(key, []).append((table, source, target))
    foreign_keys = tuple(
        sorted(
            ForeignKey(
                columns=tuple(source for _, source, _ in parts),
                table=parts[0][0],
                references=tuple(target or "" for _, _, target in parts),
            )
            for parts in references.values()
        )
    )
    return Table(name, columns, primary_key, tuple(sorted(unique)), foreign_keys)


def _with_implicit_references(table: Table, primary_keys: dict[str, tuple[str, ...]]) -> Table:
    """`REFERENCES t` without columns means t's primary key: spell it out, so both spellings compare equal."""
    if all(all(key.references) for key in table.foreign_keys):
        return table
    keys = tuple(
        sorted(
            key
            if all(key.references)
            else ForeignKey(key.columns, key.table, primary_keys.get(key.table.lower(), key.references))
            for key in table.foreign_keys
        )
    )
    return Table(table.name, table.columns, table.primary_key, table.unique, keys)


def column_names(shape: Shape) -> dict[str, set[str]]:
    """Table -> its column names, as `mysql_dump.missing_identifiers` takes them."""
    return {table.name: {column.name for column in table.columns} for table in shape}


def differences(authors: Shape, scored: Shape) -> list[str]:
    """How the authors' schema-only dump differs from the scored database, one line each.

    Names compare without case, as MySQL compares column names; an empty list means they agree.
    """
    authors_tables = {table.name.lower(): table for table in authors}
    scored_tables = {table.name.lower(): table for table in scored}
    lines = [f"table {t.name}: {_ONLY_SCORED}" for t in scored if t.name.lower() not in authors_tables]
    lines += [f"table {t.name}: {_ONLY_AUTHORS}" for t in authors if t.name.lower() not in scored_tables]
    for table in scored:
        other = authors_tables.get(table.name.lower())
        if other is not None:
            lines += _table_differences(other, table)
    return lines


_ONLY_SCORED = "only in the scored database"
_ONLY_AUTHORS = "only in the authors' dump"


def _table_differences(authors: Table, scored: Table) -> list[str]:
    name = scored.name
    lines = [f"{name}.{c.name}: {_ONLY_SCORED}" for c in scored.columns if authors.column(c.name) is None]
    lines += [f"{name}.{c.name}: {_ONLY_AUTHORS}" for c in authors.columns if scored.column(c.name) is None]
    for column in scored.columns:
        other = authors.column(column.name)
        if other is None:
            continue
        if other.type.lower() != column.type.lower():
            lines.append(f"{name}.{column.name}: {other.type} in the authors' dump, {column.type} scored")
        if other.not_null != column.not_null:
            lines.append(
                f"{name}.{column.name}: {_nullability(other)} in the authors' dump, {_nullability(column)} scored"
            )
    for what, authors_keys, scored_keys in (
        ("primary key", [authors.primary_key], [scored.primary_key]),
        ("unique keys", authors.unique, scored.unique),
        (
            "foreign keys",
            [_describe(k) for k in authors.foreign_keys],
            [_describe(k) for k in scored.foreign_keys],
        ),
    ):
        if _lowered(authors_keys) != _lowered(scored_keys):
            lines.append(
                f"{name}: {what} {_listed(authors_keys)} in the authors' dump, {_listed(scored_keys)} scored"
            )
    return lines


def _nullability(column: Column) -> str:
    return "NOT NULL" if column.not_null else "nullable"


def _describe(key: ForeignKey) -> tuple[str, ...]:
    return (f"({', '.join(key.columns)}) -> {key.table}({', '.join(key.references)})",)


def _lowered(keys: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return sorted(tuple(part.lower() for part in key) for key in keys if key)


def _listed(keys: Iterable[tuple[str, ...]]) -> str:
    present = [", ".join(key) for key in keys if key]
    return "; ".join(f"({key})" for key in present) if present else "none"


# --- Stored and exported forms ----------------------------------------------------------------------------


def to_json(shape: Shape) -> list[dict[str, object]]:
    return [
        {
            "name": table.name,
            "columns": [[c.name, c.type, c.not_null] for c in table.columns],
            "primary_key": list(table.primary_key),
            "unique": [list(key) for key in table.unique],
            "foreign_keys": [[list(k.columns), k.table, list(k.references)] for k in table.foreign_keys],
        }
        for table in shape
    ]


def from_json(data: list[dict[str, Any]]) -> Shape:
    return tuple(
        Table(
            name=table["name"],
            columns=tuple(Column(name, kind, bool(not_null)) for name, kind, not_null in table["columns"]),
            primary_key=tuple(table["primary_key"]),
            unique=tuple(tuple(key) for key in table["unique"]),
            foreign_keys=tuple(
                ForeignKey(tuple(columns), target, tuple(references))
                for columns, target, references in table["foreign_keys"]
            ),
        )
        for table in data
    )


_SPIDER_TYPES = (
    (("INT", "DECIMAL", "NUMERIC", "REAL", "FLOAT", "DOUBLE"), "number"),
    (("BOOLEAN",), "boolean"),
    (("DATE", "TIME"), "time"),
    (("CHAR", "TEXT", "CLOB"), "text"),
)


def spider_tables(db_id: str, shape: Shape) -> dict[str, object]:
    """The schema as one entry of Spider's `tables.json`, the form most Text-to-SQL systems read."""
    columns: list[list[object]] = [[-1, "*"]]
    types = ["text"]
    position: dict[tuple[str, str], int] = {}
    for number, table in enumerate(shape):
        for column in table.columns:
            position[(table.name.lower(), column.name.lower())] = len(columns)
            columns.append([number, column.name])
            types.append(_spider_type(column.type))
    primary_keys: list[object] = []
    for table in shape:
        indices = [position[(table.name.lower(), name.lower())] for name in table.primary_key]
        primary_keys.extend(indices if len(indices) == 1 else [indices] if indices else [])
    foreign_keys = [
        [position[(table.name.lower(), own.lower())], position[(key.table.lower(), other.lower())]]
        for table in shape
        for key in table.foreign_keys
        for own, other in zip(key.columns, key.references, strict=True)
        if (key.table.lower(), other.lower()) in position
    ]
    names = [table.name for table in shape]
    return {
        "db_id": db_id,
        "table_names_original": names,
        "table_names": [name.replace("_", " ").lower() for name in names],
        "column_names_original": columns,
        "column_names": [[table, str(name).replace("_", " ").lower()] for table, name in columns],
        "column_types": types,
        "primary_keys": primary_keys,
        "foreign_keys": foreign_keys,
    }


def _spider_type(declared: str) -> str:
    upper = declared.upper()
    return next((kind for words, kind in _SPIDER_TYPES if any(word in upper for word in words)), "others")
