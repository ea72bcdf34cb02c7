"""The reference engine: a MySQL dump loaded in MariaDB, to check the SQLite copies against.

`load_dump` creates a scratch database with a unique name, loads the dump into it as the `mysql` client
would (`dump_statements`: DELIMITER blocks; its own CREATE DATABASE / USE statements are skipped) and returns a `ReferenceDatabase` that runs queries the way
a default MariaDB runs them (no ONLY_FULL_GROUP_BY, utf8mb4_general_ci) and returns values in the form
SQLite gives them, so the two compare directly.
"""

from __future__ import annotations

import datetime as dt
import re
import uuid
from decimal import Decimal
from types import TracebackType
from typing import cast
from urllib.parse import unquote, urlparse

import pymysql

from evaluation.scoring.compare import Row, Value
from evaluation.scoring.dump_statements import DumpError, read_dump

# MariaDB 10.11's default sql_mode, written out so that a server configured otherwise runs gold the same.
SQL_MODE = "STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
COLLATION = "utf8mb4_general_ci"
STATEMENT_TIMEOUT_SECONDS = 30

_SKIPPED = re.compile(r"(CREATE|DROP)\s+(DATABASE|SCHEMA)\b|USE\b", re.IGNORECASE)


class ReferenceQueryError(RuntimeError):
    """The reference server refused a query; `code` is MySQL's error number (0 when there is none)."""

    def __init__(self, code: int, message: str) -> None:
        self.code = code
        super().__init__(f"MySQL error {code}: {message}")


def connect(url: str) -> pymysql.connections.Connection:
    """A connection to the server of a `mysql://user:password@host:port/` URL, session set as above."""
    parts = urlparse(url)
    if parts.scheme not in ("mysql", "mariadb"):
        raise ValueError("the reference URL must look like mysql://user@host:port/")
    conn = pymysql.connect(
        host=parts.hostname or "127.0.0.1",
        port=parts.port or 3306,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or ""),
        charset="utf8mb4",
        autocommit=True,
        connect_timeout=5,
    )
    with conn.cursor() as cursor:
        cursor.execute(f"SET NAMES utf8mb4 COLLATE {COLLATION}")
        cursor.execute("SET SESSION sql_mode = %s", (SQL_MODE,))
        cursor.execute(f"SET SESSION max_statement_time = {STATEMENT_TIMEOUT_SECONDS}")
    return conn


class ReferenceDatabase:
    """A scratch database on the reference server; drop it (or use `with`) when done."""

    def __init__(self, conn: pymysql.connections.Connection, name: str) -> None:
        self._conn = conn
        self.name = name

    def run(self, sql: str) -> tuple[list[str], list[Row]]:
        """Column names and rows of a query, values as SQLite would give them; raises ReferenceQueryError."""
        try:
            with self._conn.cursor() as cursor:
                cursor.execute(sql)
                columns = [column[0] for column in cursor.description or ()]
                rows = [tuple(normalise_value(value) for value in row) for row in cursor.fetchall()]
        except pymysql.MySQLError as error:
            raise _reference_error(error) from None
        return columns, rows

    def drop(self) -> None:
        if self._conn.open:
            try:
                with self._conn.cursor() as cursor:
                    cursor.execute("UNLOCK TABLES")  # a dump that failed may have left its tables locked
                    cursor.execute(f"DROP DATABASE IF EXISTS `{self.name}`")
            finally:
                self._conn.close()

    def __enter__(self) -> ReferenceDatabase:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.drop()


def load_dump(url: str, dump_sql: str) -> ReferenceDatabase:
    """Load a MySQL dump into a new scratch database; raises DumpError (the scratch database is dropped)."""
    conn = connect(url)
    database = ReferenceDatabase(conn, f"termite_ref_{uuid.uuid4().hex[:16]}")
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{database.name}` CHARACTER SET utf8mb4 COLLATE {COLLATION}")
            cursor.execute(f"USE `{database.name}`")
            for statement in read_dump(dump_sql):
                if _SKIPPED.match(statement.text):
                    continue
                try:  # as written: the server reads its own versioned comments
                    cursor.execute(dump_sql[statement.start : statement.end])
                except pymysql.MySQLError as error:
                    raise DumpError(statement, str(_reference_error(error))) from None
    except BaseException:
        database.drop()
        raise
    return database


def _reference_error(error: pymysql.MySQLError) -> ReferenceQueryError:
    # PyMySQL's errors carry (code, message); errors raised by the driver itself may not.
    if len(error.args) == 2 and isinstance(error.args[0], int):
        return ReferenceQueryError(error.args[0], str(error.args[1]))
    return ReferenceQueryError(0, str(error) or type(error).__name__)


def normalise_value(value: object) -> Value:
    """A MySQL value in the form SQLite returns it: DECIMAL as float, dates and times as ISO text."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ", timespec="microseconds" if value.microsecond else "seconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return _time_text(value)
    # What pymysql's decoders give for any other column type: int, float, str, bytes or None.
    return cast(Value, value)


def _time_text(value: dt.timedelta) -> str:
    # MySQL TIME is a signed duration and may exceed 24 hours: '-01:30:00', '100:00:00'.
    microseconds = value // dt.timedelta(microseconds=1)
    sign = "-" if microseconds < 0 else ""
    seconds, fraction = divmod(abs(microseconds), 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    text = f"{sign}{hours:02d}:{minute:02d}:{second:02d}"
    return f"{text}.{fraction:06d}" if fraction else text
