"""A small MySQL dump of a test's own as a SQLite copy, and MySQL queries run on it as the scorer runs them."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from evaluation.scoring.dialect import read_schema, to_sqlite
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite


def connected_copy(dump: str, path: Path) -> sqlite3.Connection:
    """The dump built at `path`, opened with MySQL's functions and collations installed."""
    build_sqlite(dump, path)
    connection = sqlite3.connect(path)
    install_functions(connection)
    return connection


def rows(conn: sqlite3.Connection, mysql: str) -> list[tuple]:
    return conn.execute(to_sqlite(mysql, schema=read_schema(conn))).fetchall()
