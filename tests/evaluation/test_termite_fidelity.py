"""The real Termite archive: its SQLite copies answer the gold as MariaDB does.

Reads the archive at run time (TERMITE_ARCHIVE, else ../shared/termite/Termite.zip beside the checkout) and
skips when it is absent. Nothing from it is printed: failures name question ids (`<db>-<nnn>`, nnn the
1-based position among that database's questions) and counts only.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
import pyzipper

from evaluation.scoring.dialect import TranspileError, to_sqlite
from evaluation.scoring.fidelity import AGREE, FAILS_ON_REFERENCE, compare_engines
from evaluation.scoring.full_group_by import full_group_by_refusal, read_keys
from evaluation.scoring.functions import install_functions
from evaluation.scoring.hardness import HardnessError, hardness
from evaluation.scoring.mysql_dump import BuildReport, DumpError, build_sqlite
from evaluation.scoring.reference import ReferenceDatabase, ReferenceQueryError, load_dump
from evaluation.scoring.statements import parse_one
from evaluation.scoring.vocabulary import HARDNESS_LEVELS as LEVELS
from tests.evaluation.test_reference import require_mariadb

pytestmark = pytest.mark.termite_archive

PASSWORD = b"youshallnotpass"
DATABASES = 10
TABLES = 40
QUESTIONS = 202
FAILING_ON_MARIADB = 4  # gold that uses a quoted string as a table name

T = TypeVar("T")


@dataclass(frozen=True)
class Question:
    id: str
    db: str
    gold: str


@dataclass(frozen=True)
class Termite:
    dumps: dict[str, str]
    questions: list[Question]


def archive_path() -> Path:
    default = Path(__file__).resolve().parents[3] / "shared" / "termite" / "Termite.zip"
    return Path(os.environ.get("TERMITE_ARCHIVE", default))


@pytest.fixture(scope="module")
def termite() -> Termite:
    path = archive_path()
    if not path.is_file():
        pytest.skip(f"the Termite archive is not at {path}")
    with pyzipper.AESZipFile(path) as archive:
        archive.setpassword(PASSWORD)
        items = json.loads(archive.read("databases/queries.json"))
        slugs = sorted({item["db_id"] for item in items})
        dumps = {slug: archive.read(f"databases/{slug}/{slug}.sql").decode("utf-8") for slug in slugs}
    positions: Counter[str] = Counter()
    questions = []
    for item in items:
        positions[item["db_id"]] += 1
        questions.append(
            Question(f"{item['db_id']}-{positions[item['db_id']]:03d}", item["db_id"], item["query"])
        )
    return Termite(dumps, questions)


def quietly(what: str, action: Callable[..., T], *args: object) -> T:
    """Run `action`; if it fails, fail naming `what` and the kind of error only: its message may quote the archive."""
    try:
        return action(*args)
    except (DumpError, ReferenceQueryError, HardnessError) as error:
        problem = f"{what}: {type(error).__name__}"
    pytest.fail(problem, pytrace=False)


@pytest.fixture(scope="module")
def copies(termite: Termite, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, BuildReport]]:
    folder = tmp_path_factory.mktemp("termite")
    built = {}
    for slug, dump in termite.dumps.items():
        target = folder / f"{slug}.sqlite3"
        built[slug] = (target, quietly(f"building {slug}", build_sqlite, dump, target))
    return built


@pytest.fixture(scope="module")
def references(termite: Termite) -> Iterator[dict[str, ReferenceDatabase]]:
    url = require_mariadb()
    with contextlib.ExitStack() as stack:
        yield {
            slug: stack.enter_context(quietly(f"loading {slug} in MariaDB", load_dump, url, dump))
            for slug, dump in termite.dumps.items()
        }


def test_all_databases_build_into_their_tables(termite: Termite, copies: dict) -> None:
    assert len(termite.questions) == QUESTIONS
    assert len(copies) == DATABASES
    assert sum(report.table_count for _, report in copies.values()) == TABLES


def test_every_gold_query_transpiles_and_runs_on_sqlite_but_quoted_table_names(
    termite: Termite, copies: dict
) -> None:
    rejected, failing = [], []
    for question in termite.questions:
        path, report = copies[question.db]
        try:
            sql = to_sqlite(question.gold, schema=report.schema)
        except TranspileError:
            rejected.append(question.id)
            continue
        with contextlib.closing(sqlite3.connect(path)) as conn:
            install_functions(conn)
            try:
                conn.execute(sql).fetchall()
            except sqlite3.Error:
                failing.append(question.id)
    assert not failing, sorted(failing)
    assert len(rejected) == FAILING_ON_MARIADB, sorted(rejected)


def test_every_gold_query_passes_mysql_8s_only_full_group_by(termite: Termite, copies: dict) -> None:
    """MySQL 8.0's default sql_mode holds ONLY_FULL_GROUP_BY: the gold must pass it, the 29 queries that
    MariaDB's rule refuses (it has no detection of functional dependence) included."""
    keys = {slug: read_keys(path) for slug, (path, _) in copies.items()}
    refused = []
    for question in termite.questions:
        try:
            tree, _ = parse_one(question.gold, source="mysql")
        except TranspileError:
            continue  # the transpiler's test above counts what cannot be read
        if full_group_by_refusal(tree, keys[question.db]) is not None:
            refused.append(question.id)
    assert refused == []


@pytest.mark.mariadb
def test_every_table_has_the_rows_mariadb_loads(copies: dict, references: dict) -> None:
    mismatched = Counter()
    for slug, (_, report) in copies.items():
        for table in report.tables.values():
            query = f"SELECT COUNT(*) FROM `{table.name}`"
            _, [(count,)] = quietly(f"counting a table of {slug}", references[slug].run, query)
            mismatched[slug] += count != table.row_count
    assert not +mismatched, dict(+mismatched)


@pytest.mark.mariadb
def test_the_gold_that_runs_on_mariadb_agrees_with_sqlite(
    termite: Termite, copies: dict, references: dict
) -> None:
    outcomes = {
        question.id: compare_engines(copies[question.db][0], references[question.db], question.gold)
        for question in termite.questions
    }
    failing_on_reference = sorted(qid for qid, o in outcomes.items() if o.status == FAILS_ON_REFERENCE)
    disagreeing = {
        qid: f"{o.status}: {o.cause}"
        for qid, o in outcomes.items()
        if o.status not in (AGREE, FAILS_ON_REFERENCE)
    }
    assert not disagreeing, disagreeing
    assert len(failing_on_reference) == FAILING_ON_MARIADB, failing_on_reference
    assert sum(o.agrees for o in outcomes.values()) == QUESTIONS - FAILING_ON_MARIADB


def test_each_databases_gold_hardness_distribution_is_computed(termite: Termite) -> None:
    distributions: dict[str, Counter[str]] = {}
    for question in termite.questions:
        level = quietly(f"hardness of {question.id}", hardness, question.gold)
        distributions.setdefault(question.db, Counter())[level] += 1
    assert len(distributions) == DATABASES
    assert sum(sum(levels.values()) for levels in distributions.values()) == QUESTIONS
    assert all(set(levels) <= set(LEVELS) for levels in distributions.values())
