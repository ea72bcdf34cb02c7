"""The schema participants see of a database, in every form, and the authors' schema-only dump beside it.

A question is fair only if the schema shown names what its gold uses, so the default is the schema of
the database that is scored, whatever the archive's schema-only dump says. Its forms are derived from
the built copy and checked against it: the MySQL text is the authors' schema-only dump when it builds
exactly the scored tables (its comments and layout kept), else the dump itself without its data; the
SQLite text is what the copy holds; `tables.json` is written from its shape. Staff may show the authors'
dump as published instead (`Database.schema_shown`); its forms are derived from it the same way.

What participants may see of a database as one text, the schema or the whole dump, follows its version's
setting (`participant_dump`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evaluation.models import Database
from evaluation.scoring import mysql_dump
from evaluation.scoring.mysql_dump import shape_of_ddl
from evaluation.scoring.schema_shape import Shape, differences, read_shape
from evaluation.sources import DatabaseSource, SourceError


@dataclass(frozen=True)
class SchemaForms:
    """One schema in each form participants get; the forms build the same `shape`."""

    text: str  # in the database's own dialect (MySQL for Termite)
    sqlite: str
    shape: Shape


def scored_schema(source: DatabaseSource, built: Path) -> SchemaForms:
    """The forms of the scored database's schema; `built` is its SQLite copy."""
    shape = read_shape(built)
    candidates = [source.schema_dump] if source.schema_dump else []
    candidates.append(source.dump)
    texts = [
        text for text in (_schema_text_or_none(c, source.dialect) for c in candidates) if text is not None
    ]
    for text in texts:
        if _shape_or_none(text, source.dialect) == shape:
            return SchemaForms(text=text, sqlite=mysql_dump.sqlite_schema(built), shape=shape)
    # The dump without its data builds what the dump builds, unless a data statement changed the tables.
    raise SourceError(
        f"database {source.slug}: its statements without the data build other tables than the dump: "
        + "; ".join(differences(_shape_or_none(texts[-1], source.dialect) or (), shape))
    )


def authors_schema(source: DatabaseSource) -> SchemaForms | None:
    """The forms of the authors' schema-only dump as published; None when there is none, or it cannot
    be built (the build report says so)."""
    if not source.schema_dump:
        return None
    text = _schema_text_or_none(source.schema_dump, source.dialect)
    if text is None:
        return None
    with tempfile.TemporaryDirectory(prefix="termite-schema-") as folder:
        target = Path(folder) / "authors.sqlite3"
        try:
            mysql_dump.build_sqlite(text, target, source=source.dialect)
        except mysql_dump.DumpError:
            return None
        return SchemaForms(text=text, sqlite=mysql_dump.sqlite_schema(target), shape=read_shape(target))


def _schema_text_or_none(dump: str, dialect: str) -> str | None:
    """The dump without its data; None when it cannot be read (a DELIMITER command without a delimiter)."""
    try:
        return mysql_dump.schema_text(dump, source=dialect)
    except mysql_dump.DumpError:
        return None


def _shape_or_none(text: str, dialect: str) -> Shape | None:
    try:
        return shape_of_ddl(text, source=dialect)
    except mysql_dump.DumpError:
        return None


def participant_dump(database: Database) -> str:
    """The text participants may see of `database` under its version's setting, in its own dialect (MySQL
    for Termite): the schema they are shown (the bundle's `schemas/mysql/`), or, where the version gives
    the data, the full dump as imported (the authors' dump, as the paper's first turn shows it).

    Nothing hidden can be in it: both texts are the database's own source, written before and apart from
    its questions, gold, test suite and errata, and a version gives the data only while no dump quotes a
    gold query (`quoted_golds`, which `services` applies whenever a version gives the data)."""
    if database.version.shows_data:
        return database.original_dump
    return database.shown_schema_sql


def quoted_golds(dump: str, golds: Iterable[tuple[str, str]]) -> list[str]:
    """The ids of the questions (id, gold query) whose gold `dump` holds, whitespace aside: a dump that
    quotes one, say in a comment or a row, may not be given to participants."""
    flat = " ".join(dump.split())
    return sorted(
        {public_id for public_id, gold in golds if (text := " ".join(gold.split())) and text in flat}
    )
