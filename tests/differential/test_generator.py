"""The differential test's generator, on the project's own demo benchmark (evaluation/demo)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
import sqlglot

from evaluation.scoring.dialect import ReadsNoTable, TranspileError, to_sqlite
from tests.differential.generator import (
    DIALECT,
    EQUIVALENT,
    FAMILIES,
    MYSQL_TRAP,
    NEAR_MISS,
    RULES,
    generate,
)

DEMO = Path(__file__).resolve().parents[2] / "evaluation" / "demo"


def demo_gold() -> list[tuple[str, str]]:
    items = []
    for path in sorted(DEMO.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                item = json.loads(line)
                items.append((item["id"], item["gold_sql"]))
    return items


def rule_sql(gold: str, rule: str) -> str:
    [case] = [case for case in generate("q", gold) if case.rule == rule]
    return case.sql


def test_every_rule_belongs_to_a_family():
    assert {family for family, _rule in RULES.values()} == set(FAMILIES)


def test_it_is_deterministic():
    first = [generate(qid, gold) for qid, gold in demo_gold()]
    assert first == [generate(qid, gold) for qid, gold in demo_gold()]


def test_it_makes_many_cases_from_the_demo_gold_in_every_family():
    cases = [case for qid, gold in demo_gold() for case in generate(qid, gold)]
    families = Counter(case.family for case in cases)
    assert len(cases) >= 10 * len(demo_gold())
    assert all(families[family] >= 20 for family in FAMILIES)


def test_no_case_repeats_the_gold_or_another_case_of_its_question():
    for qid, gold in demo_gold():
        texts = [" ".join(case.sql.split()).rstrip(";") for case in generate(qid, gold)]
        assert " ".join(gold.split()).rstrip(";") not in texts
        assert len(texts) == len(set(texts)), qid


def test_every_equivalent_and_near_miss_case_is_one_statement_mysql_can_read():
    for qid, gold in demo_gold():
        for case in generate(qid, gold):
            if case.family in (EQUIVALENT, NEAR_MISS):
                assert len(sqlglot.parse(case.sql, read="mysql")) == 1, (qid, case.rule)


def test_no_case_is_a_hard_coded_answer():
    # The portal scores a query that reads no table `reads_no_table` whatever its rows, and MariaDB would
    # judge it by its rows: such a case would measure that rule, not the transpiler.
    for qid, gold in demo_gold():
        for case in generate(qid, gold):
            try:
                to_sqlite(case.sql, check_conformance=True)
            except ReadsNoTable:
                pytest.fail(f"{qid} {case.rule} reads no table")
            except TranspileError:
                pass  # refused for another reason (a dialect trap): the differential judges that


def test_a_gold_sqlglot_cannot_read_still_gets_its_text_rules():
    rules = {case.rule for case in generate("q", "SELEC nothing FROM")}
    assert rules <= {"keywords_lower", "keywords_upper", "comment_and_semicolon"}
    assert "comment_and_semicolon" in rules


@pytest.mark.parametrize(
    ("rule", "gold", "expected"),
    [
        ("count_one", "SELECT COUNT(*) FROM soci", "SELECT COUNT(1) FROM soci"),
        ("in_to_or", "SELECT a FROM t WHERE b IN (1, 2)", "SELECT a FROM t WHERE (b = 1 OR b = 2)"),
        (
            "between_to_range",
            "SELECT a FROM t WHERE b BETWEEN 1 AND 2",
            "SELECT a FROM t WHERE (b >= 1 AND b <= 2)",
        ),
        (
            "reorder_conjuncts",
            "SELECT a FROM t WHERE b = 1 AND c = 2",
            "SELECT a FROM t WHERE c = 2 AND b = 1",
        ),
        (
            "join_to_comma",
            "SELECT t.a FROM t JOIN u ON t.i = u.i WHERE u.b = 1",
            "SELECT t.a FROM t, u WHERE t.i = u.i AND (u.b = 1)",
        ),
        ("table_aliases", "SELECT t.a FROM t", "SELECT c12_t0.a FROM t AS c12_t0"),
        ("comparison_flipped", "SELECT a FROM t WHERE b > 3", "SELECT a FROM t WHERE b <= 3"),
        ("literal_changed", "SELECT a FROM t WHERE b > 3 LIMIT 5", "SELECT a FROM t WHERE b > 4 LIMIT 5"),
        (
            "conjunct_dropped",
            "SELECT t.a FROM t, u WHERE t.i = u.i AND u.b = 1",
            "SELECT t.a FROM t, u WHERE t.i = u.i",
        ),
        ("order_direction_swapped", "SELECT a FROM t ORDER BY a DESC", "SELECT a FROM t ORDER BY a ASC"),
        ("aggregate_swapped", "SELECT MAX(a) FROM t", "SELECT MIN(a) FROM t"),
        ("limit_changed", "SELECT a FROM t ORDER BY a LIMIT 3", "SELECT a FROM t ORDER BY a LIMIT 4"),
        ("sqlite_double_equals", "SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE (b == 1)"),
        (
            "is_not_distinct_from",
            "SELECT a FROM t WHERE b = 1",
            "SELECT a FROM t WHERE (b IS NOT DISTINCT FROM 1)",
        ),
        ("nulls_last", "SELECT a FROM t ORDER BY a", "SELECT a FROM t ORDER BY a NULLS LAST"),
        ("sqlite_limit_minus_one", "SELECT a FROM t", "SELECT a FROM t LIMIT -1"),
        ("double_quoted_identifier", "SELECT a FROM t", 'SELECT "a" FROM t'),
        ("tsql_top", "SELECT a FROM t ORDER BY a LIMIT 1", "SELECT TOP 1 a FROM t ORDER BY a"),
        (
            "fetch_first",
            "SELECT a FROM t ORDER BY a LIMIT 3",
            "SELECT a FROM t ORDER BY a FETCH FIRST 3 ROWS ONLY",
        ),
        ("oracle_nvl", "SELECT a, b FROM t", "SELECT NVL(a, NULL), b FROM t"),
        ("case_insensitive_literal", "SELECT a FROM t WHERE b = 'Roma'", "SELECT a FROM t WHERE b = 'ROMA'"),
        (
            "accent_insensitive_literal",
            "SELECT a FROM t WHERE b = 'Caffè'",
            "SELECT a FROM t WHERE b = 'Caffe'",
        ),
        ("date_as_number", "SELECT a FROM t WHERE d >= '2024-05-01'", "SELECT a FROM t WHERE d >= 20240501"),
        ("number_as_string", "SELECT a FROM t WHERE b = 7", "SELECT a FROM t WHERE b = '7'"),
        ("integer_division", "SELECT a / 2 FROM t", "SELECT (a DIV 2) FROM t"),
        (
            "datediff_as_to_days",
            "SELECT a FROM t WHERE DATEDIFF(b, '2024-01-01') > 3",
            "SELECT a FROM t WHERE (TO_DAYS(b) - TO_DAYS('2024-01-01')) > 3",
        ),
        (
            "unsigned_count_difference",
            "SELECT COUNT(*) FROM t",
            "SELECT (CAST(COUNT(*) AS UNSIGNED) - CAST(20 AS UNSIGNED) + 20) FROM t",
        ),
        (
            "difference_compared_with_zero",
            "SELECT a FROM t WHERE b = 'x' AND c >= 1990",
            "SELECT a FROM t WHERE b = 'x' AND (c - 1990) >= 0",
        ),
        (
            "literal_collate_bin",
            "SELECT a FROM t WHERE b = 'Roma'",
            "SELECT a FROM t WHERE b = 'Roma' COLLATE utf8mb4_bin",
        ),
        (
            "literal_collate_utf8mb3",
            "SELECT a FROM t WHERE b <> 'Roma'",
            "SELECT a FROM t WHERE b <> 'Roma' COLLATE utf8_general_ci",
        ),
        (
            "order_collate_unicode_ci",
            "SELECT a FROM t ORDER BY b DESC",
            "SELECT a FROM t ORDER BY b COLLATE utf8mb4_unicode_ci DESC",
        ),
        (
            "zero_date_is_null",
            "SELECT a FROM t WHERE b = 1",
            "SELECT a FROM t WHERE b = 1 AND STR_TO_DATE('00/00/0000', '%d/%m/%Y') IS NULL",
        ),
        ("division_by_zero_is_null", "SELECT a FROM t", "SELECT a FROM t WHERE 1 / 0 IS NULL"),
        ("null_safe_equal", "SELECT a FROM t WHERE b = 1", "SELECT a FROM t WHERE (b <=> 1)"),
        (
            "loose_group_by",
            "SELECT a, b, COUNT(*) FROM t GROUP BY a, b",
            "SELECT a, b, COUNT(*) FROM t GROUP BY a",
        ),
        (
            "group_by_dropped",
            "SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1",
            "SELECT a, COUNT(*) FROM t",
        ),
        (
            "any_value",
            "SELECT s.id, s.nome, COUNT(*) FROM s GROUP BY s.id",
            "SELECT s.id, ANY_VALUE(s.nome), COUNT(*) FROM s GROUP BY s.id",
        ),
    ],
)
def test_each_rule_changes_the_first_place_it_can(rule, gold, expected):
    assert rule_sql(gold, rule) == expected


def test_the_families_hold_the_rules_the_issue_asks_for():
    families = {rule: family for rule, (family, _function) in RULES.items()}
    assert families["backticks"] == families["in_to_or"] == EQUIVALENT
    assert families["distinct_toggled"] == families["limit_changed"] == NEAR_MISS
    assert families["postgres_ilike"] == families["full_outer_join"] == DIALECT
    assert families["trailing_space_literal"] == families["group_concat_order"] == MYSQL_TRAP
