"""A MySQL dump read as the mysql client and MySQL 8.0 read it (evaluation.scoring.dump_statements)."""

from __future__ import annotations

import pytest

from evaluation.scoring.dump_statements import DumpError, read_dump


def texts(dump: str) -> list[str]:
    return [statement.text for statement in read_dump(dump)]


def test_statements_end_at_semicolons_outside_strings_names_and_comments() -> None:
    dump = "INSERT INTO t VALUES ('a;b', \"c;d\");\n-- e;f\n# g;h\n/* i;j */ SELECT `k;l` FROM t;"
    assert texts(dump) == ["INSERT INTO t VALUES ('a;b', \"c;d\")", "SELECT `k;l` FROM t"]


def test_delimiter_changes_what_ends_a_statement_until_it_is_set_back() -> None:
    dump = (
        "CREATE TABLE t (a INT);\n"
        "DELIMITER ;;\n"
        "CREATE PROCEDURE p() BEGIN SELECT ';;'; SELECT 1; END ;;\n"
        "delimiter //\n"
        "CREATE FUNCTION f() RETURNS INT RETURN 1 //\n"
        "DELIMITER ;\n"
        "INSERT INTO t VALUES (1);"
    )
    assert texts(dump) == [
        "CREATE TABLE t (a INT)",
        "CREATE PROCEDURE p() BEGIN SELECT ';;'; SELECT 1; END",
        "CREATE FUNCTION f() RETURNS INT RETURN 1",
        "INSERT INTO t VALUES (1)",
    ]


def test_a_delimiter_inside_a_string_or_comment_of_a_block_ends_nothing() -> None:
    dump = "DELIMITER ;;\nCREATE PROCEDURE p() BEGIN\n  -- fine ;;\n  SELECT ';;' /* ;; */;\nEND;;\nDELIMITER ;\n"
    assert texts(dump) == ["CREATE PROCEDURE p() BEGIN\n  -- fine ;;\n  SELECT ';;' /* ;; */;\nEND"]


@pytest.mark.parametrize(
    ("comment", "read"),
    [
        ("/*!40101 SET NAMES utf8mb4 */", "SET NAMES utf8mb4"),
        ("/*!80040 SET a = 1 */", "SET a = 1"),  # MySQL 8.0.40 itself
        ("/*!80041 SET a = 1 */", ""),  # a later server's
        ("/*! SET a = 1 */", "SET a = 1"),  # every MySQL's
        ("/*M!100100 SET a = 1 */", ""),  # MariaDB's
        ("/* SET a = 1 */", ""),  # a comment
    ],
)
def test_a_versioned_comment_is_code_for_mysql_8_0_40_when_its_version_allows(
    comment: str, read: str
) -> None:
    assert texts(f"{comment};") == ([read] if read else [])


def test_mysqldump_s_view_in_versioned_comments_is_read_as_one_statement() -> None:
    dump = (
        "/*!50001 CREATE ALGORITHM=UNDEFINED */\n"
        "/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */\n"
        "/*!50001 VIEW `v` AS select 'a;b' AS `x` */;\n"
    )
    [statement] = read_dump(dump)
    assert " ".join(statement.text.split()) == (
        "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `v` AS select 'a;b' AS `x`"
    )
    assert dump[statement.start : statement.end] == dump.rstrip().removesuffix(";")  # as written, for MariaDB


def test_each_statement_knows_its_line_number_and_where_it_is_written() -> None:
    dump = "-- intestazione\n\n/*!40101 SET NAMES utf8mb4 */;\nDELIMITER ;;\nCREATE TABLE t\n(a INT) ;;\n"
    first, second = read_dump(dump)
    assert (first.number, first.line, second.number, second.line) == (1, 3, 2, 5)
    assert dump[second.start : second.stop] == "CREATE TABLE t\n(a INT) ;;"


def test_a_skipped_versioned_comment_keeps_the_lines_after_it_numbered() -> None:
    [statement] = read_dump("SELECT /*!90000 a,\n b,\n */ c\nFROM t;")
    assert statement.text.count("\n") == 3


def test_delimiter_without_a_delimiter_is_refused_with_its_line() -> None:
    with pytest.raises(DumpError, match=r"^line 2: statement 2 \(DELIMITER\): DELIMITER must be followed"):
        read_dump("SELECT 1;\nDELIMITER\nSELECT 2;")


def test_an_unterminated_string_runs_to_the_end_of_the_dump() -> None:
    assert texts("SELECT 'a;\nSELECT 2;") == ["SELECT 'a;\nSELECT 2;"]


def test_an_unclosed_string_in_a_long_statement_is_read_at_once() -> None:
    # A string that never closes once made the reader try every way to cut it up (2 ** n for n characters).
    [statement] = read_dump("INSERT INTO t VALUES ('" + "ab\\n c" * 2000)
    assert statement.text.startswith("INSERT INTO t VALUES ('ab")
