"""Views and stored programs read from their CREATE and DROP statements (evaluation.scoring.stored_programs)."""

from __future__ import annotations

import pytest

from evaluation.scoring.stored_programs import (
    Dropped,
    ProgramError,
    Routine,
    Trigger,
    View,
    read_program,
)


def test_a_trigger_as_mysqldump_writes_it_names_its_table_timing_event_and_body() -> None:
    text = (
        "CREATE    DEFINER=`root`@`localhost`    TRIGGER `prestiti_dopo_inserimento` AFTER INSERT ON "
        "`biblioteca`.`prestiti` FOR EACH ROW FOLLOWS `altro` BEGIN\n  UPDATE libri SET copie = copie - 1;\nEND"
    )
    assert read_program(text) == Trigger(
        "prestiti_dopo_inserimento",
        "prestiti",
        "AFTER",
        "INSERT",
        "BEGIN\n  UPDATE libri SET copie = copie - 1;\nEND",
    )


def test_a_one_statement_trigger_keeps_its_statement() -> None:
    assert read_program(
        "create trigger t before update on clienti for each row set new.nota = 'x'"
    ) == Trigger("t", "clienti", "BEFORE", "UPDATE", "set new.nota = 'x'")


def test_a_view_keeps_its_columns_select_and_check_option() -> None:
    text = (
        "CREATE OR REPLACE ALGORITHM=MERGE DEFINER='bice'@'%' SQL SECURITY INVOKER VIEW `v``1` (`a`, b) "
        "AS select 1, 2 WITH CASCADED CHECK OPTION"
    )
    assert read_program(text) == View("v`1", ("a", "b"), "select 1, 2", True)


@pytest.mark.parametrize(
    ("text", "routine"),
    [
        (
            "CREATE DEFINER=`root`@`localhost` PROCEDURE `restituisci`(IN p INT) BEGIN END",
            ("PROCEDURE", "restituisci"),
        ),
        ("CREATE FUNCTION IF NOT EXISTS f() RETURNS INT RETURN 1", ("FUNCTION", "f")),
        (
            "CREATE DEFINER=CURRENT_USER AGGREGATE FUNCTION somma RETURNS INTEGER SONAME 'x.so'",
            ("FUNCTION", "somma"),
        ),
        ("CREATE EVENT `pulizia` ON SCHEDULE EVERY 1 DAY DO DELETE FROM t", ("EVENT", "pulizia")),
    ],
)
def test_procedures_functions_and_events_are_named_by_kind(text: str, routine: tuple[str, str]) -> None:
    assert read_program(text) == Routine(*routine)


def test_a_drop_names_what_it_drops() -> None:
    assert read_program("DROP VIEW IF EXISTS `a`, db.`b`") == Dropped("VIEW", ("a", "b"))
    assert read_program("DROP PROCEDURE p") == Dropped("PROCEDURE", ("p",))


@pytest.mark.parametrize("text", ["CREATE TABLE t (a INT)", "DROP TABLE t", "INSERT INTO t VALUES (1)"])
def test_other_statements_are_no_program(text: str) -> None:
    assert read_program(text) is None


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("CREATE TRIGGER t INSERT ON x FOR EACH ROW SET @a = 1", "trigger t: expected BEFORE or AFTER"),
        ("CREATE VIEW v SELECT 1", "view v: expected AS"),
    ],
)
def test_a_trigger_or_view_whose_head_is_not_mysql_s_is_refused_by_name(text: str, why: str) -> None:
    with pytest.raises(ProgramError, match=why):
        read_program(text)
