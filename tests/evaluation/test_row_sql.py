"""MySQL's SQL that acts on one row, as SQLite (evaluation.scoring.row_sql)."""

from __future__ import annotations

import pytest
import sqlglot

from evaluation.scoring.row_sql import UntranslatableTrigger, row_expression_sql, sqlite_trigger
from evaluation.scoring.stored_programs import Trigger

SCHEMA = {
    "libri": {"id": "INTEGER", "titolo": "VARCHAR(40) COLLATE utf8mb4_0900_ai_ci", "prezzo": "DECIMAL(6,2)"},
    "schede": {"id": "INTEGER", "titolo": "TEXT"},
}


def test_an_expression_over_a_row_is_translated_and_rounded_as_its_column_stores_it() -> None:
    expression = sqlglot.parse_one("CONCAT(titolo, '!')", read="mysql")
    assert row_expression_sql(expression, "libri", SCHEMA) == "titolo || '!'"
    price = sqlglot.parse_one("prezzo * 1.04", read="mysql")
    assert row_expression_sql(price, "libri", SCHEMA, stored_in="DECIMAL(7,2)") == "ROUND(prezzo * 1.04, 2)"


def test_insert_update_and_delete_statements_keep_their_timing_and_event() -> None:
    trigger = Trigger(
        "dopo", "libri", "AFTER", "INSERT", "BEGIN\n INSERT INTO schede VALUES (NEW.id, NEW.titolo);\n END"
    )
    assert sqlite_trigger(trigger, SCHEMA) == (
        'CREATE TRIGGER "dopo" AFTER INSERT ON "libri" FOR EACH ROW BEGIN '
        "INSERT INTO schede VALUES (NEW.id, NEW.titolo); END"
    )


def test_assignments_to_new_update_the_row_just_written_one_after_the_other() -> None:
    trigger = Trigger(
        "prima", "libri", "BEFORE", "UPDATE", "SET NEW.prezzo = NEW.prezzo + 1, NEW.titolo = 'x'"
    )
    assert sqlite_trigger(trigger, SCHEMA) == (
        'CREATE TRIGGER "prima" AFTER UPDATE ON "libri" FOR EACH ROW BEGIN '
        'UPDATE "libri" SET "prezzo" = ROUND("prezzo" + 1, 2) WHERE rowid = NEW.rowid; '
        """UPDATE "libri" SET "titolo" = 'x' WHERE rowid = NEW.rowid; END"""
    )


@pytest.mark.parametrize(
    ("trigger", "why"),
    [
        (
            Trigger(
                "t", "libri", "AFTER", "UPDATE", "BEGIN IF NEW.id > 1 THEN DELETE FROM schede; END IF; END"
            ),
            "trigger t: its body holds IF NEW.id ..., which the copy cannot apply; it writes schede",
        ),
        (
            Trigger("t", "libri", "AFTER", "INSERT", "SET NEW.titolo = 'x'"),
            "trigger t: SET NEW.column beside other statements, or outside a BEFORE INSERT or UPDATE trigger, "
            "cannot be applied; it writes libri",
        ),
        (
            Trigger(
                "t",
                "libri",
                "BEFORE",
                "INSERT",
                "BEGIN SET NEW.titolo = 'x'; INSERT INTO schede VALUES (1, 'y'); END",
            ),
            "SET NEW.column beside other statements",
        ),
        (
            Trigger("t", "libri", "BEFORE", "INSERT", "BEGIN CALL registra(NEW.id); END"),
            "holds CALL registra",
        ),
        (Trigger("t", "libri", "BEFORE", "INSERT", "BEGIN END"), "trigger t does nothing"),
    ],
)
def test_any_other_body_is_untranslatable_with_what_and_the_tables_it_writes(
    trigger: Trigger, why: str
) -> None:
    with pytest.raises(UntranslatableTrigger) as caught:
        sqlite_trigger(trigger, SCHEMA)
    assert why in str(caught.value)
