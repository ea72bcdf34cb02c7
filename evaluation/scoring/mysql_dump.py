"""SQLite copies of MySQL dumps, holding what MySQL itself would store.

`build_sqlite` reads a dump's statements as MySQL 8.0 executes them (`dump_statements`: DELIMITER blocks,
versioned comments) and loads them the way MySQL would: CREATE DATABASE, USE, SET, LOCK, transaction
statements and mysqldump's DISABLE/ENABLE KEYS guards are skipped, but for the sql_mode's
NO_AUTO_VALUE_ON_ZERO, which mysqldump sets (0 in an AUTO_INCREMENT column is then stored); procedures,
functions and events are left out and named in the report (`stored_programs`); views become SQLite views
through `dialect.to_sqlite`, once every table is loaded; triggers become SQLite triggers of the same effect
when their shape allows (`row_sql`), and rows that would fire any other are refused; generated columns are
computed after the rows, through `to_sqlite` too; spatial columns keep MySQL's bytes (SRID and WKB), with a
note in the report; the BINARY attribute is the _bin collation of the column's character set; table options
(ENGINE, CHARSET, partitions) and column character sets are dropped; ENUM and SET become TEXT, with their MySQL type
in a comment the transpiler reads (`column_types.member_comment`); every integer
type becomes INTEGER, `INTEGER UNSIGNED` when MySQL's is unsigned (UNSIGNED, YEAR, SERIAL, BIT), which MySQL's
arithmetic needs to know (`sqltypes`). An AUTO_INCREMENT column is `INTEGER NOT NULL PRIMARY KEY
AUTOINCREMENT`, and `AUTO_INCREMENT=N` is kept through `sqlite_sequence`; an unsigned one, `INTEGER UNSIGNED
NOT NULL PRIMARY KEY`, which SQLite does not number, gets its numbers from the loader, as MySQL gives them
(the next is past both AUTO_INCREMENT=N and the largest so far). Text columns compare as MySQL 8.0 compares
them under the collation of their column or table, or the default collation of its character set
(`sqlite_collation`: utf8mb4, and a table without one, `COLLATE utf8mb4_0900_ai_ci`; utf8/utf8mb3 and the
other character sets `COLLATE utf8mb3_general_ci`; a utf8mb4 or utf8mb3 collation named in the dump, itself),
collations that `collations.install_collations` registers and every connection to a copy needs; inserted
values are stored as MySQL stores them: dates, times and datetimes in their canonical form ('1981-7-9' ->
'1981-07-09'), numbers rounded to the column's scale, TRUE/FALSE as 1/0.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.optimizer.scope import Scope, traverse_scope
from sqlglot.tokenizer_core import Token, TokenType

from evaluation.scoring.collations import UTF8MB3_COLLATION, UTF8MB4_COLLATION, canonical_collation
from evaluation.scoring.column_types import member_comment, read_schema
from evaluation.scoring.dialect import to_sqlite

# DumpError is re-exported: the callers of build_sqlite catch it from here.
from evaluation.scoring.dump_statements import DumpError as DumpError
from evaluation.scoring.dump_statements import read_dump
from evaluation.scoring.function_rewrites import with_sqlite_functions
from evaluation.scoring.functions import as_text, install_functions, normalise_temporal
from evaluation.scoring.resolver import ColumnResolver, scope_sources
from evaluation.scoring.row_sql import UntranslatableTrigger, row_expression_sql, sqlite_trigger
from evaluation.scoring.schema_shape import Shape, read_shape
from evaluation.scoring.sqltypes import SqlType, type_of_declared
from evaluation.scoring.statements import (
    SQLGLOT_DIALECTS,
    Statement,
    TranspileError,
    parse_one,
    split_statements,
    statement_spans,
)
from evaluation.scoring.stored_programs import Dropped, ProgramError, Routine, Trigger, View, read_program


@dataclass(frozen=True)
class ColumnInfo:
    name: str
    declared_type: str


@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple[ColumnInfo, ...]
    row_count: int


@dataclass(frozen=True)
class BuildReport:
    """The tables of a built SQLite copy, in the order the dump creates them, and what else the dump holds.

    `routines` are the procedures, functions and events the copy leaves out; `views` and `triggers` are
    the dump's, as read (`stored_programs`); the copy applies each trigger but the `unapplied_triggers`,
    which fire on no row of the dump (`row_sql` says which shapes it applies); `notes` say what the copy keeps otherwise than MySQL would
    (a spatial column's bytes).
    """

    tables: dict[str, TableInfo]
    routines: tuple[Routine, ...] = ()
    views: tuple[View, ...] = ()
    triggers: tuple[Trigger, ...] = ()
    unapplied_triggers: Mapping[str, str] = field(default_factory=dict)  # lower-case name -> why
    notes: tuple[str, ...] = ()

    @property
    def table_count(self) -> int:
        return len(self.tables)

    @property
    def column_count(self) -> int:
        return sum(len(table.columns) for table in self.tables.values())

    @property
    def row_count(self) -> int:
        return sum(table.row_count for table in self.tables.values())

    @property
    def schema(self) -> dict[str, dict[str, str]]:
        """Table -> column -> declared type, as `dialect.to_sqlite(schema=...)` takes it."""
        return {t.name: {c.name: c.declared_type for c in t.columns} for t in self.tables.values()}


# Statements that configure a MySQL session or server and mean nothing to a single SQLite file.
# mysqldump's guards around a table's rows (ALTER TABLE ... DISABLE KEYS) change nothing stored either, nor
# does a FULLTEXT or SPATIAL index.
_SKIPPED_MYSQL = re.compile(
    r"(CREATE|DROP|ALTER)\s+(DATABASE|SCHEMA)\b|USE\b|SET\b|(UN)?LOCK\s+TABLES?\b|START\s+TRANSACTION\b"
    r"|BEGIN\b|COMMIT\b|ROLLBACK\b|ALTER\s+TABLE\s+\S+\s+(DISABLE|ENABLE)\s+KEYS\s*\Z"
    r"|CREATE\s+(FULLTEXT|SPATIAL)\s+INDEX\b",
    re.IGNORECASE,
)
# The caller owns the transaction of the build.
_SKIPPED_SQLITE = re.compile(r"(BEGIN|COMMIT|END|ROLLBACK)\b", re.IGNORECASE)


def build_sqlite(dump_sql: str, target: Path, *, source: str = "mysql") -> BuildReport:
    """Build the SQLite copy of a dump at `target`, replacing it atomically; raises DumpError.

    `source` is "mysql" (read as described above) or "sqlite" (statements executed as written). The file
    is written next to `target` under a temporary name and renamed on success; on failure nothing is left.
    """
    target = Path(target)
    statements = read_dump(dump_sql) if source == "mysql" else split_statements(dump_sql, source=source)
    handle, temporary_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)
    temporary = Path(temporary_name)
    try:
        conn = sqlite3.connect(temporary, isolation_level=None)
        install_functions(conn)  # the collations the columns declare (unique keys compare with them)
        try:
            conn.execute("PRAGMA journal_mode = OFF")  # a failed build is thrown away, never rolled back
            conn.execute("BEGIN")
            loader = _MySQLLoader(conn) if source == "mysql" else _SQLiteLoader(conn)
            for statement in statements:
                loader.load(statement)
            loader.finish()
            conn.execute("COMMIT")
            report = loader.report(_report(conn))
        finally:
            conn.close()
        os.replace(temporary, target)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return report


def _report(conn: sqlite3.Connection) -> BuildReport:
    types = read_schema(conn)
    tables = {}
    for (name,) in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
    ):
        (rows,) = conn.execute(f"SELECT COUNT(*) FROM {_quote(name)}").fetchone()
        tables[name] = TableInfo(name, tuple(ColumnInfo(*column) for column in types[name].items()), rows)
    return BuildReport(tables)


def _quote(identifier: str) -> str:
    return '"' + identifier.replace('"', '""') + '"'


class _SQLiteLoader:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def finish(self) -> None:
        """Nothing is left to do once every statement ran."""

    @staticmethod
    def report(tables: BuildReport) -> BuildReport:
        return tables

    def load(self, statement: Statement) -> None:
        if _SKIPPED_SQLITE.match(statement.text):
            return
        try:
            self._conn.execute(statement.text)
        except sqlite3.Error as error:
            raise DumpError(statement, f"SQLite: {error}") from None


# --- MySQL tables as SQLite sees them ---------------------------------------------------------------------

_INTEGER_TYPES = {"TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT", "YEAR", "SERIAL", "BIT"}
# Integer types that are UNSIGNED whatever is written: MySQL's arithmetic treats them so.
_UNSIGNED_INTEGER_TYPES = {"YEAR", "SERIAL", "BIT"}
_DECIMAL_TYPES = {"DECIMAL", "BIGDECIMAL", "NUMERIC"}
_TEXT_TYPES = {"TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM", "SET", "JSON"}
_SIZED_TEXT_TYPES = {"CHAR", "VARCHAR", "NCHAR", "NVARCHAR"}
_BLOB_TYPES = {"BLOB", "TINYBLOB", "MEDIUMBLOB", "LONGBLOB", "BINARY", "VARBINARY"}
_PLAIN_TYPES = {
    "FLOAT": "FLOAT",
    "DOUBLE": "DOUBLE",
    "DATE": "DATE",
    "DATETIME": "DATETIME",
    "TIMESTAMP": "DATETIME",
    "TIMESTAMPTZ": "DATETIME",
    "TIMESTAMPLTZ": "DATETIME",
    "TIME": "TIME",
    "BOOLEAN": "BOOLEAN",
}


def _sqlite_type(kind: exp.DataType) -> str | None:
    """The SQLite declared type for a MySQL column type (None when not supported)."""
    name = kind.this.name
    params = [
        int(p.this.name) for p in kind.expressions if isinstance(p, exp.DataTypeParam) and p.this.is_int
    ]
    # sqlglot spells UNSIGNED as a U prefix (UINT, UDECIMAL). An unsigned integer keeps the word, which
    # SQLite reads as an integer type and MySQL's arithmetic needs (`sqltypes`); only an integer's matters.
    unsigned = name.startswith("U") and name[1:] in _INTEGER_TYPES | _DECIMAL_TYPES | {"FLOAT", "DOUBLE"}
    if unsigned:
        name = name[1:]
    sign = " UNSIGNED" if unsigned or name in _UNSIGNED_INTEGER_TYPES else ""
    if name == "TINYINT" and params == [1]:
        return "BOOLEAN" + sign  # MySQL's BOOLEAN
    if name in _INTEGER_TYPES:
        return "INTEGER" + sign
    if name in _DECIMAL_TYPES:
        precision = params[0] if params else 10  # MySQL's DECIMAL is DECIMAL(10,0)
        scale = params[1] if len(params) > 1 else 0
        return f"DECIMAL({precision},{scale})"
    if name in _SIZED_TEXT_TYPES:
        return f"{name}({params[0]})" if params else name
    if name in _TEXT_TYPES:
        return "TEXT"
    if name in _BLOB_TYPES:
        return "BLOB"
    return _PLAIN_TYPES.get(name)


@dataclass
class _Column:
    name: str
    declared: str
    collation: str | None  # a collation `functions.install_functions` registers; None for BINARY
    charset: str | None = None  # the column's own CHARACTER SET
    not_null: bool = False
    primary_key: bool = False
    auto_increment: bool = False
    unique: bool = False
    default: str | None = None  # SQLite SQL
    check: str | None = None  # SQLite SQL
    labels: tuple[str, ...] = ()  # the members of an ENUM or SET
    is_set: bool = False
    mysql_type: str = ""  # sqlglot's name of its MySQL type: YEAR, UINT (INT UNSIGNED), ...
    generated: exp.Expr | None = None  # a generated column's expression (MySQL)
    spatial: str | None = None  # a spatial type's name: the column holds MySQL's bytes

    @property
    def type(self) -> SqlType | None:
        return type_of_declared(self.declared)

    @property
    def numbered_by_sqlite(self) -> bool:
        """An AUTO_INCREMENT column SQLite numbers: only an INTEGER PRIMARY KEY AUTOINCREMENT can be."""
        return self.auto_increment and self.declared == "INTEGER"

    def sql(self, *, inline_primary_key: bool) -> str:
        parts = [_quote(self.name), self.declared]
        if self.type is not None and self.type.kind == "text" and self.collation is not None:
            parts.append(f"COLLATE {self.collation}")
        if self.labels:
            parts.append(member_comment("SET" if self.is_set else "ENUM", self.labels))
        # A generated column's values come after its rows (`_MySQLLoader.finish`), which check NOT NULL.
        if (self.not_null and self.generated is None) or inline_primary_key:
            parts.append("NOT NULL")
        if inline_primary_key:
            parts.append("PRIMARY KEY AUTOINCREMENT" if self.numbered_by_sqlite else "PRIMARY KEY")
        if self.unique:
            parts.append("UNIQUE")
        if self.default is not None:
            parts.append(f"DEFAULT {self.default}")
        if self.check is not None:
            parts.append(f"CHECK ({self.check})")
        return " ".join(parts)


@dataclass
class _Table:
    name: str
    columns: list[_Column] = field(default_factory=list)
    primary_key: list[str] = field(default_factory=list)
    constraints: list[str] = field(default_factory=list)  # SQLite table constraints
    charset: str | None = None  # the table's default character set
    collation: str | None = None  # the table's default collation
    next_id: int | None = None  # MySQL's AUTO_INCREMENT=N
    statement: Statement | None = None  # the CREATE TABLE, named by what goes wrong later

    def column(self, name: str) -> _Column | None:
        return next((c for c in self.columns if c.name.lower() == name.lower()), None)

    @property
    def auto_increment_column(self) -> _Column | None:
        return next((c for c in self.columns if c.auto_increment), None)

    def sql(self, name: str | None = None) -> str:
        # SQLite accepts AUTOINCREMENT only on a single INTEGER PRIMARY KEY written on the column itself.
        auto = self.auto_increment_column
        if auto is not None and [c.lower() for c in self.primary_key] != [auto.name.lower()]:
            raise _Unsupported(f"AUTO_INCREMENT column {auto.name} must be the whole primary key")
        lines = [column.sql(inline_primary_key=column is auto) for column in self.columns]
        if self.primary_key and auto is None:
            lines.append(f"PRIMARY KEY ({', '.join(_quote(c) for c in self.primary_key)})")
        lines.extend(self.constraints)
        return f"CREATE TABLE {_quote(name or self.name)} (\n  " + ",\n  ".join(lines) + "\n)"


def _sqlite_sql(node: exp.Expr) -> str:
    return with_sqlite_functions(node.copy()).sql(dialect="sqlite")


def sqlite_collation(charset: str | None, collation: str | None) -> str | None:
    """The SQLite collation of a text column with this MySQL character set and collation (the column's,
    else its table's), under MySQL 8.0's defaults; None for SQLite's BINARY.

    A collation of utf8mb4 or utf8mb3 is itself (`collations` registers each under its MySQL name). A table
    that names neither has the server's default, utf8mb4 with utf8mb4_0900_ai_ci; a character set alone,
    its default collation. Another character set's collation: _bin and _cs ones compare exactly, the
    NO PAD ones as utf8mb4_0900_ai_ci, the other _ci ones as utf8mb3_general_ci (PAD SPACE).
    """
    if collation is not None:
        known = canonical_collation(collation)
        if known is not None:
            return known
        name = collation.lower()
        if not name.endswith("_ci"):
            return None
        return UTF8MB4_COLLATION if "nopad" in name else UTF8MB3_COLLATION
    if charset is None or charset.lower() == "utf8mb4":
        return UTF8MB4_COLLATION
    return None if charset.lower() == "binary" else UTF8MB3_COLLATION


class _MySQLLoader:
    """Loads MySQL statements into SQLite, keeping a model of each table for later ALTER TABLE, and the
    views and stored programs of the dump for `finish` and the report."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._tables: dict[str, _Table] = {}
        self._routines: dict[tuple[str, str], Routine] = {}
        self._views: dict[str, tuple[View, Statement]] = {}
        self._triggers: dict[str, Trigger] = {}
        self._sqlite_triggers: dict[str, str] = {}  # the CREATE TRIGGER of each trigger the copy applies
        self._unapplied: dict[str, str] = {}  # why each other trigger cannot be applied
        self._statement = Statement(0, 0, "")  # the one being loaded, which a table remembers
        # sql_mode's NO_AUTO_VALUE_ON_ZERO, which mysqldump sets: 0 in an AUTO_INCREMENT column is stored.
        self._zero_is_a_value = False
        self._saved_modes: dict[str, bool] = {}  # user variables holding a saved sql_mode

    def load(self, statement: Statement) -> None:
        self._statement = statement
        text = statement.text
        if _SKIPPED_MYSQL.match(text):
            if re.match(r"SET\b", text, re.IGNORECASE):
                self._set(text)
            return
        try:
            program = read_program(text)
            if program is not None:
                self._keep(program)
                return
        except (ProgramError, _Unsupported) as problem:
            raise DumpError(statement, str(problem)) from None
        replace = re.match(r"REPLACE\b", text, re.IGNORECASE) is not None
        text = "INSERT" + text[len("REPLACE") :] if replace else text
        attributes: dict[str, _Attributes] = {}
        if _CREATE_TABLE.match(text):
            text, attributes = prepared_create_table(text)
        try:
            node = sqlglot.parse_one(text, read=SQLGLOT_DIALECTS["mysql"])
        except ParseError as error:
            raise DumpError(statement, f"cannot parse it: {_parse_problem(error, statement)}") from None
        except TokenError:
            raise DumpError(statement, "cannot parse it: a string, name or comment is not closed") from None
        except SqlglotError as error:
            raise DumpError(statement, f"cannot parse it: {str(error).splitlines()[0]}") from None
        except RecursionError:
            raise DumpError(statement, "cannot parse it: it nests too deeply") from None
        except Exception as error:  # sqlglot's parser trips on some text it cannot read (TypeError, ...)
            raise DumpError(statement, f"cannot parse it ({type(error).__name__} in sqlglot)") from None
        try:
            self._load(node, replace=replace, attributes=attributes)
        except _Unsupported as problem:
            raise DumpError(statement, str(problem)) from None
        except sqlite3.Error as error:
            raise DumpError(statement, f"SQLite: {error}") from None

    def _load(self, node: exp.Expr, *, replace: bool, attributes: Mapping[str, _Attributes]) -> None:
        if isinstance(node, exp.Create) and node.kind == "TABLE":
            self._create(node, attributes)
        elif isinstance(node, exp.Insert):
            self._insert(node, replace=replace)
        elif isinstance(node, exp.Alter):
            self._alter(node)
        elif isinstance(node, exp.Drop) and node.kind == "TABLE":
            for table in node.args.get("tables") or []:
                self._tables.pop(table.name.lower(), None)
                self._conn.execute(f"DROP TABLE IF EXISTS {_quote(table.name)}")
        elif isinstance(node, exp.Create) and node.kind == "INDEX":
            if node.args.get("unique"):  # an ordinary index changes no result
                self._conn.execute(node.sql(dialect="sqlite"))
        elif isinstance(node, exp.Command):  # sqlglot read its first words only
            raise _Unsupported(f"this form of {_statement_kind(self._statement.text)} is not supported")
        else:
            raise _Unsupported(f"{_statement_kind(self._statement.text)} statements are not supported")

    def _set(self, text: str) -> None:
        """Follow the session's sql_mode through mysqldump's SET statements (`SET @OLD_SQL_MODE=@@SQL_MODE,
        SQL_MODE='NO_AUTO_VALUE_ON_ZERO'`, ..., `SET SQL_MODE=@OLD_SQL_MODE`): only NO_AUTO_VALUE_ON_ZERO
        changes what the loader stores."""
        for variable, value in _ASSIGNMENT.findall(text):
            if variable.startswith("@") and not variable.startswith("@@"):
                if _SQL_MODE_VALUE.fullmatch(value):
                    self._saved_modes[variable.lower()] = self._zero_is_a_value
            elif value.startswith("@") and not value.startswith("@@"):
                self._zero_is_a_value = self._saved_modes.get(value.lower(), False)
            elif value[:1] in "'\"":
                self._zero_is_a_value = "NO_AUTO_VALUE_ON_ZERO" in value.upper()
            elif value.upper() == "DEFAULT":
                self._zero_is_a_value = False

    # Views and stored programs

    def _keep(self, program: Routine | Trigger | View | Dropped) -> None:
        if isinstance(program, Routine):
            self._routines[program.kind, program.name.lower()] = program
        elif isinstance(program, Trigger):
            self._table(program.table)  # MySQL creates a trigger on a table that exists only
            self._add_trigger(program)
        elif isinstance(program, View):
            if program.name.lower() in self._tables:
                raise _Unsupported(f"view {program.name}: a table of that name exists")
            self._views[program.name.lower()] = (program, self._statement)
        else:
            for name in program.names:
                if program.kind == "VIEW":
                    self._views.pop(name.lower(), None)
                elif program.kind == "TRIGGER":
                    self._drop_trigger(name)
                else:
                    self._routines.pop((program.kind, name.lower()), None)

    def _add_trigger(self, trigger: Trigger) -> None:
        """A trigger becomes a SQLite trigger of the same effect when its shape allows (`row_sql`); else it
        is kept aside, and rows that would fire it are refused (`_check_no_trigger_fires`)."""
        self._drop_trigger(trigger.name)
        self._triggers[trigger.name.lower()] = trigger
        try:
            create = sqlite_trigger(trigger, read_schema(self._conn))
            self._conn.execute(create)
        except (UntranslatableTrigger, sqlite3.Error) as problem:
            self._unapplied[trigger.name.lower()] = str(problem)
        else:
            self._sqlite_triggers[trigger.name.lower()] = create

    def _drop_trigger(self, name: str) -> None:
        self._triggers.pop(name.lower(), None)
        self._unapplied.pop(name.lower(), None)
        if self._sqlite_triggers.pop(name.lower(), None) is not None:
            self._conn.execute(f"DROP TRIGGER IF EXISTS {_quote(name)}")

    def finish(self) -> None:
        """What MySQL does as rows arrive and the copy does once they all have: generated columns are
        computed; then the views are made, in the order the dump makes them."""
        for table in self._tables.values():
            for column in table.columns:
                if column.generated is not None:
                    self._compute(table, column)
        for view, statement in self._views.values():
            try:
                self._create_view(view)
            except TranspileError as error:
                raise DumpError(statement, f"view {view.name} cannot be made: {error}") from None
            except sqlite3.Error as error:
                raise DumpError(statement, f"view {view.name} cannot be made: SQLite: {error}") from None

    def _compute(self, table: _Table, column: _Column) -> None:
        assert column.generated is not None and table.statement is not None
        try:
            expression = _generated_sql(table, column, read_schema(self._conn))
            self._conn.execute(f"UPDATE {_quote(table.name)} SET {_quote(column.name)} = {expression}")
            if column.not_null:
                (nulls,) = self._conn.execute(
                    f"SELECT COUNT(*) FROM {_quote(table.name)} WHERE {_quote(column.name)} IS NULL"
                ).fetchone()
                if nulls:
                    raise _Unsupported(f"generated column {column.name} is NULL in {nulls} rows")
        except (_Unsupported, TranspileError) as problem:
            raise DumpError(table.statement, f"generated column {column.name}: {problem}") from None
        except sqlite3.Error as error:
            raise DumpError(table.statement, f"generated column {column.name}: SQLite: {error}") from None

    def _create_view(self, view: View) -> None:
        select = to_sqlite(view.select, source="mysql", schema=read_schema(self._conn))
        columns = f" ({', '.join(_quote(c) for c in view.columns)})" if view.columns else ""
        self._conn.execute(f"CREATE VIEW {_quote(view.name)}{columns} AS {select}")
        self._conn.execute(f"SELECT * FROM {_quote(view.name)} LIMIT 0")  # SQLite reads a view when used

    def report(self, tables: BuildReport) -> BuildReport:
        notes = [
            f"column {table.name}.{column.name} ({column.spatial}) holds the bytes MySQL stores "
            "(SRID and WKB); no spatial function reads them"
            for table in self._tables.values()
            for column in table.columns
            if column.spatial is not None
        ]
        return BuildReport(
            tables.tables,
            routines=tuple(self._routines.values()),
            views=tuple(view for view, _ in self._views.values()),
            triggers=tuple(self._triggers.values()),
            unapplied_triggers=dict(self._unapplied),
            notes=tuple(notes),
        )

    def _table(self, name: str) -> _Table:
        table = self._tables.get(name.lower())
        if table is None:
            raise _Unsupported(f"table {name} is not created before this statement")
        return table

    # CREATE TABLE

    def _create(self, node: exp.Create, attributes: Mapping[str, _Attributes]) -> None:
        schema = node.this
        if not isinstance(schema, exp.Schema) or node.expression is not None:
            raise _Unsupported("CREATE TABLE ... LIKE / AS SELECT is not supported")
        if node.args.get("exists") and schema.this.name.lower() in self._tables:
            return
        properties = node.args.get("properties")
        options = properties.expressions if properties else []
        collation = next((p.name for p in options if isinstance(p, exp.CollateProperty)), None)
        charset = next((p.name for p in options if isinstance(p, exp.CharacterSetProperty)), None)
        table = _Table(schema.this.name, charset=charset, collation=collation, statement=self._statement)
        if table.name.lower() in self._views:
            raise _Unsupported(f"table {table.name}: a view of that name exists")
        for element in schema.expressions:
            if isinstance(element, exp.ColumnDef):
                table.columns.append(_column(element, table, attributes.get(element.name.lower())))
            else:
                _add_table_constraint(table, element)
        table.primary_key = table.primary_key or [c.name for c in table.columns if c.primary_key]
        for column in table.columns:
            column.primary_key = False
        table.next_id = next((_next_id(p) for p in options if isinstance(p, exp.AutoIncrementProperty)), None)
        self._conn.execute(table.sql())
        self._tables[table.name.lower()] = table
        self._apply_next_id(table)

    def _apply_next_id(self, table: _Table) -> None:
        """MySQL's next id is max(AUTO_INCREMENT, max id + 1); SQLite's is max(seq, max id) + 1."""
        auto = table.auto_increment_column
        if table.next_id is None or auto is None or not auto.numbered_by_sqlite:
            return  # `_numbered` reads table.next_id itself
        seq = table.next_id - 1
        updated = self._conn.execute(
            "UPDATE sqlite_sequence SET seq = MAX(seq, ?) WHERE name = ?", (seq, table.name)
        ).rowcount
        if not updated:
            self._conn.execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table.name, seq))

    # ALTER TABLE

    def _alter(self, node: exp.Alter) -> None:
        table = self._table(node.this.name)
        actions = node.args.get("actions") or []
        for action in actions:
            _alter_model(table, action)
        for option in node.args.get("options") or []:
            if not isinstance(option, exp.AutoIncrementProperty):
                raise _Unsupported(f"ALTER TABLE option {option.sql(dialect='mysql')} is not supported")
            table.next_id = _next_id(option)
        if actions:
            self._rebuild(table)
        self._apply_next_id(table)

    def _rebuild(self, table: _Table) -> None:
        # SQLite cannot add constraints to a table: copy it into a new one made from the changed model.
        interim = f"{table.name}__rebuilt"
        existing = [row[1] for row in self._conn.execute(f"PRAGMA table_info({_quote(table.name)})")]
        kept = ", ".join(_quote(c) for c in existing if table.column(c) is not None)
        self._conn.execute(table.sql(interim))
        self._conn.execute(f"INSERT INTO {_quote(interim)} ({kept}) SELECT {kept} FROM {_quote(table.name)}")
        self._conn.execute(f"DROP TABLE {_quote(table.name)}")
        self._conn.execute(f"ALTER TABLE {_quote(interim)} RENAME TO {_quote(table.name)}")
        for name, trigger in self._triggers.items():  # dropped with the table they were on
            if trigger.table.lower() == table.name.lower() and name in self._sqlite_triggers:
                self._conn.execute(self._sqlite_triggers[name])

    # INSERT

    def _insert(self, node: exp.Insert, *, replace: bool) -> None:
        if node.args.get("conflict") is not None:
            raise _Unsupported("INSERT ... ON DUPLICATE KEY UPDATE is not supported")
        values = node.expression
        if not isinstance(values, exp.Values):
            raise _Unsupported("only INSERT ... VALUES is supported")
        target = node.this
        table = self._table(target.this.name if isinstance(target, exp.Schema) else target.name)
        names = [column.name for column in target.expressions] if isinstance(target, exp.Schema) else None
        columns = [self._insert_column(table, name) for name in names] if names else table.columns
        self._check_no_trigger_fires(table, replace=replace)
        tuples = [tuple_.expressions for tuple_ in values.expressions]
        if any(column.generated is not None for column in columns):
            columns, tuples = _without_generated(columns, tuples)
        zero_is_a_value = self._zero_is_a_value
        rows = [_row(tuple_, columns, number, zero_is_a_value) for number, tuple_ in enumerate(tuples, 1)]
        auto = table.auto_increment_column
        if auto is not None and not auto.numbered_by_sqlite:
            columns, rows = self._numbered(table, auto, columns, rows)
        verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE" if node.args.get("ignore") else "INSERT"
        column_list = ", ".join(_quote(column.name) for column in columns)
        placeholders = ", ".join("?" for _ in columns)
        self._conn.executemany(
            f"{verb} INTO {_quote(table.name)} ({column_list}) VALUES ({placeholders})", rows
        )

    def _check_no_trigger_fires(self, table: _Table, *, replace: bool) -> None:
        """Rows that would fire a trigger the copy cannot apply are refused (mysqldump writes a table's
        triggers after its rows, so that none fires while its dump loads); so are rows a REPLACE writes
        over a table with a DELETE trigger, which MySQL fires for each row replaced and SQLite does not."""
        events = ("INSERT", "DELETE") if replace else ("INSERT",)
        for name, trigger in self._triggers.items():
            if trigger.table.lower() != table.name.lower() or trigger.event not in events:
                continue
            heading = (
                f"trigger {trigger.name} ({trigger.timing} {trigger.event} ON {trigger.table}) would fire"
            )
            if name in self._unapplied:
                raise _Unsupported(
                    f"{heading} for these rows, and the copy cannot apply it: {self._unapplied[name]}"
                )
            if trigger.event == "DELETE":
                raise _Unsupported(f"{heading} for the rows REPLACE replaces, which SQLite does not do")

    def _numbered(
        self, table: _Table, auto: _Column, columns: list[_Column], rows: list[tuple[object, ...]]
    ) -> tuple[list[_Column], list[tuple[object, ...]]]:
        """The rows with the AUTO_INCREMENT numbers MySQL gives them: a row without one (NULL or 0) takes the
        next, past both AUTO_INCREMENT=N and the largest number so far."""
        if not any(column is auto for column in columns):
            columns, rows = [*columns, auto], [(*row, None) for row in rows]
        position = next(index for index, column in enumerate(columns) if column is auto)
        (largest,) = self._conn.execute(
            f"SELECT MAX({_quote(auto.name)}) FROM {_quote(table.name)}"
        ).fetchone()
        following = max(table.next_id or 1, (largest or 0) + 1)
        numbered = []
        for row in rows:
            number = row[position]
            if number is None:
                number = following
                row = (*row[:position], number, *row[position + 1 :])
            if isinstance(number, int):
                following = max(following, number + 1)
            numbered.append(row)
        return columns, numbered

    @staticmethod
    def _insert_column(table: _Table, name: str) -> _Column:
        column = table.column(name)
        if column is None:
            raise _Unsupported(f"table {table.name} has no column {name}")
        return column


def _next_id(option: exp.AutoIncrementProperty) -> int:
    if not option.this.is_int:
        raise _Unsupported(f"{option.sql(dialect='mysql')} is not a number")
    return int(option.this.name)


class _Unsupported(Exception):
    """Why a statement cannot be loaded; becomes a DumpError with the statement's position."""


def _column(node: exp.ColumnDef, table: _Table, attributes: _Attributes | None = None) -> _Column:
    attributes = attributes or _Attributes()
    kind = node.args.get("kind")
    declared = "BLOB" if attributes.spatial else _sqlite_type(kind) if kind else None
    if declared is None or kind is None:
        raise _Unsupported(f"column {node.name} has an unsupported type {kind.sql('mysql') if kind else ''}")
    column = _Column(node.name, declared, sqlite_collation(table.charset, table.collation))
    column.mysql_type = kind.this.name
    column.spatial = attributes.spatial
    if kind.this.name in ("ENUM", "SET"):
        # MySQL drops the trailing spaces of the members it is given.
        column.labels = tuple(label.name.rstrip(" ") for label in kind.expressions)
        column.is_set = kind.this.name == "SET"
    # A constraint's `kind` property raises TypeError when sqlglot put a table element there (`a INT
    # PRIMARY KEY (a)`, which MySQL refuses too): its argument is read instead, and refused below.
    options = [constraint.args.get("kind") for constraint in node.constraints]
    for option in options:
        _apply_column_option(column, option)
    if attributes.binary and not any(isinstance(option, exp.CollateColumnConstraint) for option in options):
        # BINARY is the _bin collation of the column's character set.
        charset = column.charset or table.charset or "utf8mb4"
        column.collation = sqlite_collation(charset, f"{charset}_bin")
    return column


@dataclass(frozen=True)
class _Attributes:
    """What `_prepared_create_table` took out of a column's definition, which sqlglot does not read."""

    binary: bool = False  # the BINARY attribute: the _bin collation of its character set
    spatial: str | None = None  # a spatial type's name (GEOMETRY, POINT, ...)


# One assignment of a SET statement, `@saved = @@sql_mode`, `SQL_MODE = 'A,B'` or `sql_mode = @saved`.
_ASSIGNMENT = re.compile(
    r"(@[\w$.]+|(?:@@(?:SESSION\.)?|SESSION\s+)?SQL_MODE)\s*:?=\s*('(?:[^'\\]|\\.|'')*'|\"(?:[^\"\\]|\\.)*\"|@@?[\w$.]+|\w+)",
    re.IGNORECASE,
)
_SQL_MODE_VALUE = re.compile(r"@@(?:SESSION\.)?SQL_MODE", re.IGNORECASE)
_CREATE_TABLE = re.compile(r"CREATE\s+(TEMPORARY\s+)?TABLE\b", re.IGNORECASE)
_SPATIAL_TYPES = {
    "GEOMETRY",
    "POINT",
    "LINESTRING",
    "POLYGON",
    "MULTIPOINT",
    "MULTILINESTRING",
    "MULTIPOLYGON",
    "GEOMETRYCOLLECTION",
    "GEOMCOLLECTION",
}
# The words that start a table's key or constraint rather than a column.
_TABLE_ELEMENT_WORDS = {
    "PRIMARY",
    "KEY",
    "INDEX",
    "UNIQUE",
    "CONSTRAINT",
    "FOREIGN",
    "FULLTEXT",
    "SPATIAL",
    "CHECK",
}


def prepared_create_table(text: str) -> tuple[str, dict[str, _Attributes]]:
    """A CREATE TABLE as sqlglot can read it, and what was taken out for that, by column (lower case).

    sqlglot reads neither MySQL's BINARY column attribute (it fails with a TypeError), nor spatial types
    but GEOMETRY, nor SRID, ZEROFILL or a CHECK's [NOT] ENFORCED, nor the table options CHECKSUM and
    TABLESPACE, nor partitioning (`/*!50100 PARTITION BY ... */`). A spatial column becomes a BLOB; SRID,
    ZEROFILL, those options and the partitions change nothing stored; a CHECK ... NOT ENFORCED is left
    out, as MySQL does not check it.
    """
    try:
        tokens = SQLGLOT_DIALECTS["mysql"].tokenize(text)
    except SqlglotError:
        return text, {}  # the parser reports what is wrong
    opening = next((i for i, token in enumerate(tokens) if token.token_type == TokenType.L_PAREN), None)
    if opening is None:
        return text, {}
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in the text
    attributes: dict[str, _Attributes] = {}
    for element, comma in _elements(tokens, opening):
        words = [token.text.upper() for token in element]
        if not element:
            continue
        if words[0] in _TABLE_ELEMENT_WORDS:
            if "ENFORCED" in words:
                where = words.index("ENFORCED")
                if where > 0 and words[where - 1] == "NOT":  # the whole element, and the comma before it
                    edits.append(
                        (element[0].start if comma is None else comma.start, element[-1].end + 1, "")
                    )
                else:
                    edits.append((element[where].start, element[where].end + 1, ""))
            continue
        binary, spatial = False, None
        if len(element) > 1 and words[1] in _SPATIAL_TYPES:
            spatial = words[1]
            edits.append((element[1].start, element[1].end + 1, "BLOB"))
        depth = 0
        for index, token in enumerate(element[2:], start=2):
            depth += (token.token_type == TokenType.L_PAREN) - (token.token_type == TokenType.R_PAREN)
            if depth:
                continue
            following = words[index + 1] if index + 1 < len(words) else ""
            if (
                words[index] == "BINARY"
                and following != "("
                and words[index - 1] not in ("SET", "CHARSET", "=")
            ):
                binary = True
                edits.append((token.start, token.end + 1, ""))
            elif words[index] == "ZEROFILL":
                edits.append((token.start, token.end + 1, ""))
            elif words[index] == "SRID" and following:
                edits.append((token.start, element[index + 1].end + 1, ""))
        if binary or spatial:
            attributes[element[0].text.lower()] = _Attributes(binary, spatial)
    edits.extend(_unread_table_options(text, tokens, opening))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text, attributes


def _unread_table_options(text: str, tokens: list[Token], opening: int) -> Iterator[tuple[int, int, str]]:
    """Edits that cut, after a CREATE TABLE's columns, the options sqlglot cannot read."""
    depth = 0
    for closing in range(opening, len(tokens)):
        depth += (tokens[closing].token_type == TokenType.L_PAREN) - (
            tokens[closing].token_type == TokenType.R_PAREN
        )
        if depth == 0:
            break
    tail = tokens[closing + 1 :]
    words = [token.text.upper() for token in tail]
    for index, word in enumerate(words):
        following = words[index + 1] if index + 1 < len(words) else ""
        if " ".join(word.split()) == "PARTITION BY" or (word == "PARTITION" and following == "BY"):
            yield tail[index].start, len(text), ""
            return
        if word in ("CHECKSUM", "TABLESPACE") and following:
            value = index + 2 if following == "=" and index + 2 < len(words) else index + 1
            yield tail[index].start, tail[value].end + 1, ""


def _elements(tokens: list[Token], opening: int) -> Iterator[tuple[list[Token], Token | None]]:
    """The tokens of each element (column or key) between a CREATE TABLE's parentheses, and the comma
    before it (None for the first)."""
    element: list[Token] = []
    comma: Token | None = None
    depth = 0
    for token in tokens[opening + 1 :]:
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            if depth == 0:
                break
            depth -= 1
        elif token.token_type == TokenType.COMMA and depth == 0:
            yield element, comma
            element, comma = [], token
            continue
        element.append(token)
    yield element, comma


# sqlglot describes the token it stopped at as `<Token token_type: ..., text: WHERE, ...>`.
_TOKEN_REPR = re.compile(r"<Token token_type: [^,]*, text: (.*?), line: .*?>")


def _parse_problem(error: ParseError, statement: Statement) -> str:
    """What sqlglot found wrong, and where in the dump: "Expecting ) (line 27, column 36)"."""
    detail = error.errors[0] if error.errors else {}
    description = _TOKEN_REPR.sub(r"'\1'", str(detail.get("description") or "syntax error"))
    description = re.sub(r" for <class '[\w.]+\.(\w+)'>", r" for \1", description)
    line = statement.line + int(detail.get("line") or 1) - 1
    return f"{description} (line {line}, column {detail.get('col') or 1})"


def _statement_kind(text: str) -> str:
    """The first words of a statement, which say what kind it is: "GRANT SELECT", "CREATE SERVER"."""
    return " ".join(re.findall(r"[A-Za-z_]+", text)[:2]).upper() or "such"


def _generated_sql(table: _Table, column: _Column, schema: Mapping[str, Mapping[str, str]]) -> str:
    """A generated column's expression as SQLite reads it in an UPDATE of its table, with the value
    rounded as the column's exact type stores it; raises TranspileError."""
    assert column.generated is not None
    return row_expression_sql(column.generated, table.name, schema, stored_in=column.declared)


# Column options that change nothing in the SQLite copy. MySQL ignores an inline REFERENCES.
_IGNORED_COLUMN_OPTIONS = (
    exp.CommentColumnConstraint,
    exp.OnUpdateColumnConstraint,
    exp.Reference,
)


def _apply_column_option(column: _Column, option: exp.Expr | None) -> None:
    if isinstance(option, exp.NotNullColumnConstraint):
        column.not_null = not option.args.get("allow_null")
    elif isinstance(option, exp.PrimaryKeyColumnConstraint):
        column.primary_key = True
    elif isinstance(option, exp.AutoIncrementColumnConstraint):
        column.auto_increment = True
    elif isinstance(option, exp.UniqueColumnConstraint):
        column.unique = True
    elif isinstance(option, exp.DefaultColumnConstraint):
        column.default = _default_sql(option.this, column)
    elif isinstance(option, exp.CharacterSetColumnConstraint):
        column.charset = option.this.name
        column.collation = sqlite_collation(column.charset, None)
    elif isinstance(option, exp.CollateColumnConstraint):
        column.collation = sqlite_collation(column.charset, option.this.name)
    elif isinstance(option, exp.CheckColumnConstraint):
        column.check = _sqlite_sql(option.this)
    elif isinstance(option, exp.ComputedColumnConstraint):
        column.generated = option.this
    elif isinstance(option, exp.GeneratedAsIdentityColumnConstraint) and option.args.get("expression"):
        column.generated = option.args["expression"]  # GENERATED ALWAYS AS (...) without VIRTUAL or STORED
    elif option is None:
        raise _Unsupported(f"column {column.name} has an option sqlglot cannot read")
    elif not isinstance(option, _IGNORED_COLUMN_OPTIONS):
        raise _Unsupported(f"column option {option.sql(dialect='mysql')} is not supported")


def _default_sql(node: exp.Expr, column: _Column) -> str:
    if isinstance(node, exp.Literal | exp.Neg | exp.Null | exp.Boolean):
        value = _value(node, column)
        return "NULL" if value is None else exp.convert(value).sql(dialect="sqlite")
    return f"({_sqlite_sql(node)})"


def _add_table_constraint(table: _Table, node: exp.Expr) -> None:
    if isinstance(node, exp.Constraint):  # CONSTRAINT name ...: the name does not matter to SQLite
        for inner in node.expressions:
            _add_table_constraint(table, inner)
    elif isinstance(node, exp.PrimaryKey):
        table.primary_key = [_key_column_name(part) for part in node.expressions]
    elif isinstance(node, exp.UniqueColumnConstraint):
        names = node.this.expressions if isinstance(node.this, exp.Schema) else []
        table.constraints.append(f"UNIQUE ({', '.join(_quote(_key_column_name(n)) for n in names)})")
    elif isinstance(node, exp.ForeignKey | exp.CheckColumnConstraint):
        table.constraints.append(_sqlite_sql(node))
    elif not isinstance(node, exp.IndexColumnConstraint):  # an ordinary index changes no result
        raise _Unsupported(f"table element {node.sql(dialect='mysql')} is not supported")


def _key_column_name(node: exp.Expr) -> str:
    # Key parts may carry a prefix length or an order: `name(10)`, `name DESC`.
    while not isinstance(node, exp.Identifier | exp.Column):
        node = node.this
    return node.name


def _alter_model(table: _Table, action: exp.Expr) -> None:
    if isinstance(action, exp.AddConstraint):
        for constraint in action.expressions:
            _add_table_constraint(table, constraint)
    elif isinstance(action, exp.ColumnDef):
        table.columns.append(_column(action, table))
    elif isinstance(action, exp.ModifyColumn):
        replacement = _column(action.this, table)
        existing = table.column(replacement.name)
        if existing is None:
            raise _Unsupported(f"table {table.name} has no column {replacement.name}")
        table.columns[table.columns.index(existing)] = replacement
    else:
        raise _Unsupported(f"ALTER TABLE action {action.sql(dialect='mysql')} is not supported")
    if any(c.primary_key for c in table.columns):
        table.primary_key = [c.name for c in table.columns if c.primary_key]
        for column in table.columns:
            column.primary_key = False


# --- Values as MySQL stores them ---------------------------------------------------------------------------


def _without_generated(
    columns: list[_Column], tuples: list[list[exp.Expr]]
) -> tuple[list[_Column], list[list[exp.Expr]]]:
    """The columns and values of an INSERT without its generated columns, which MySQL computes: the only
    value it takes for one is DEFAULT (error 3105 otherwise)."""
    kept = [index for index, column in enumerate(columns) if column.generated is None]
    for number, values in enumerate(tuples, 1):
        if len(values) != len(columns):
            raise _Unsupported(f"row {number} has {len(values)} values for {len(columns)} columns")
        for value, column in zip(values, columns, strict=True):
            if column.generated is not None and not (
                isinstance(value, exp.Var) and value.name.upper() == "DEFAULT"
            ):
                raise _Unsupported(f"row {number}: a value for generated column {column.name} is not allowed")
    return [columns[index] for index in kept], [[values[index] for index in kept] for values in tuples]


def _row(
    values: list[exp.Expr], columns: list[_Column], number: int, zero_is_a_value: bool = False
) -> tuple[object, ...]:
    if len(values) != len(columns):
        raise _Unsupported(f"row {number} has {len(values)} values for {len(columns)} columns")
    try:
        return tuple(
            _value(value, column, zero_is_a_value=zero_is_a_value)
            for value, column in zip(values, columns, strict=True)
        )
    except _Unsupported as problem:
        raise _Unsupported(f"row {number}: {problem}") from None


def _literal(node: exp.Expr) -> str | Decimal | bytes | None:
    """The Python value of a literal in an INSERT: str for strings, Decimal for numbers."""
    if isinstance(node, exp.Null):
        return None
    if isinstance(node, exp.Boolean):
        return Decimal(int(node.this))
    if isinstance(node, exp.Neg) and isinstance(node.this, exp.Literal) and not node.this.is_string:
        return -Decimal(node.this.name)
    if isinstance(node, exp.Literal):
        return node.name if node.is_string else Decimal(node.name)
    if isinstance(node, exp.HexString):
        digits = node.name
        return bytes.fromhex(digits if len(digits) % 2 == 0 else "0" + digits)
    if isinstance(node, exp.BitString):
        bits = node.name or "0"
        return int(bits, 2).to_bytes((len(bits) + 7) // 8, "big")
    if isinstance(node, exp.Introducer):  # _binary '...', _utf8mb4 0x...: the bytes or text written
        value = _literal(node.expression)
        if node.name.lower() == "_binary" and isinstance(value, str):
            return value.encode("utf-8", "surrogateescape")
        return value
    raise _Unsupported(f"the value {node.sql(dialect='mysql')} is not a constant")


def _value(node: exp.Expr, column: _Column, *, zero_is_a_value: bool = False) -> object:
    value = _literal(node)
    if value is None:
        return None
    sql_type = column.type
    kind = sql_type.kind if sql_type else None
    if column.auto_increment and value == Decimal(0) and not zero_is_a_value:
        return None  # MySQL numbers a row given 0 for its AUTO_INCREMENT column
    if column.labels:
        return _members(value, column)
    if column.mysql_type == "YEAR":
        return _year(value, column)
    if isinstance(value, bytes) and sql_type is not None and sql_type.kind == "exact":
        return int.from_bytes(value, "big")  # b'101' or 0x05 in a BIT (or integer) column
    if sql_type is not None and sql_type.is_temporal:
        stored = normalise_temporal(as_text(value), sql_type.kind)
        if stored is None:
            raise _Unsupported(f"invalid {column.declared} value for column {column.name}")
        return stored
    if sql_type is not None and sql_type.kind == "exact":
        return _exact(value, sql_type.scale, column)
    if kind == "float":
        return float(_number(value, column))
    if isinstance(value, bytes) and kind != "text":
        return value
    return as_text(value)  # a number stored in a text column keeps its digits: 12.50 -> '12.50'


def _members(value: object, column: _Column) -> str:
    """ENUM and SET store their members as declared ('SOSPESO' -> 'sospeso'), a SET in declared order.

    A number given to an ENUM is the position of a member.
    """
    if (
        isinstance(value, Decimal)
        and not column.is_set
        and 1 <= value <= len(column.labels)
        and value % 1 == 0
    ):
        return column.labels[int(value) - 1]
    given = as_text(value).split(",") if column.is_set else [as_text(value)]
    by_name = {label.lower().rstrip(): label for label in column.labels}
    members = {by_name.get(member.lower().rstrip()) for member in given if member or not column.is_set}
    if None in members:
        raise _Unsupported(f"invalid {'SET' if column.is_set else 'ENUM'} value for column {column.name}")
    return ",".join(label for label in column.labels if label in members)


def _year(value: object, column: _Column) -> int:
    """A YEAR as MySQL stores it: 1901 to 2155, a two-digit year read as 1970-2069, and 0 (or '0000');
    the string '0' or '00' is 2000, the number 0 the year 0."""
    text = as_text(value).strip()
    number = _exact(value, 0, column)
    if not isinstance(number, int):
        raise _Unsupported(f"invalid YEAR value for column {column.name}")
    if isinstance(value, str) and len(text) <= 2 and number == 0:
        return 2000
    if 1 <= number <= 69:
        return 2000 + number
    if 70 <= number <= 99:
        return 1900 + number
    if number == 0 or 1901 <= number <= 2155:
        return number
    raise _Unsupported(f"invalid YEAR value for column {column.name}")


def _number(value: object, column: _Column) -> Decimal:
    if isinstance(value, Decimal):
        return value
    try:
        return Decimal(as_text(value).strip())
    except InvalidOperation:
        raise _Unsupported(f"invalid {column.declared} value for column {column.name}") from None


def _exact(value: object, scale: int, column: _Column) -> int | float:
    # MySQL rounds half away from zero to the column's scale (to an integer for integer types).
    rounded = _number(value, column).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
    return int(rounded) if scale == 0 else float(rounded)


# --- Schemas ------------------------------------------------------------------------------------------------


# Statements that hold or guard data: a dump without them builds the same tables, empty.
_DATA_STATEMENT = re.compile(
    r"(INSERT|REPLACE|LOCK\s+TABLES?|UNLOCK\s+TABLES?)\b|ALTER\s+TABLE\s+\S+\s+(DISABLE|ENABLE)\s+KEYS\s*\Z",
    re.IGNORECASE,
)
_TERMINATOR = re.compile(r"\s*;")


def schema_text(dump_sql: str, *, source: str = "mysql") -> str:
    """The dump as its authors wrote it, without its data: the schema shown to participants.

    Each data statement is cut together with what lies between it and the statement before (mysqldump's
    "Dumping data for table" comments and its /*!40000 ... KEYS */ guards); every other statement keeps
    its text, its comments and its place, so what is left builds the same tables as the dump, empty.
    """
    kept = []
    copied_to = 0  # the text before this position is either kept already or cut
    previous_end = 0  # just past the terminator of the statement before
    for statement_end, data in _statement_extents(dump_sql, source):
        if data:
            kept.append(dump_sql[copied_to:previous_end])
            copied_to = statement_end
        previous_end = statement_end
    kept.append(dump_sql[copied_to:])
    text = "".join(kept).strip()
    return f"{text}\n" if text else ""


def _statement_extents(dump_sql: str, source: str) -> Iterator[tuple[int, bool]]:
    """Where each statement stops (past its terminator), and whether it is data."""
    if source == "mysql":
        for statement in read_dump(dump_sql):
            yield statement.stop, _DATA_STATEMENT.match(statement.text) is not None
        return
    for start, end in statement_spans(dump_sql, source=source):
        terminator = _TERMINATOR.match(dump_sql, end)
        yield terminator.end() if terminator else end, _DATA_STATEMENT.match(dump_sql, start) is not None


def shape_of_ddl(ddl: str, *, source: str = "mysql") -> Shape:
    """The shape of the tables a schema text (or a whole dump) builds; raises DumpError."""
    with tempfile.TemporaryDirectory(prefix="termite-schema-") as folder:
        target = Path(folder) / "schema.sqlite3"
        build_sqlite(schema_text(ddl, source=source), target, source=source)
        return read_shape(target)


def sqlite_schema(path: Path) -> str:
    """The CREATE TABLE statements of a built SQLite file."""
    with contextlib.closing(sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)) as conn:
        rows = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid"
        ).fetchall()
    return "".join(f"{sql};\n\n" for (sql,) in rows).rstrip("\n") + ("\n" if rows else "")


def missing_identifiers(
    sql: str, schema_columns: Mapping[str, Iterable[str]], *, source: str = "mysql"
) -> list[str]:
    """Tables and columns the query uses that `schema_columns` (table -> columns) lacks, sorted.

    Names compare case-insensitively, as MySQL compares column names. Aliases are resolved; an unqualified
    column is fine when any table in reach has it, or when it names an output column. Reported as
    "table" for a missing table, "table.column" for a missing column ("column" alone when several
    tables could have held it).
    """
    tree, _ = parse_one(sql, source=source)
    tables = {
        table.lower(): dict.fromkeys(c.lower() for c in columns) for table, columns in schema_columns.items()
    }
    resolver = ColumnResolver(tables)
    missing: set[str] = set()
    for scope in traverse_scope(tree):
        for _, source_node in scope.selected_sources.values():
            if isinstance(source_node, exp.Table) and source_node.name.lower() not in tables:
                missing.add(source_node.name)
        for column in _own_columns(scope):
            if resolver.column(column, scope) is None:
                missing.update(_describe_missing(column, scope, tables))
    return sorted(missing)


def _own_columns(scope: Scope) -> Iterator[exp.Column]:
    for node in scope.walk():
        if isinstance(node, exp.Column) and not node.is_star:
            yield node


def _describe_missing(column: exp.Column, scope: Scope, tables: Mapping[str, object]) -> list[str]:
    if column.table:
        source = scope_sources(scope).get(column.table.lower())
        if isinstance(source, exp.Table):
            # A column of a table the schema lacks altogether: the table is reported instead.
            return [] if source.name.lower() not in tables else [f"{source.name}.{column.name}"]
        return [f"{column.table}.{column.name}"]
    in_from = [source.name for source in scope_sources(scope).values() if isinstance(source, exp.Table)]
    return [f"{in_from[0]}.{column.name}" if len(in_from) == 1 else column.name]
