"""The demo benchmark in evaluation/demo: its dumps load into MariaDB, its gold queries answer there, and its
question and hardness files are well formed.

Plain pytest, no Django: run it alone with `pytest tests/evaluation/test_demo_benchmark.py -p no:django`.
MariaDB is the reference server (TERMITE_REFERENCE_MYSQL_URL, by default root@127.0.0.1:3306). When it is
unreachable its tests skip, or fail under TERMITE_REQUIRE_SERVICES=1.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pymysql
import pytest
import sqlglot
from pymysql.constants import CLIENT
from sqlglot import exp

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "evaluation" / "demo"
DATABASES = ("biblioteca", "ciclismo")
LEVELS = ("easy", "medium", "hard", "extra")
DEFAULT_MYSQL_URL = "mysql://root@127.0.0.1:3306/"
# MariaDB's defaults, pinned so that a server configured otherwise cannot change the answers: invalid
# values are errors rather than warnings, and GROUP BY is loose, as the gold (like Termite's) expects.
SQL_MODE = "STRICT_ALL_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION"

CREATE_DATABASE = re.compile(r"^CREATE\s+DATABASE\b[^;]*;", re.IGNORECASE | re.MULTILINE)
USE_DATABASE = re.compile(r"^USE\s+[^;]*;", re.IGNORECASE | re.MULTILINE)


def read_questions(db: str) -> list[dict[str, Any]]:
    lines = (DEMO / f"{db}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


QUESTIONS = {db: read_questions(db) for db in DATABASES}
ALL_QUESTIONS = [(db, item) for db in DATABASES for item in QUESTIONS[db]]


def _id(value: Any) -> str:
    return value["id"] if isinstance(value, dict) else str(value)


@pytest.fixture(autouse=True)
def _clean_cache() -> Iterator[None]:
    """Replaces the suite's Django cache fixture: nothing here touches Django, so it runs without it."""
    yield


# --- MariaDB ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mariadb() -> dict[str, Any]:
    """Connection parameters of the reference MariaDB, or skip (fail under TERMITE_REQUIRE_SERVICES=1)."""
    url = urlparse(os.environ.get("TERMITE_REFERENCE_MYSQL_URL") or DEFAULT_MYSQL_URL)
    params = {
        "host": url.hostname or "127.0.0.1",
        "port": url.port or 3306,
        "user": unquote(url.username or "root"),
        "password": unquote(url.password or ""),
        "charset": "utf8mb4",
        "autocommit": True,
        "init_command": f"SET SESSION sql_mode = '{SQL_MODE}'",
    }
    try:
        pymysql.connect(**params, connect_timeout=3).close()
    except pymysql.err.OperationalError as error:
        problem = f"MariaDB at {params['host']}:{params['port']} is unreachable ({error})"
        if os.environ.get("TERMITE_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{problem}, and TERMITE_REQUIRE_SERVICES=1 requires it")
        pytest.skip(problem)
    return params


def retarget(script: str, database: str) -> str:
    """The dump with its own CREATE DATABASE and USE replaced by ones for `database`."""
    script, created = CREATE_DATABASE.subn(f"CREATE DATABASE `{database}`;", script)
    script, used = USE_DATABASE.subn(f"USE `{database}`;", script)
    assert (created, used) == (1, 1), "a dump must have exactly one CREATE DATABASE and one USE"
    return script


def run_script(params: dict[str, Any], script: str) -> None:
    with (
        closing(pymysql.connect(**params, client_flag=CLIENT.MULTI_STATEMENTS)) as conn,
        conn.cursor() as cursor,
    ):
        cursor.execute(script)
        while cursor.nextset():  # a failing statement raises here, when its result is reached
            pass


def query(params: dict[str, Any], database: str, sql: str) -> list[tuple]:
    with closing(pymysql.connect(**params, database=database)) as conn, conn.cursor() as cursor:
        cursor.execute(sql)
        return list(cursor.fetchall())


@pytest.fixture(scope="module")
def loaded(mariadb: dict[str, Any]) -> Iterator[dict[str, str]]:
    """Each demo dump loaded into a scratch database of its own: {demo db: scratch name}, dropped after."""
    scratch = {db: f"termite_demo_{db}_{uuid.uuid4().hex[:12]}" for db in DATABASES}
    try:
        for db, name in scratch.items():
            run_script(mariadb, retarget((DEMO / f"{db}.sql").read_text(encoding="utf-8"), name))
        yield scratch
    finally:
        with closing(pymysql.connect(**mariadb)) as conn, conn.cursor() as cursor:
            for name in scratch.values():
                cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")


def table_sizes(params: dict[str, Any], database: str) -> dict[str, int]:
    tables = query(
        params,
        database,
        "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1",
    )
    return {name: query(params, database, f"SELECT COUNT(*) FROM `{name}`")[0][0] for (name,) in tables}


@pytest.mark.parametrize("db", DATABASES)
def test_each_dump_loads_into_mariadb_with_4_to_5_tables_of_10_to_40_rows(mariadb, loaded, db):
    sizes = table_sizes(mariadb, loaded[db])
    assert 4 <= len(sizes) <= 5, sizes
    assert all(10 <= rows <= 40 for rows in sizes.values()), sizes


@pytest.mark.parametrize(("db", "table"), [("biblioteca", "soci"), ("ciclismo", "gare")])
def test_the_alter_table_auto_increment_makes_ids_start_at_500(mariadb, loaded, db, table):
    assert query(mariadb, loaded[db], f"SELECT MIN(id) FROM {table}") == [(500,)]


def test_mariadb_stores_the_unpadded_dates_and_times_normalised(mariadb, loaded):
    rows = query(mariadb, loaded["ciclismo"], "SELECT CAST(orario_partenza AS CHAR) FROM tappe WHERE id = 2")
    assert rows == [("09:05:00",)]
    rows = query(
        mariadb, loaded["biblioteca"], "SELECT CAST(data_prestito AS CHAR) FROM prestiti WHERE id = 6"
    )
    assert rows == [("2023-01-10 09:05:00",)]


def test_the_schema_only_dump_declares_exactly_the_columns_of_the_full_dump(mariadb, loaded):
    schema_only = f"termite_demo_schema_{uuid.uuid4().hex[:12]}"
    columns = (
        "SELECT table_name, column_name, column_type, is_nullable, column_default, column_key, extra"
        " FROM information_schema.columns WHERE table_schema = DATABASE() ORDER BY 1, 2"
    )
    try:
        run_script(
            mariadb, retarget((DEMO / "no_insert_biblioteca.sql").read_text(encoding="utf-8"), schema_only)
        )
        assert query(mariadb, schema_only, columns) == query(mariadb, loaded["biblioteca"], columns)
        assert set(table_sizes(mariadb, schema_only).values()) == {0}
    finally:
        run_script(mariadb, f"DROP DATABASE IF EXISTS `{schema_only}`")


@pytest.mark.parametrize(("db", "item"), ALL_QUESTIONS, ids=_id)
def test_every_gold_query_returns_at_least_one_row_on_mariadb(mariadb, loaded, db, item):
    assert query(mariadb, loaded[db], item["gold_sql"]), f"{item['id']} returns no row"


# --- The files themselves ----------------------------------------------------------------------------------


@pytest.mark.parametrize("db", DATABASES)
def test_each_questions_file_has_11_or_12_well_formed_questions_with_unique_ids_of_its_db(db):
    items = QUESTIONS[db]
    assert 11 <= len(items) <= 12
    ids = [item.get("id") for item in items]
    assert len(set(ids)) == len(ids), "duplicate ids"
    for item in items:
        assert set(item) == {"id", "question", "gold_sql"}, item
        assert re.fullmatch(rf"{db}-\d{{3}}", item["id"]), item["id"]
        assert isinstance(item["gold_sql"], str) and item["gold_sql"].strip(), item["id"]


@pytest.mark.parametrize(("db", "item"), ALL_QUESTIONS, ids=_id)
def test_every_question_is_a_non_empty_italian_sentence(db, item):
    question = item["question"]
    assert isinstance(question, str) and question == question.strip() and question
    assert question[-1] in "?.", question
    italian = r"\b(il|la|le|i|gli|di|del|della|dei|che|per|con|quanti|quante|quali|qual|chi|come|in|a)\b"
    assert re.search(italian, question, re.IGNORECASE), question


@pytest.mark.parametrize(("db", "item"), ALL_QUESTIONS, ids=_id)
def test_no_gold_query_limits_rows_without_an_order_by(db, item):
    tree = sqlglot.parse_one(item["gold_sql"], read="mysql")
    for select in tree.find_all(exp.Select):
        if select.args.get("limit"):
            assert select.args.get("order"), f"{item['id']}: LIMIT without ORDER BY picks arbitrary rows"


# Each MySQL feature the converter and the scorer must handle, and a pattern that finds it in the text.
DUMP_FEATURES = {
    "CREATE DATABASE": r"^CREATE DATABASE ",
    "USE": r"^USE ",
    "ENGINE=InnoDB DEFAULT CHARSET=utf8mb4": r"\) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;",
    "INT UNSIGNED": r"\bINT UNSIGNED\b",
    "AUTO_INCREMENT PRIMARY KEY": r"\bINT NOT NULL AUTO_INCREMENT PRIMARY KEY\b",
    "ALTER TABLE AUTO_INCREMENT=500": r"^ALTER TABLE \S+ AUTO_INCREMENT=500;",
    "ALTER TABLE ADD CONSTRAINT": r"^ALTER TABLE \S+ ADD CONSTRAINT .+ FOREIGN KEY",
    "ENUM": r"\bENUM\('",
    "DECIMAL(8,2)": r"\bDECIMAL\(8,2\)",
    "DATE": r"\bDATE\b",
    "DATETIME": r"\bDATETIME\b",
    "TIME": r"\bTIME\b",
    "TINYINT(1)": r"\bTINYINT\(1\)",
    "column CHARACTER SET": r"\bVARCHAR\(\d+\) CHARACTER SET utf8mb4\b",
    "FOREIGN KEY in CREATE TABLE": r"^\s+(CONSTRAINT \S+ )?FOREIGN KEY",
    "multi-row INSERT": r"^INSERT INTO .*VALUES\n\(.*\),\n\(",
    "unpadded date": r"'\d{4}-(\d|\d\d-\d)\b",
    "unpadded time": r"[' ](\d:|\d\d?:\d:|\d\d?:\d\d:\d')",
    "quote escaped as ''": r"\w''\w",
    "quote escaped as \\'": r"\w\\'\w",
    "leading-zero digit string": r"'0\d{5,}'",
}


@pytest.mark.parametrize("db", DATABASES)
@pytest.mark.parametrize("feature", DUMP_FEATURES)
def test_each_dump_keeps_the_mysql_features_it_is_a_fixture_for(db, feature):
    text = (DEMO / f"{db}.sql").read_text(encoding="utf-8")
    assert re.search(DUMP_FEATURES[feature], text, re.MULTILINE), f"{db}.sql lost: {feature}"


GOLD_FEATURES = {
    "JOIN": r"\bJOIN\b",
    "GROUP BY ... HAVING": r"\bGROUP BY\b.*\bHAVING\b",
    "ORDER BY ... LIMIT": r"\bORDER BY\b.*\bLIMIT\b",
    "ORDER BY without LIMIT": r"\bORDER BY\b(?!.*\bLIMIT\b)",
    "nested IN (SELECT": r"\bIN \(SELECT\b",
    "UNION": r"\bUNION\b",
    "LIKE": r"\bLIKE\b",
    "OR": r"\bOR\b",
    "COUNT(DISTINCT": r"\bCOUNT\(DISTINCT\b",
    "AVG": r"\bAVG\(",
    "division": r"\) / COUNT\(",
    "YEAR()": r"\bYEAR\(",
    "MONTH()": r"\bMONTH\(",
    "DATEDIFF()": r"\bDATEDIFF\(",
    "backtick identifier": r"`\w+`",
    "'alias' in single quotes": r"\bAS '[^']+'",
    "number compared with a text column": r"\btessera = 0\d+\b",
    "quote escaped as ''": r"\w''\w",
    "quote escaped as \\'": r"\w\\'\w",
}


@pytest.mark.parametrize("feature", GOLD_FEATURES)
def test_the_gold_queries_keep_the_mysql_features_they_are_a_fixture_for(feature):
    golds = [item["gold_sql"] for _, item in ALL_QUESTIONS]
    assert any(re.search(GOLD_FEATURES[feature], sql, re.IGNORECASE) for sql in golds), feature


def test_the_gold_queries_mix_keyword_case_and_trailing_semicolons():
    golds = [item["gold_sql"] for _, item in ALL_QUESTIONS]
    assert any(sql.startswith("select ") for sql in golds)
    assert any(sql.startswith("SELECT ") for sql in golds)
    assert any(sql.endswith(";") for sql in golds)
    assert any(not sql.endswith(";") for sql in golds)


# --- Hardness -------------------------------------------------------------------------------------------


def expected_hardness() -> dict[str, str]:
    return json.loads((DEMO / "expected_hardness.json").read_text(encoding="utf-8"))


def test_expected_hardness_gives_every_question_and_only_them_a_valid_level():
    expected = expected_hardness()
    assert set(expected) == {item["id"] for _, item in ALL_QUESTIONS}
    assert set(expected.values()) <= set(LEVELS)


@pytest.mark.parametrize("db", DATABASES)
def test_all_four_hardness_levels_appear_in_each_database(db):
    expected = expected_hardness()
    levels = Counter(expected[item["id"]] for item in QUESTIONS[db])
    assert set(levels) == set(LEVELS), levels


@pytest.mark.parametrize(("db", "item"), ALL_QUESTIONS, ids=_id)
def test_the_hardness_module_agrees_with_the_hand_count(db, item, monkeypatch):
    if not (ROOT / "evaluation" / "scoring" / "hardness.py").exists():
        pytest.skip("evaluation/scoring/hardness.py does not exist yet")
    monkeypatch.syspath_prepend(str(ROOT))
    hardness = importlib.import_module("evaluation.scoring.hardness").hardness
    assert hardness(item["gold_sql"], source="mysql") == expected_hardness()[item["id"]]
