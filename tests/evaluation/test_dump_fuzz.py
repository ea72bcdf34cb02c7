"""No dump makes the dump reader fail with anything but a DumpError that names the line, the statement and
why (evaluation.scoring.mysql_dump, dump_statements): truncated and mangled copies of a mysqldump-style
dump, drawn from fixed seeds, either build or are refused clearly."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from evaluation.scoring.mysql_dump import DumpError, build_sqlite, schema_text
from tests.evaluation.biblioteca_dump import BIBLIOTECA

CASES = 300
# Pieces of MySQL and mysqldump syntax, put where they do not belong.
FRAGMENTS = [
    "'", '"', "`", ";", ";;", "(", ")", ",", "/*", "*/", "/*!50003 ", "/*M!100100 ", "/*!", "*/;;",
    "\nDELIMITER ;;\n", "\nDELIMITER\n", "\nDELIMITER ;\n", "\nDELIMITER \\\n", "-- ", "#", "\\", "NULL",
    "0x", "0x1", "b'1", "_binary ", "_utf8mb4", "CREATE ", "TRIGGER ", "VIEW ", " AS ", "BEGIN ", "END",
    "GENERATED ALWAYS AS (", " VIRTUAL", "POINT", " BINARY", "ENUM(", "SET(", " YEAR", "BIT(", "SRID",
    "NOT ENFORCED", "DEFAULT", "PROCEDURE ", "FOR EACH ROW ", "AFTER INSERT ON ", "\x00", "é", "9" * 30,
    "(" * 50, "SELECT ", "FROM ", "DROP VIEW ", "ALTER TABLE `libri` ", "ADD COLUMN ", "AUTO_INCREMENT=",
]  # fmt: skip
CLEAR_ERROR = re.compile(r"line \d+: statement \d+ \(.+\): \S")


def mangled(seed: int) -> str:
    """The dump with one to three mutations drawn from `seed`: cut short, a span dropped or repeated, a
    fragment put in, two lines swapped."""
    draw = random.Random(seed)
    text = BIBLIOTECA
    for _ in range(draw.randint(1, 3)):
        where = draw.randrange(len(text))
        choice = draw.randrange(5)
        if choice == 0:
            text = text[:where]
        elif choice == 1:
            text = text[:where] + text[where + draw.randint(1, 40) :]
        elif choice == 2:
            text = text[:where] + text[where : where + draw.randint(1, 80)] + text[where:]
        elif choice == 3:
            text = text[:where] + draw.choice(FRAGMENTS) + text[where:]
        else:
            lines = text.split("\n")
            first, second = draw.randrange(len(lines)), draw.randrange(len(lines))
            lines[first], lines[second] = lines[second], lines[first]
            text = "\n".join(lines)
    return text


@pytest.mark.parametrize("block", range(6))
def test_a_mangled_dump_builds_or_is_refused_with_its_line_statement_and_why(
    tmp_path: Path, block: int
) -> None:
    per_block = CASES // 6
    outcomes = {"built": 0, "refused": 0}
    for seed in range(block * per_block, (block + 1) * per_block):
        dump = mangled(seed)
        try:
            build_sqlite(dump, tmp_path / "copia.sqlite3")
            schema_text(dump)
            outcomes["built"] += 1
        except DumpError as error:
            assert CLEAR_ERROR.match(str(error)), (seed, str(error))
            outcomes["refused"] += 1
    assert sum(outcomes.values()) == per_block
