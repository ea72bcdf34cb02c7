"""Does a SQLite copy answer a gold query as the MySQL reference does?

The comparison is the scorer's execution-accuracy rule (`compare.results_match`), with MariaDB's rows as
gold and the SQLite copy's as the prediction. Outcomes name a cause category only, never gold text or
values, so they can be logged and shown to staff.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from evaluation.scoring.compare import Row, order_key_query, results_match, split_order_keys
from evaluation.scoring.dialect import TranspileError, read_schema, to_sqlite
from evaluation.scoring.functions import install_functions
from evaluation.scoring.reference import ReferenceDatabase, ReferenceQueryError

AGREE = "agree"
DIFFER = "differ"
FAILS_ON_REFERENCE = "fails_on_reference"
FAILS_ON_SQLITE = "fails_on_sqlite"


@dataclass(frozen=True)
class FidelityOutcome:
    """status is AGREE, DIFFER, FAILS_ON_REFERENCE or FAILS_ON_SQLITE; cause says why, without values."""

    status: str
    cause: str = ""

    @property
    def agrees(self) -> bool:
        return self.status == AGREE


def compare_engines(sqlite_path: Path, reference_db: ReferenceDatabase, gold_sql: str) -> FidelityOutcome:
    """Run a MySQL gold query on the reference and, transpiled, on the SQLite copy; compare the rows."""
    try:
        _, reference_rows = reference_db.run(gold_sql)
    except ReferenceQueryError as error:
        return FidelityOutcome(FAILS_ON_REFERENCE, f"MySQL error {error.code}")
    try:
        sqlite_rows = _run_on_sqlite(sqlite_path, gold_sql)
    except TranspileError:
        return FidelityOutcome(FAILS_ON_SQLITE, "cannot be transpiled")
    except sqlite3.Error as error:
        return FidelityOutcome(FAILS_ON_SQLITE, f"SQLite {type(error).__name__}")
    reference_rows, order_keys = _ordered_reference_rows(reference_db, gold_sql, reference_rows)
    if results_match(reference_rows, sqlite_rows, gold_order_keys=order_keys):
        return FidelityOutcome(AGREE)
    return FidelityOutcome(DIFFER, _difference(reference_rows, sqlite_rows, order_keys))


def _run_on_sqlite(path: Path, gold_sql: str) -> list[Row]:
    uri = f"{Path(path).resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        install_functions(conn)
        return conn.execute(to_sqlite(gold_sql, source="mysql", schema=read_schema(conn))).fetchall()


def _ordered_reference_rows(
    reference_db: ReferenceDatabase, gold_sql: str, rows: list[Row]
) -> tuple[list[Row], list[Row] | None]:
    """The reference rows with their ORDER BY keys (None when the gold has no top-level ORDER BY).

    Rows and keys come from one run of the keyed query: MariaDB may order tied rows differently each run.
    """
    try:
        keyed = order_key_query(gold_sql, dialect="mysql")
    except ValueError:
        keyed = None
    if keyed is None:
        return rows, None
    try:
        _, keyed_rows = reference_db.run(keyed[0])
    except ReferenceQueryError:
        return split_order_keys(rows, 0)  # keys unknown: the order must match exactly
    return split_order_keys(keyed_rows, keyed[1])


def _difference(reference: list[Row], sqlite: list[Row], order_keys: list[Row] | None) -> str:
    if len(reference) != len(sqlite):
        return "row count"
    if {len(row) for row in reference} != {len(row) for row in sqlite}:
        return "column count"
    if order_keys is not None and results_match(reference, sqlite, gold_order_keys=None):
        return "row order"
    return "values"
