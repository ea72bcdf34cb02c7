"""Neighbour databases for test-suite accuracy: the schema of a database, with other data drawn from its own.

Test-suite accuracy (Zhong, Yu and Klein, EMNLP 2020) counts a prediction right only when it returns the
gold's rows on the original database and on a suite of neighbours. `neighbour_dump` writes one neighbour,
deterministically from a seed, as a dump that `mysql_dump.build_sqlite` builds and MariaDB loads: the
schema text, then one multi-row INSERT per table.

- Values. A column draws from a pool of values its MySQL type accepts under STRICT_TRANS_TABLES (lengths,
  character sets, ENUM and SET labels, integer and DECIMAL ranges, UNSIGNED, valid dates): its own values,
  the gold queries' literals that fit it, values near those (numbers ±1, ±10 and ± one unit of their
  scale, dates ±1 day, datetimes ±1 day and ±1 second, times ±1 minute, text in upper and lower case, the
  other labels) and NULL where the column allows it.
- Samples. What a neighbour draws from is read once per database (`NeighbourSource`), from a sample of
  each table larger than `SAMPLE_READ` rows (`SAMPLE_UNREAD` for a table no gold reads): the rows holding
  the gold's literals first, then those joined to their parents' samples. A smaller table is read whole.
- Rows. Tables are filled parents first. A row copies an original row, so that its values stay correlated,
  and redraws some of its columns, more often those that the gold compares with literals. A table gets 0
  to `max_rows` rows, mostly a few; sometimes it copies only one or two original rows, or holds a column to
  one or two values, so that DISTINCT, COUNT, GROUP BY, ties under ORDER BY ... LIMIT and empty joins are
  exercised.
- Keys. A row that would repeat a primary or unique key is drawn again. Text keys compare as MySQL 8.0's
  utf8mb4_0900_ai_ci (the copy's collation) and as MariaDB's utf8mb4_general_ci do: case and accents
  ignored, trailing spaces too for the latter. A foreign key takes the key of a parent row of this
  neighbour (for a self-reference, an earlier row or the row itself), or NULL when all its columns allow
  it: a NOT NULL foreign key to an empty table, or to a later table of a cycle, leaves its table empty.
- Constraints the neighbour cannot see through: a column that a CHECK constraint names, and a JSON column
  (MariaDB checks it is valid JSON), takes only values of original rows, none drawn near them.
- What MySQL computes itself is not written: a generated column is left out of the INSERTs; the schema
  text's triggers are left out of the neighbour, whose rows come after them, so that both engines hold the
  rows as written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import math
import random
import re
import sqlite3
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Literal

import sqlglot
from sqlglot import exp

from evaluation.scoring.collations import general_weight, uca_weight
from evaluation.scoring.dump_statements import read_dump
from evaluation.scoring.functions import normalise_temporal
from evaluation.scoring.mysql_dump import prepared_create_table
from evaluation.scoring.schema_shape import ForeignKey, Shape, Table, read_shape
from evaluation.scoring.statements import (
    SQLGLOT_DIALECTS,
    Statement,
    check_source,
    split_statements,
    statement_spans,
)
from evaluation.scoring.stored_programs import Trigger, read_program

Value = int | Decimal | float | str | bytes  # a value as drawn: Decimal for DECIMAL, canonical text for dates
Row = tuple[Value | None, ...]
Kind = Literal[
    "integer", "decimal", "float", "text", "enum", "set", "date", "datetime", "time", "bytes", "other"
]


def neighbour_dump(
    *,
    original: Path,
    schema_text: str,
    seed: str,
    literals: Mapping[str, Collection[object]] | None = None,
    max_rows: int = 30,
    source: str = "mysql",
) -> str:
    """A neighbour of the database built at `original`: `schema_text` (its tables without data, in the
    dialect `source`) followed by an INSERT for each table that gets rows.

    `literals` are the gold queries' literals by the lower-case name of the column they are compared with;
    those under "" are tied to no column and go to every column of their family (numbers to number
    columns, strings to the others). The same arguments give the same text, byte for byte. Raises
    ValueError when `schema_text` does not declare a column of `original`. A suite draws many neighbours of
    one database: `NeighbourSource` reads it once for all of them.
    """
    drawn_from = NeighbourSource(
        original=original, schema_text=schema_text, literals=literals, source=source, sample_seed=seed
    )
    return drawn_from.neighbour(seed, max_rows=max_rows)


# A neighbour copies and redraws rows of a sample of each table, never more than these many: the rows of a
# table that a gold query reads (those holding its literals first, then those whose foreign keys land in
# the samples of their parents, so that joins keep matching), and fewer of a table no gold query reads,
# which only gives its key and values to the tables that reference it. A neighbour holds at most a few
# dozen rows of each table, so a sample of hundreds shows it as much variety as the whole table would,
# and the pools of values are read from the sample once, not from every row for every candidate: the
# build no longer grows with the data (issue 32: 166 s for 46,273 rows, 3 minutes for 50,000).
SAMPLE_READ = 2_000
SAMPLE_UNREAD = 100


@dataclass(frozen=True)
class _SampledTable:
    table: Table
    types: list[_ColumnType]
    bases: list[Row]  # the sample, as the columns' types read it, in the table's order
    pools: list[_Pool]


class NeighbourSource:
    """What every neighbour of one database draws from, read once: its shape, the types its schema text
    declares, and a sample of each table's rows with the pools of values of each column.

    `read_tables` names (in any case) the tables the gold queries read, which get the larger sample; None
    takes every table as read. `sample_seed` picks the sample of a table larger than it, the same for the
    same seed; a table no larger is taken whole, so a small database gives the neighbours it always gave.
    Raises ValueError when `schema_text` does not declare a column of `original`.
    """

    def __init__(
        self,
        *,
        original: Path,
        schema_text: str,
        literals: Mapping[str, Collection[object]] | None = None,
        source: str = "mysql",
        read_tables: Collection[str] | None = None,
        sample_seed: str = "",
    ) -> None:
        check_source(source)
        self.schema_text, self.source = schema_text, source
        self._shape = read_shape(original)
        declared = _column_types(schema_text, source)
        given = _literals_by_column(literals or {})
        read = None if read_tables is None else {name.lower() for name in read_tables}
        rng = random.Random(int.from_bytes(hashlib.sha256(f"sample:{sample_seed}".encode()).digest(), "big"))
        sampled_keys: dict[str, dict[str, set[object]]] = {}  # table -> parent column -> keys sampled
        self._tables: list[_SampledTable] = []
        with contextlib.closing(
            sqlite3.connect(f"{Path(original).resolve().as_uri()}?mode=ro", uri=True)
        ) as conn:
            for table in _fill_order(self._shape):
                types = [_declared(declared, table.name, column.name) for column in table.columns]
                names = ", ".join(_identifier(column.name, "sqlite") for column in table.columns)
                originals = conn.execute(
                    f"SELECT {names} FROM {_identifier(table.name, 'sqlite')} ORDER BY rowid"
                ).fetchall()
                size = SAMPLE_READ if read is None or table.name.lower() in read else SAMPLE_UNREAD
                if len(originals) > size:
                    originals = _sample(rng, table, originals, size, given, sampled_keys)
                bases = _fitting_rows(originals, types)
                sampled_keys[table.name.lower()] = {
                    column.name.lower(): {row[i] for row in bases} for i, column in enumerate(table.columns)
                }
                pools = [
                    _pool(
                        (row[i] for row in bases),
                        _literals_for(column.name, kind, given),
                        kind,
                        nullable=not _not_null(table)[i],
                    )
                    for i, (column, kind) in enumerate(zip(table.columns, types, strict=True))
                ]
                self._tables.append(_SampledTable(table, types, bases, pools))

    def sample(self, table: str) -> list[Row]:
        """The rows of `table` (named in any case) that its neighbours copy and redraw, in its order."""
        return next(t.bases for t in self._tables if t.table.name.lower() == table.lower())

    def neighbour(self, seed: str, *, max_rows: int = 30) -> str:
        """One neighbour, drawn from `seed`: the same text for the same seed, byte for byte."""
        if max_rows < 0:
            raise ValueError("max_rows cannot be negative")
        rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest(), "big"))
        generated: dict[str, list[Row]] = {}
        inserts = []
        for sampled in self._tables:
            table, types = sampled.table, sampled.types
            draw = _TableDraw(rng, table, types, sampled.bases, sampled.pools, generated, self._shape)
            rows = generated[table.name.lower()] = _one_spelling(draw.rows(_row_count(rng, max_rows)), types)
            if rows:
                inserts.append(_insert_sql(table, rows, self.source, types))
        schema = _without_triggers(self.schema_text) if self.source == "mysql" else self.schema_text
        return _terminated(schema, self.source).rstrip("\n") + "\n\n" + "\n".join(inserts)


def _sample(
    rng: random.Random,
    table: Table,
    rows: list[tuple[object, ...]],
    size: int,
    literals: Mapping[str, list[object]],
    sampled_keys: Mapping[str, Mapping[str, set[object]]],
) -> list[tuple[object, ...]]:
    """`size` of the table's rows, in their order: first those holding a literal the gold compares their
    column with, then those whose every foreign key lands in its parent's sample, then any."""
    position = {column.name.lower(): i for i, column in enumerate(table.columns)}
    wanted = {
        position[name]: {_comparable(value) for value in values}
        for name, values in literals.items()
        if name in position
    }
    links = [
        (
            [position[name.lower()] for name in key.columns],
            [sampled_keys.get(key.table.lower(), {}).get(name.lower()) for name in key.references],
        )
        for key in table.foreign_keys
        if key.table.lower() != table.name.lower()
    ]

    def rank(row: tuple[object, ...]) -> int:
        if any(_comparable(row[i]) in values for i, values in wanted.items()):
            return 0
        joined = all(
            keys is not None and (row[i] is None or row[i] in keys)
            for columns, parents in links
            for i, keys in zip(columns, parents, strict=True)
        )
        return 1 if joined else 2

    numbered = list(enumerate(rows))
    rng.shuffle(numbered)
    numbered.sort(key=lambda item: rank(item[1]))  # stable: shuffled within each rank
    return [row for _, row in sorted(numbered[:size], key=lambda item: item[0])]


def _comparable(value: object) -> object:
    """A value as a gold's literal would name it: text without case, numbers as numbers."""
    if isinstance(value, str):
        return value.casefold()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _decimal(value)
    return value


def _not_null(table: Table) -> list[bool]:
    primary = {name.lower() for name in table.primary_key}  # MySQL makes a primary key NOT NULL
    return [column.not_null or column.name.lower() in primary for column in table.columns]


# --- Column types, from the schema text ------------------------------------------------------------------


@dataclass(frozen=True)
class _ColumnType:
    """The values MySQL accepts in a column under STRICT_TRANS_TABLES."""

    kind: Kind
    low: Decimal | None = None  # numbers: the range
    high: Decimal | None = None
    scale: int = 0  # DECIMAL: digits after the point
    length: int | None = None  # text: characters, or bytes for the TEXT types; binary strings: bytes
    in_bytes: bool = False
    labels: tuple[str, ...] = ()  # ENUM and SET
    charset: str = "utf8mb4"
    timestamp: bool = False  # TIMESTAMP holds 1970 to 2038 only
    checked: bool = False  # takes only values of original rows
    generated: bool = False  # a generated column: MySQL computes it, an INSERT gives it no value

    @property
    def is_number(self) -> bool:
        return self.kind in ("integer", "decimal", "float")


_INTEGER_BITS = {"TINYINT": 8, "SMALLINT": 16, "MEDIUMINT": 24, "INT": 32, "BIGINT": 64}
_SIGNED = {*_INTEGER_BITS, "DECIMAL", "FLOAT", "DOUBLE"}  # sqlglot spells UNSIGNED as a U prefix: UINT
_SIZED = {"TINY": 2**8 - 1, "": 2**16 - 1, "MEDIUM": 2**24 - 1, "LONG": 2**32 - 1}  # TEXT and BLOB, in bytes
_TABLE_STATEMENT = re.compile(r"(CREATE|ALTER)\s+(TEMPORARY\s+)?TABLE\b", re.IGNORECASE)


def _column_types(schema_text: str, source: str) -> dict[str, dict[str, _ColumnType]]:
    """Table -> column -> type, names in lower case, from CREATE TABLE and ALTER TABLE ... ADD / MODIFY."""
    tables: dict[str, dict[str, _ColumnType]] = {}
    charsets: dict[str, str] = {}
    for statement in _statements(schema_text, source):
        if not _TABLE_STATEMENT.match(statement.text):
            continue
        # MySQL's column attributes that sqlglot cannot read (BINARY, spatial types) are read as the copy
        # reads them.
        text = prepared_create_table(statement.text)[0] if source == "mysql" else statement.text
        node = sqlglot.parse_one(text, read=SQLGLOT_DIALECTS[source])
        if isinstance(node, exp.Create) and isinstance(node.this, exp.Schema):
            name = node.this.this.name.lower()
            charsets[name] = _table_charset(node)
            tables[name] = {}
            definitions = list(node.this.expressions)
        elif isinstance(node, exp.Alter) and node.this.name.lower() in tables:
            name = node.this.name.lower()
            definitions = [
                a.this if isinstance(a, exp.ModifyColumn) else a for a in node.args.get("actions") or []
            ]
        else:
            continue
        columns = tables[name]
        for definition in definitions:
            if isinstance(definition, exp.ColumnDef):
                columns[definition.name.lower()] = _column_type(definition, charsets[name])
        for check in node.find_all(exp.CheckColumnConstraint):
            for named in check.find_all(exp.Column):
                if named.name.lower() in columns:
                    columns[named.name.lower()] = replace(columns[named.name.lower()], checked=True)
    return tables


def _statements(text: str, source: str) -> list[Statement]:
    return list(read_dump(text)) if source == "mysql" else split_statements(text, source=source)


def _without_triggers(schema_text: str) -> str:
    """The schema text without its CREATE TRIGGER statements."""
    kept, copied_to = [], 0
    for statement in read_dump(schema_text):
        if statement.text[:6].upper() == "CREATE" and isinstance(read_program(statement.text), Trigger):
            kept.append(schema_text[copied_to : statement.start])
            copied_to = statement.stop
    kept.append(schema_text[copied_to:])
    return "".join(kept)


def _table_charset(node: exp.Create) -> str:
    properties = node.args.get("properties")
    for option in properties.expressions if properties else []:
        if isinstance(option, exp.CharacterSetProperty):
            return option.name.lower()
        if isinstance(option, exp.CollateProperty):
            return option.name.lower().split("_")[0]  # a collation names its character set: latin1_bin
    return "utf8mb4"  # the reference database's own


def _column_type(node: exp.ColumnDef, table_charset: str) -> _ColumnType:
    kind = node.args.get("kind")
    if not isinstance(kind, exp.DataType):
        return _ColumnType("other")
    name = kind.this.name
    params = [
        int(p.this.name) for p in kind.expressions if isinstance(p, exp.DataTypeParam) and p.this.is_int
    ]
    serial = name == "SERIAL"  # BIGINT UNSIGNED NOT NULL AUTO_INCREMENT UNIQUE
    unsigned = serial or (name.startswith("U") and name[1:] in _SIGNED)
    name = "BIGINT" if serial else name[1:] if unsigned else name
    options = [constraint.args.get("kind") for constraint in node.constraints]  # `kind` may raise TypeError
    if any(
        isinstance(o, exp.ComputedColumnConstraint)
        or (isinstance(o, exp.GeneratedAsIdentityColumnConstraint) and o.args.get("expression"))
        for o in options
    ):
        return _ColumnType("other", generated=True)
    auto_increment = serial or any(isinstance(o, exp.AutoIncrementColumnConstraint) for o in options)
    charsets = [o.this.name.lower() for o in options if isinstance(o, exp.CharacterSetColumnConstraint)]
    if name == "BOOLEAN" or (name == "TINYINT" and params == [1]):
        return _ColumnType("integer", Decimal(0), Decimal(1))  # MySQL's BOOLEAN: true and false only
    if name in _INTEGER_BITS:
        bits = _INTEGER_BITS[name]
        low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
        # 0 in an AUTO_INCREMENT column makes MySQL number the row itself.
        return _ColumnType("integer", Decimal(max(low, 1) if auto_increment else low), Decimal(high))
    if name == "YEAR":
        return _ColumnType("integer", Decimal(1901), Decimal(2155))
    if name == "BIT":
        return _ColumnType("integer", Decimal(0), Decimal(2 ** (params[0] if params else 1) - 1))
    if name == "DECIMAL" or (name in ("FLOAT", "DOUBLE") and len(params) == 2):
        precision, scale = (params + [10, 0][len(params) :])[:2]  # MySQL's DECIMAL is DECIMAL(10,0)
        high = Decimal(10) ** (precision - scale) - _unit(scale)
        return _ColumnType(
            "decimal" if name == "DECIMAL" else "float", Decimal(0) if unsigned else -high, high, scale
        )
    if name in ("FLOAT", "DOUBLE"):
        return _ColumnType("float", Decimal(0) if unsigned else None)
    charset = charsets[0] if charsets else table_charset
    if name in ("CHAR", "VARCHAR", "NCHAR", "NVARCHAR"):
        return _ColumnType("text", length=params[0] if params else 1, charset=charset)
    if name.endswith(("TEXT", "BLOB")) and name[:-4] in _SIZED:
        return _ColumnType(
            "text" if name.endswith("TEXT") else "bytes",
            length=_SIZED[name[:-4]],
            in_bytes=True,
            charset=charset,
        )
    if name in ("ENUM", "SET"):
        return _ColumnType(
            "enum" if name == "ENUM" else "set", labels=tuple(label.name for label in kind.expressions)
        )
    if name == "JSON":  # MariaDB's JSON is text that must read as JSON
        return _ColumnType("text", checked=True)
    if name in ("DATE", "TIME"):
        return _ColumnType("date" if name == "DATE" else "time")
    if name.startswith(("DATETIME", "TIMESTAMP")):  # sqlglot calls MySQL's TIMESTAMP TIMESTAMPTZ
        return _ColumnType("datetime", timestamp=name.startswith("TIMESTAMP"))
    if name in ("BINARY", "VARBINARY"):
        return _ColumnType("bytes", length=params[0] if params else 1)
    return _ColumnType("other")


def _declared(declared: Mapping[str, Mapping[str, _ColumnType]], table: str, column: str) -> _ColumnType:
    found = declared.get(table.lower(), {}).get(column.lower())
    if found is None:
        raise ValueError(f"the schema text does not declare the column {table}.{column}")
    return found


def _unit(scale: int) -> Decimal:
    return Decimal(1).scaleb(-scale)


# --- Values a column accepts, and values near them --------------------------------------------------------

_TIMESTAMP_RANGE = ("1970-01-02 00:00:00", "2038-01-18 23:59:59")  # a day inside it, whatever the time zone


def _fit(value: object, column: _ColumnType) -> Value | None:
    """`value` as the column stores it, or None when MySQL would refuse it (or it is NULL)."""
    if value is None or (isinstance(value, bool) and not column.is_number):
        return None
    if column.kind == "other":
        return value if isinstance(value, Value) else None
    if column.is_number:
        return _fit_number(value, column)
    if column.kind == "bytes":
        return value if isinstance(value, bytes) and len(value) <= (column.length or 0) else None
    if isinstance(value, int | Decimal):
        value = str(value)  # MySQL reads a number given to a text or date column as its digits
    if not isinstance(value, str):
        return None
    if column.kind == "text":
        return value if _fits_text(value, column) else None
    if column.kind in ("enum", "set"):
        return _members(value, column)
    stored = normalise_temporal(value, column.kind)
    if stored is not None and column.timestamp and not _TIMESTAMP_RANGE[0] <= stored <= _TIMESTAMP_RANGE[1]:
        return None
    return stored


def _fit_number(value: object, column: _ColumnType) -> int | Decimal | float | None:
    number = _decimal(value)
    if number is None:
        return None
    if column.kind != "float":
        try:
            rounded = number.quantize(_unit(column.scale), rounding=ROUND_HALF_UP)  # as MySQL rounds
        except InvalidOperation:  # more digits than any column holds
            return None
        if column.kind == "integer" and rounded != number:
            return None
        number = rounded
    if (column.low is not None and number < column.low) or (column.high is not None and number > column.high):
        return None
    if column.kind == "float":
        return float(number) if math.isfinite(float(number)) else None
    return int(number) if column.kind == "integer" else number


def _decimal(value: object) -> Decimal | None:
    if isinstance(value, int | Decimal):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value)) if math.isfinite(value) else None  # repr: the float's shortest digits
    if isinstance(value, str):
        with contextlib.suppress(InvalidOperation):
            number = Decimal(value.strip())
            return number if number.is_finite() else None
    return None


def _fits_text(text: str, column: _ColumnType) -> bool:
    if column.length is not None and (len(text.encode()) if column.in_bytes else len(text)) > column.length:
        return False
    if column.charset in ("utf8mb4", "utf8", "utf8mb3"):
        return column.charset == "utf8mb4" or all(ord(char) <= 0xFFFF for char in text)
    try:  # MySQL's latin1 is Windows-1252; of any other character set, only ASCII is sure to fit
        text.encode("cp1252" if column.charset == "latin1" else "ascii")
    except UnicodeEncodeError:
        return False
    return True


def _members(text: str, column: _ColumnType) -> str | None:
    """The ENUM label or the SET members that `text` names, as declared and in declared order (MySQL ignores
    case and trailing spaces)."""
    by_name = {label.lower().rstrip(): label for label in column.labels}
    given = text.split(",") if column.kind == "set" else [text]
    members = [by_name.get(member.lower().rstrip()) for member in given if member or column.kind == "enum"]
    if None in members:
        return None
    return ",".join(label for label in column.labels if label in members)


def _near(value: Value, column: _ColumnType) -> list[object]:
    """Values that a query's condition may tell apart from `value`; some may not fit the column."""
    if column.is_number:
        number = _decimal(value) or Decimal(0)
        unit = {"integer": Decimal(1), "decimal": _unit(column.scale)}.get(column.kind, Decimal("0.1"))
        return [
            number + sign * step
            for step in dict.fromkeys((unit, Decimal(1), Decimal(10)))
            for sign in (-1, 1)
        ]
    if column.kind in ("enum", "set"):
        return ["", *column.labels] if column.kind == "set" else list(column.labels)
    if not isinstance(value, str):
        return []
    if column.kind == "text":
        return [value.upper(), value.lower()]
    if column.kind == "time":
        return [_shifted_time(value, seconds) for seconds in (-60, 60)]
    if column.kind in ("date", "datetime"):
        seconds = (-86_400, 86_400) if column.kind == "date" else (-86_400, -1, 1, 86_400)
        return [_shifted_moment(value, shift) for shift in seconds]  # _fit keeps a DATE's date
    return []


def _shifted_moment(text: str, seconds: int) -> str | None:
    try:
        return (dt.datetime.fromisoformat(text) + dt.timedelta(seconds=seconds)).isoformat(sep=" ")
    except (ValueError, OverflowError):  # MySQL's zero dates, the ends of the calendar
        return None


def _shifted_time(text: str, seconds: int) -> str | None:
    # A TIME is a signed duration that may exceed a day ('-01:30:00', '100:00:00'), not a time of day.
    try:
        hours, minutes, rest = (int(part) for part in text.lstrip("-").split(":"))
    except ValueError:
        return None
    total = (-1 if text.startswith("-") else 1) * (hours * 3600 + minutes * 60 + rest) + seconds
    hours, rest = divmod(abs(total), 3600)
    return f"{'-' if total < 0 else ''}{hours:02d}:{rest // 60:02d}:{rest % 60:02d}"


# --- Pools -------------------------------------------------------------------------------------------------

# How often a drawn value is one of the column's own, a literal, a near value, or NULL.
_OWN, _LITERAL, _NEAR, _NULL = 0.4, 0.35, 0.15, 0.1
_LITERAL_REDRAW = 0.5
# Values to start from in a column with none: each fits some types.
_STAND_INS = (1, "a", "", "2000-01-01 12:00:00", b"")


@dataclass(frozen=True)
class _Pool:
    """Where a column's drawn values come from: groups of values, each with its weight."""

    groups: tuple[tuple[Value | None, ...], ...]
    weights: tuple[float, ...]
    redraw: float  # how often at least a copied row's value is redrawn

    def draw(self, rng: random.Random) -> Value | None:
        return rng.choice(rng.choices(self.groups, self.weights)[0])


def _pool(own: Iterable[object], literals: Iterable[object], column: _ColumnType, *, nullable: bool) -> _Pool:
    fitting = _fitting(own, column)
    given = () if column.checked else _fitting(literals, column)  # a literal may break the CHECK
    stand_ins = () if fitting or given or column.checked else _stand_ins(column)
    seeds = fitting + given + stand_ins
    near = () if column.checked else _fitting((v for seed in seeds for v in _near(seed, column)), column)
    options = (
        (fitting, _OWN),
        (given, _LITERAL),
        (stand_ins + near, _NEAR),
        ((None,) if nullable else (), _NULL),
    )
    kept = [(group, weight) for group, weight in options if group]
    # The gold compares this column with its literals: rows that hold them tell queries apart.
    redraw = _LITERAL_REDRAW if given else 0.0
    return _Pool(tuple(group for group, _ in kept), tuple(weight for _, weight in kept), redraw)


def _stand_ins(column: _ColumnType) -> tuple[Value, ...]:
    """Values to start from in a column with none (an empty table, no literals)."""
    return _fitting([*column.labels[:1], column.low, *_STAND_INS], column)


def _fitting(values: Iterable[object], column: _ColumnType) -> tuple[Value, ...]:
    return tuple(dict.fromkeys(v for v in (_fit(value, column) for value in values) if v is not None))


def _fitting_rows(rows: Iterable[tuple[object, ...]], types: Sequence[_ColumnType]) -> list[Row]:
    """The original rows as their columns' types read them, but those holding a value a type refuses."""
    fitted = []
    for row in rows:
        values = tuple(_fit(value, column) for value, column in zip(row, types, strict=True))
        if all((stored is None) == (value is None) for stored, value in zip(values, row, strict=True)):
            fitted.append(values)
    return fitted


def _literals_by_column(literals: Mapping[str, Collection[object]]) -> dict[str, list[object]]:
    # Sorted, so that a set of literals gives the same neighbour whatever the hash seed of the process.
    by_column: dict[str, list[object]] = {}
    for name in sorted(literals):
        ordered = sorted(literals[name], key=lambda value: (type(value).__name__, repr(value)))
        by_column.setdefault(name.lower(), []).extend(ordered)
    return by_column


def _literals_for(name: str, column: _ColumnType, literals: Mapping[str, list[object]]) -> list[object]:
    """The literals compared with the column, then those tied to no column that are of its family."""
    untied = (v for v in literals.get("", []) if isinstance(v, int | float | Decimal) == column.is_number)
    return [*literals.get(name.lower(), []), *untied]


# --- Rows --------------------------------------------------------------------------------------------------


def _row_count(rng: random.Random, max_rows: int) -> int:
    """Mostly a few rows; sometimes none, a single one, or any number up to max_rows."""
    roll = rng.random()
    if roll < 0.08:
        return 0
    if roll < 0.18:
        return min(1, max_rows)
    if roll < 0.75:
        return rng.randint(min(2, max_rows), min(8, max_rows))
    return rng.randint(0, max_rows)


@dataclass(frozen=True)
class _Link:
    """A foreign key: its columns in the child, and the keys of the parent rows it may take."""

    columns: tuple[int, ...]
    nullable: bool
    choices: tuple[tuple[Value | None, ...], ...]
    self_columns: tuple[int, ...] = ()  # a self-reference's parent columns: its choices grow with the table


class _TableDraw:
    """The rows of one table of a neighbour, drawn after those of the tables it references."""

    def __init__(
        self,
        rng: random.Random,
        table: Table,
        types: list[_ColumnType],
        bases: list[Row],
        pools: list[_Pool],
        generated: Mapping[str, list[Row]],
        shape: Shape,
    ) -> None:
        self._rng, self._types, self._bases, self._pools = rng, types, bases, pools
        position = {column.name.lower(): i for i, column in enumerate(table.columns)}
        self._not_null = _not_null(table)
        self._keys = _Keys(
            [tuple(position[n.lower()] for n in key) for key in (table.primary_key, *table.unique) if key]
        )
        # Keys to other tables first: a self-reference may point at its own row, once that row has its key.
        ordered = sorted(table.foreign_keys, key=lambda key: key.table.lower() == table.name.lower())
        self._links = [self._link(key, position, table, generated, shape) for key in ordered]
        self._linked = {i for link in self._links for i in link.columns}
        # Each neighbour leans its own way: how much of a row is redrawn, how few original rows are copied,
        # which columns hold one or two values (ties, groups); a column that is a key on its own holds none.
        self._redraw = rng.choice((0.1, 0.3, 0.6))
        if bases and rng.random() < 0.2:
            self._bases = rng.sample(bases, min(len(bases), rng.randint(1, 2)))
        alone = {key[0] for key in self._keys.columns if len(key) == 1}
        self._held = {
            i: tuple(pool.draw(rng) for _ in range(rng.randint(1, 2)))
            for i, pool in enumerate(self._pools)
            if i not in self._linked | alone and not types[i].checked and pool.groups and rng.random() < 0.2
        }

    def _link(
        self,
        key: ForeignKey,
        position: Mapping[str, int],
        table: Table,
        generated: Mapping[str, list[Row]],
        shape: Shape,
    ) -> _Link:
        columns = tuple(position[name.lower()] for name in key.columns)
        nullable = not any(self._not_null[i] for i in columns)
        parent = next((t for t in shape if t.name.lower() == key.table.lower()), None)
        parent_position = {c.name.lower(): i for i, c in enumerate(parent.columns)} if parent else {}
        if any(name.lower() not in parent_position for name in key.references):
            return _Link(columns, nullable, ())  # a key to nothing the copy holds: NULL, or no rows
        parent_columns = tuple(parent_position[name.lower()] for name in key.references)
        if key.table.lower() == table.name.lower():
            return _Link(columns, nullable, (), parent_columns)
        keys = (tuple(row[j] for j in parent_columns) for row in generated.get(key.table.lower(), []))
        fitting = (
            k
            for k in keys
            if all(_fit(v, self._types[i]) is not None for v, i in zip(k, columns, strict=True))
        )
        return _Link(columns, nullable, tuple(dict.fromkeys(fitting)))

    def rows(self, count: int) -> list[Row]:
        rows: list[Row] = []
        for _ in range(count):
            for attempt in range(4):  # a row that repeats a key is drawn again, with its key redrawn
                row = self._row(rows, fresh_keys=attempt > 0)
                if row is not None and self._keys.admit(row):
                    rows.append(row)
                    break
        return rows

    def _row(self, rows: list[Row], *, fresh_keys: bool) -> Row | None:
        rng = self._rng
        base = rng.choice(self._bases) if self._bases else None
        row: list[Value | None] = []
        for i, (column, pool) in enumerate(zip(self._types, self._pools, strict=True)):
            redraw_key = fresh_keys and i in self._keys.members
            if i in self._linked:
                row.append(None)  # set by its foreign key below
            elif base is not None and (
                column.checked
                or not (i in self._held or redraw_key or rng.random() < max(self._redraw, pool.redraw))
            ):
                row.append(base[i])
            elif i in self._held:
                row.append(rng.choice(self._held[i]))
            elif (
                redraw_key
                and column.kind == "integer"
                and (fresh := _next_integer(rows, i, column)) is not None
            ):
                row.append(fresh)
            elif pool.groups:
                row.append(pool.draw(rng))
            else:
                return None
        pending = set(self._linked)
        if not all(self._follow(link, row, base, pending, rows) for link in self._links):
            return None
        return tuple(row)

    def _follow(
        self, link: _Link, row: list[Value | None], base: Row | None, pending: set[int], rows: list[Row]
    ) -> bool:
        """Give the link's columns the key of a parent row, or NULL; False when neither will do."""
        choices = link.choices
        if link.self_columns:  # an earlier row, or this one
            candidates = [*rows, *([] if pending & set(link.self_columns) else [tuple(row)])]
            choices = tuple(
                key for r in candidates if None not in (key := tuple(r[j] for j in link.self_columns))
            )
        matching = [
            c
            for c in choices
            if all(i in pending or row[i] == v for i, v in zip(link.columns, c, strict=True))
        ]
        nothing = (None,) * len(link.columns)
        own = tuple(base[i] for i in link.columns) if base is not None else None
        if (
            own is not None
            and (own in matching or (link.nullable and own == nothing))
            and self._rng.random() < 0.8
        ):
            pick = own  # the original row's parent, when this neighbour has it: joins stay correlated
        elif link.nullable and (not matching or self._rng.random() < 0.15):
            pick = nothing
        elif matching:
            pick = self._rng.choice(matching)
        else:
            return False
        for i, value in zip(link.columns, pick, strict=True):
            if i in pending:
                row[i] = value
                pending.discard(i)
        return True


def _one_spelling(rows: list[Row], types: Sequence[_ColumnType]) -> list[Row]:
    """The rows with each text column holding one spelling of each value (the first drawn): 'Roma' and
    'roma' in one column are one group to GROUP BY and DISTINCT, and which spelling an engine shows for
    the group is its own choice, so no gold query could be judged there. Values equal under either
    collation (`_Keys`) share a spelling; keys are unique under both already, so this makes no duplicate."""
    texts = [i for i, kind in enumerate(types) if kind.kind == "text"]
    first: dict[tuple[int, object], str] = {}  # (column, a value's weight) -> the spelling kept
    kept: dict[tuple[int, str], str] = {}  # (column, value) -> the spelling kept
    for row in rows:
        for i in texts:
            value = row[i]
            if isinstance(value, str) and (i, value) not in kept:
                weights = [(i, weight(value)) for weight in (uca_weight, general_weight)]
                spelling = next((first[w] for w in weights if w in first), value)
                for w in weights:
                    first.setdefault(w, spelling)
                kept[(i, value)] = spelling
    return [
        tuple(kept.get((i, value), value) if isinstance(value, str) else value for i, value in enumerate(row))
        for row in rows
    ]


def _next_integer(rows: list[Row], index: int, column: _ColumnType) -> Value | None:
    """An integer above any that the column holds so far: a new key when drawn ones are taken."""
    taken = [value for row in rows if isinstance(value := row[index], int)]
    return _fit(max(taken, default=0) + 1, column)


class _Keys:
    """The primary and unique keys of the rows drawn so far, as MySQL 8.0 and MariaDB compare them."""

    def __init__(self, columns: list[tuple[int, ...]]) -> None:
        self.columns = columns
        self.members = {i for key in columns for i in key}
        self._seen: set[tuple[object, ...]] = set()

    def admit(self, row: Row) -> bool:
        """Remember the row's keys; False, remembering nothing, when one of them is taken already."""
        forms = {
            (number, weight, tuple(weight(v) if isinstance(v, str) else v for v in values))
            for number, key in enumerate(self.columns)
            if None not in (values := [row[i] for i in key])  # NULL repeats freely in a unique key
            for weight in (uca_weight, general_weight)
        }
        if forms & self._seen:
            return False
        self._seen |= forms
        return True


def _fill_order(shape: Shape) -> list[Table]:
    """Parents before their children; in a cycle of foreign keys, the table created first goes first."""
    order: list[Table] = []
    remaining = list(shape)
    while remaining:
        unfilled = {table.name.lower() for table in remaining}
        ready = next(
            (
                t
                for t in remaining
                if not any(k.table.lower() in unfilled - {t.name.lower()} for k in t.foreign_keys)
            ),
            remaining[0],
        )
        order.append(ready)
        remaining.remove(ready)
    return order


# --- The dump ------------------------------------------------------------------------------------------------


def _insert_sql(table: Table, rows: list[Row], source: str, types: Sequence[_ColumnType]) -> str:
    written = [index for index, column_type in enumerate(types) if not column_type.generated]
    columns = ", ".join(_identifier(table.columns[index].name, source) for index in written)
    values = ",\n".join(
        "(" + ", ".join(_literal(row[index], source) for index in written) + ")" for row in rows
    )
    return f"INSERT INTO {_identifier(table.name, source)} ({columns}) VALUES\n{values};\n"


def _identifier(name: str, source: str) -> str:
    quote = "`" if source == "mysql" else '"'
    return quote + name.replace(quote, quote * 2) + quote


def _literal(value: Value | None, source: str) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, str):
        escaped = value.replace("\\", "\\\\") if source == "mysql" else value  # SQLite has no escapes
        return "'" + escaped.replace("'", "''") + "'"
    if isinstance(value, bytes):
        return f"X'{value.hex().upper()}'"
    if isinstance(value, float):
        value = Decimal(repr(value))
    return format(value, "f") if isinstance(value, Decimal) else str(value)  # never an exponent


def _terminated(text: str, source: str) -> str:
    """The schema text with a semicolon after its last statement, which a hand-written script may lack."""
    if source == "mysql":
        statements = read_dump(text)
        if not statements or statements[-1].stop > statements[-1].end:
            return text
        end = statements[-1].end
        return text[:end] + ";" + text[end:]
    spans = statement_spans(text, source=source)
    if not spans or re.match(r"\s*;", text[spans[-1][1] :]):
        return text
    return text[: spans[-1][1]] + ";" + text[spans[-1][1] :]
