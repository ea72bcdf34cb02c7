"""The shape check: what sqlglot cannot take is refused from the text alone, quickly, before parsing."""

from __future__ import annotations

import pytest

from evaluation.scoring.dialect import QueryTooComplex, to_sqlite
from evaluation.scoring.query_shape import MAX_NESTING, check_shape, query_shape


def test_it_counts_brackets_case_and_prefix_operators():
    assert query_shape("SELECT ((1))", source="mysql").depth == 2
    assert query_shape("SELECT CASE WHEN NOT -x THEN 1 END", source="mysql").depth == 3
    assert query_shape("SELECT ABS(ABS(x))", source="mysql").calls == 2


def test_brackets_in_strings_names_and_comments_do_not_count():
    text = "SELECT '((((' AS `((`, x /* (((( */ FROM t -- ((((\n"
    assert query_shape(text, source="mysql").depth == 0


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT " + "(SELECT " * 20_000 + "1" + ")" * 20_000,  # crashed or exhausted sqlglot's parser
        "SELECT " + "NOT " * (MAX_NESTING + 1) + "1",
        "SELECT " + "CASE WHEN 1 THEN " * (MAX_NESTING + 1) + "1" + " END" * (MAX_NESTING + 1),
    ],
)
@pytest.mark.parametrize("dialect", ["mysql", "sqlite"])
def test_too_deep_a_query_is_refused_before_it_is_parsed(sql, dialect):
    with pytest.raises(QueryTooComplex, match="nests deeper than 100 levels"):
        to_sqlite(sql, source=dialect, schema={} if dialect == "mysql" else None)


def test_nested_calls_around_much_text_are_refused_before_their_cost_explodes():
    # Twenty nested YEAR( took seconds to translate.
    sql = "SELECT " + "YEAR(" * 20 + "d" + ")" * 20 + " FROM t"
    with pytest.raises(QueryTooComplex, match="nests function calls 20 deep"):
        to_sqlite(sql, schema={})


def test_ordinary_queries_pass_whatever_their_size():
    check_shape(
        "SELECT a, b FROM t WHERE " + " AND ".join(["x > 1"] * 2000), source="mysql", translating=True
    )
    check_shape(
        "SELECT YEAR(DATE(MAX(d))) FROM t WHERE NOT (a = 1 OR (b = 2 AND c = 3))",
        source="mysql",
        translating=True,
    )
