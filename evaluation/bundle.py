"""The task bundle participants download: questions and schemas, the full dumps where the version gives
the data (`evaluation.schemas.participant_dump`); gold only for a practice version (`practice_gold`)."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from evaluation.models import BenchmarkVersion, Database
from evaluation.schemas import participant_dump
from evaluation.scoring.schema_shape import from_json, spider_tables
from evaluation.scoring.scores_json import Schema
from evaluation.scoring.vocabulary import HARDNESS_LEVELS
from evaluation.selectors import practice_gold

# Fixed timestamps make the bundle byte-identical for the same version, so its sha256 can be cited.
_EPOCH = (2024, 1, 1, 0, 0, 0)

# What README.txt adds on a practice version, whose gold is public.
_GOLD_LINES = """                  On this practice version each question also has gold_sql, its gold query (MySQL).
"""

# What README.txt adds where the version gives participants the data; without it the bundle is as it was.
_DUMPS_LINES = """dumps/mysql/      each database's full dump as its authors published it: its schema and every row (the
                  databases you are scored on are built from these)
"""

README = """{version}: the Termite task bundle

questions.jsonl   one question per line: question_id, db_id, question (Italian), hardness, and added_on,
                  the day its database was added to the benchmark (YYYY-MM-DD)
{gold}schemas/mysql/    each database's schema as MySQL (the dialect the benchmark was written for)
schemas/sqlite/   the same schemas as the SQLite copies the scorer runs on (their COLLATE names are
                  MySQL's collations, which the scorer registers; drop them to load a file elsewhere)
tables.json       the same schemas in the format of Spider's tables.json
{dumps}Every form names the same tables, columns, types and keys: those of the databases you are scored on.
{renamed}
Submit one JSON object per line: {{"question_id": "...", "sql": "..."}} (MySQL by default; declare SQLite
on the upload form if you predict SQLite). Questions you leave out count as not submitted.
Keep this bundle private: do not publish the {kept}.
"""


class BundleQuestionJSON(TypedDict):
    """A question as the task bundle gives it (a line of questions.jsonl), and the API too."""

    question_id: str
    db_id: str
    question: Annotated[str, Schema(description="The question, in Italian")]
    hardness: Annotated[str, Schema(enum=list(HARDNESS_LEVELS))]
    added_on: Annotated[
        str, Schema(format="date", description="The day its database was added to the benchmark")
    ]
    gold_sql: NotRequired[
        Annotated[str, Schema(description="On a practice version only: the question's gold query (MySQL)")]
    ]


def bundle_questions(version: BenchmarkVersion) -> list[BundleQuestionJSON]:
    """The questions a version scores, in the bundle's order: by database, then as the database lists them;
    on a practice version, each with its gold."""
    gold = practice_gold(version=version)
    questions: list[BundleQuestionJSON] = []
    for q in version.questions.scored().select_related("database").order_by("database__slug", "position"):
        question: BundleQuestionJSON = {
            "question_id": q.public_id,
            "db_id": q.database.slug,
            "question": q.text,
            "hardness": q.hardness,
            "added_on": q.database.added_on.isoformat(),
        }
        if gold:
            question["gold_sql"] = gold[q.public_id]
        questions.append(question)
    return questions


def bundle_filename(version: BenchmarkVersion) -> str:
    return f"termite-{version.label}-task.zip"


def build_bundle(version: BenchmarkVersion) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:

        def add(name: str, text: str) -> None:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)

        databases = list(version.databases.order_by("slug"))
        data = version.shows_data
        add(
            "README.txt",
            README.format(
                version=version,
                gold=_GOLD_LINES if version.is_practice else "",
                renamed=_renamed_note(databases),
                dumps=_DUMPS_LINES if data else "",
                kept="questions, schemas or dumps" if data else "questions or schemas",
            ),
        )
        lines = [json.dumps(question, ensure_ascii=False) for question in bundle_questions(version)]
        add("questions.jsonl", "\n".join(lines) + "\n")
        for database in databases:
            add(f"schemas/mysql/{database.slug}.sql", database.shown_schema_sql)
            add(f"schemas/sqlite/{database.slug}.sql", database.shown_sqlite_schema)
        if data:
            for database in databases:
                add(f"dumps/mysql/{database.slug}.sql", participant_dump(database))
        tables = [spider_tables(db.slug, from_json(db.shown_schema_shape)) for db in databases]
        add("tables.json", json.dumps(tables, ensure_ascii=False, indent=1) + "\n")
    return buffer.getvalue()


def _renamed_note(databases: list[Database]) -> str:
    renamed = [database.slug for database in databases if database.renames_authors_schema]
    if not renamed:
        return ""
    return (
        f"For {', '.join(renamed)} these are the names of the database the gold runs on, which differ from\n"
        "the schema-only dumps the benchmark's authors published.\n"
    )
