"""Checking SQLite copies against the engine the benchmark was written for (MySQL / MariaDB).

Gold that the reference rejects is made invalid and excluded, never repaired by SQLite's more lenient
parse; any other disagreement is reported with its cause. Findings never hold gold text or values.
ONLY_FULL_GROUP_BY is not asked of MariaDB, whose rule lacks MySQL 8.0's detection of functional
dependence: import checks gold against MySQL 8.0's rule itself (validation.py, full_group_by.py).
"""

from __future__ import annotations

import contextlib
import sqlite3

import pymysql

from evaluation.prepared import Finding, PreparedDatabase, PreparedQuestion
from evaluation.scoring import fidelity
from evaluation.scoring.compare import results_match
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import DumpError
from evaluation.scoring.reference import ReferenceDatabase, ReferenceQueryError, load_dump
from evaluation.sources import SourceError


def check_against_reference(
    database: PreparedDatabase, questions: list[PreparedQuestion], *, reference_url: str
) -> None:
    if database.source.dialect != "mysql":
        database.findings.append(
            Finding("reference_skipped", "the dump is SQLite: no MySQL reference to compare")
        )
        return
    try:
        reference = load_dump(reference_url, database.source.dump)
    except DumpError as error:
        database.findings.append(Finding("dump_fails_on_reference", f"MySQL cannot load the dump: {error}"))
        return
    except pymysql.MySQLError as error:
        raise SourceError(f"the reference MySQL server cannot be used: {error}") from None
    with reference:
        _compare_tables(database, reference)
        for question in questions:
            _compare_gold(database, question, reference)


def _compare_tables(database: PreparedDatabase, reference: ReferenceDatabase) -> None:
    uri = f"{database.sqlite_file.resolve().as_uri()}?mode=ro"
    with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
        install_functions(conn)
        for table in database.tables:
            sqlite_rows = conn.execute(f'SELECT * FROM "{table}"').fetchall()
            try:
                _, reference_rows = reference.run(f"SELECT * FROM `{table}`")
            except ReferenceQueryError as error:
                database.findings.append(Finding("table_mismatch", f"table {table}: {error}"))
                continue
            if not results_match(reference_rows, sqlite_rows, gold_order_keys=None):
                database.findings.append(
                    Finding(
                        "table_mismatch",
                        f"table {table}: {len(sqlite_rows)} rows on SQLite and {len(reference_rows)} on MySQL "
                        "do not hold the same values",
                    )
                )


def _compare_gold(
    database: PreparedDatabase, question: PreparedQuestion, reference: ReferenceDatabase
) -> None:
    outcome = fidelity.compare_engines(database.sqlite_file, reference, question.source.gold_sql)
    if outcome.status == fidelity.FAILS_ON_REFERENCE:
        question.findings.append(
            Finding(
                "gold_fails_on_reference", f"MySQL rejects the gold ({outcome.cause}); excluded, not repaired"
            )
        )
    elif outcome.status == fidelity.FAILS_ON_SQLITE:
        if not any(finding.code == "gold_fails" for finding in question.findings):
            question.findings.append(
                Finding("engine_mismatch", f"runs on MySQL, fails on SQLite ({outcome.cause})")
            )
    elif outcome.status == fidelity.DIFFER:
        question.findings.append(
            Finding("engine_mismatch", f"SQLite and MySQL results differ in {outcome.cause}")
        )
