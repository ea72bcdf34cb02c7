"""Reading benchmark content from what admins upload: the Termite archive, dumps, question files.

Everything here turns raw input into `BenchmarkSource` or fails with a `SourceError` whose message is one
line naming the file, the line and the field. Nothing here writes anything.
"""

from __future__ import annotations

import hashlib
import json
import re
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import pyzipper

from evaluation.scoring.vocabulary import DIALECTS
from evaluation.text_lines import split_lines

ARCHIVE_QUESTIONS = "databases/queries.json"
# pyzipper has a BadZipFile of its own besides the standard library's.
_BAD_ZIP = (zipfile.BadZipFile, pyzipper.BadZipFile, zipfile.LargeZipFile, OSError, EOFError)
MAX_MEMBER_BYTES = 50 * 1024 * 1024  # a declared size above this is refused before reading (zip bombs)
MAX_ARCHIVE_BYTES = 200 * 1024 * 1024
QUESTION_ID = re.compile(r"^[a-z0-9][a-z0-9_]*-\d{3,}$")
DB_SLUG = re.compile(r"^[a-z0-9][a-z0-9_]{0,49}$")


class SourceError(ValueError):
    """Input that cannot be imported; the message says where and why, in one line."""


@dataclass(frozen=True)
class DatabaseSource:
    slug: str
    display_name: str
    dump: str
    dialect: str = "mysql"
    schema_dump: str | None = None
    description: str = ""


@dataclass(frozen=True)
class QuestionSource:
    public_id: str
    db_slug: str
    position: int
    text: str
    gold_sql: str


@dataclass(frozen=True)
class BenchmarkSource:
    databases: list[DatabaseSource]
    questions: list[QuestionSource]
    sha256: str = field(default="")
    # When the authors packed the archive: the newest date among its entries; None if it has none.
    packed_on: date | None = None


def _decode(data: bytes, where: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceError(f"{where}: not UTF-8 (byte {error.start})") from None


def read_termite_archive(path: Path, password: str) -> BenchmarkSource:
    """The Termite archive as its authors publish it: an AES zip of `databases/`."""
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"{path}: no such file")
    if path.stat().st_size > MAX_ARCHIVE_BYTES:
        raise SourceError(f"{path}: larger than {MAX_ARCHIVE_BYTES // 2**20} MB")
    try:
        archive = pyzipper.AESZipFile(path)
    except _BAD_ZIP as error:
        raise SourceError(f"{path}: not a zip archive ({error})") from None
    with archive:
        archive.setpassword(password.encode())
        members = {info.filename: info for info in archive.infolist()}

        def read(name: str) -> str:
            info = members.get(name)
            if info is None:
                raise SourceError(f"{path}: missing {name}")
            if info.file_size > MAX_MEMBER_BYTES:
                raise SourceError(f"{path}: {name} is larger than {MAX_MEMBER_BYTES // 2**20} MB")
            try:
                data = archive.read(name)
            except RuntimeError as error:
                if "password" in str(error).lower():
                    raise SourceError(f"{path}: wrong password") from None
                raise SourceError(f"{path}: cannot read {name} ({error})") from None
            except _BAD_ZIP as error:
                raise SourceError(f"{path}: {name} is damaged ({error})") from None
            return _decode(data, f"{path}: {name}")

        digest = hashlib.sha256()
        raw_questions = read(ARCHIVE_QUESTIONS)
        digest.update(raw_questions.encode())
        items = _parse_archive_questions(raw_questions, f"{path}: {ARCHIVE_QUESTIONS}")
        databases = []
        for slug in dict.fromkeys(item["db_id"] for item in items):
            folder = f"databases/{slug}"
            dump = read(f"{folder}/{slug}.sql")
            schema_name = f"{folder}/no_insert_{slug}.sql"
            schema = read(schema_name) if schema_name in members else None
            readme = f"{folder}/readme.txt"
            display = read(readme).strip() if readme in members else slug
            for part in (dump, schema or ""):
                digest.update(part.encode())
            databases.append(
                DatabaseSource(slug=slug, display_name=display or slug, dump=dump, schema_dump=schema)
            )
    return BenchmarkSource(
        databases=databases,
        questions=_number_questions(items),
        sha256=digest.hexdigest(),
        packed_on=_newest_entry_date(members.values()),
    )


def _newest_entry_date(entries: Iterable[Any]) -> date | None:  # pyzipper's ZipInfo, untyped
    """The newest modification date among a zip's entries, from their headers (no content is read).
    A zip writer that sets no dates leaves 1980-01-01, the format's first day: that tells nothing."""
    dates = []
    for info in entries:
        try:
            day = date(*info.date_time[:3])
        except ValueError:  # a damaged header's month 0 or day 0
            continue
        if day > date(1980, 1, 1):
            dates.append(day)
    return max(dates, default=None)


def _parse_archive_questions(text: str, where: str) -> list[dict[str, Any]]:
    try:
        items = json.loads(text)
    except json.JSONDecodeError as error:
        raise SourceError(f"{where}: line {error.lineno}: not valid JSON ({error.msg})") from None
    if not isinstance(items, list) or not items:
        raise SourceError(f"{where}: expected a non-empty JSON list of questions")
    for number, item in enumerate(items, start=1):
        if not isinstance(item, dict):
            raise SourceError(f"{where}: item {number}: not a JSON object")
        for key in ("db_id", "original", "query"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise SourceError(
                    f"{where}: item {number}: field {key!r} is missing or not a non-empty string"
                )
        if not DB_SLUG.match(item["db_id"]):
            raise SourceError(f"{where}: item {number}: db_id {item['db_id']!r} is not a valid database name")
    return items


def _number_questions(items: list[dict[str, Any]]) -> list[QuestionSource]:
    """Ids `<db>-<nnn>`: nnn is the 1-based position among that database's questions, in file order."""
    counters: dict[str, int] = {}
    questions = []
    for item in items:
        slug = item["db_id"]
        counters[slug] = counters.get(slug, 0) + 1
        position = counters[slug]
        questions.append(
            QuestionSource(
                public_id=f"{slug}-{position:03d}",
                db_slug=slug,
                position=position,
                text=item["original"].strip(),
                gold_sql=item["query"].strip(),
            )
        )
    return questions


def read_questions_jsonl(data: bytes, *, db_slug: str, where: str = "questions") -> list[QuestionSource]:
    """Questions for one database: one `{"id"?, "question", "gold_sql"}` object per line.

    Without an id a question is numbered by its position; an id must be `<db_slug>-<nnn>`.
    """
    text = _decode(data, where)
    questions: list[QuestionSource] = []
    seen: dict[str, int] = {}
    for line_number, line in enumerate(split_lines(text), start=1):
        if not line.strip():
            continue
        at = f"{where}: line {line_number}"
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceError(f"{at}: not valid JSON ({error.msg} at column {error.colno})") from None
        if not isinstance(item, dict):
            raise SourceError(f"{at}: expected a JSON object, got {type(item).__name__}")
        for key in ("question", "gold_sql"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise SourceError(f"{at}: field {key!r} is missing or not a non-empty string")
        position = len(questions) + 1
        public_id = item.get("id", f"{db_slug}-{position:03d}")
        if not isinstance(public_id, str) or not QUESTION_ID.match(public_id):
            raise SourceError(f"{at}: field 'id' must look like '{db_slug}-001'")
        if not public_id.startswith(f"{db_slug}-"):
            raise SourceError(f"{at}: field 'id' {public_id!r} does not belong to database {db_slug!r}")
        if public_id in seen:
            raise SourceError(f"{at}: field 'id' {public_id!r} repeats line {seen[public_id]}")
        seen[public_id] = line_number
        questions.append(
            QuestionSource(
                public_id=public_id,
                db_slug=db_slug,
                position=int(public_id.rsplit("-", 1)[1]),
                text=item["question"].strip(),
                gold_sql=item["gold_sql"].strip(),
            )
        )
    if not questions:
        raise SourceError(f"{where}: no questions")
    return questions


MAX_DUMP_BYTES = 20 * 1024 * 1024
MAX_QUESTIONS_BYTES = 5 * 1024 * 1024


def database_source_from_files(
    *,
    dump: bytes,
    dump_name: str,
    questions: bytes,
    questions_name: str,
    schema: bytes | None = None,
    slug: str | None = None,
    display_name: str | None = None,
    dialect: str = "mysql",
    description: str = "",
) -> tuple[DatabaseSource, list[QuestionSource]]:
    """One database and its questions from uploaded files (the staff form and `add_database`)."""
    slug = slug or Path(dump_name).stem.lower()
    if not DB_SLUG.match(slug):
        raise SourceError(f"database name {slug!r}: use lower-case letters, digits or underscores")
    if dialect not in DIALECTS:
        raise SourceError(f"dialect {dialect!r}: expected mysql or sqlite")
    for data, name, cap in (
        (dump, dump_name, MAX_DUMP_BYTES),
        (questions, questions_name, MAX_QUESTIONS_BYTES),
    ):
        if len(data) > cap:
            raise SourceError(f"{name}: larger than {cap // 2**20} MB")
        if not data.strip():
            raise SourceError(f"{name}: empty file")
    if schema is not None and len(schema) > MAX_DUMP_BYTES:
        raise SourceError(f"schema: larger than {MAX_DUMP_BYTES // 2**20} MB")
    database = DatabaseSource(
        slug=slug,
        display_name=(display_name or slug).strip(),
        dump=_decode(dump, dump_name),
        dialect=dialect,
        schema_dump=_decode(schema, "schema") if schema else None,
        description=description.strip(),
    )
    return database, read_questions_jsonl(questions, db_slug=slug, where=questions_name)


# The project's own small demo benchmark (our content, not Termite's): for the demo portal, the tests and
# the benchmarks when the archive is absent.
DEMO_DIR = Path(__file__).resolve().parent / "demo"
DEMO_DATABASES = {"biblioteca": "Biblioteca civica", "ciclismo": "Gare di ciclismo amatoriale"}


def demo_database_sources() -> list[tuple[DatabaseSource, list[QuestionSource]]]:
    """Each demo database with its questions, read as an admin's upload of its files would be."""
    sources = []
    for slug, display_name in DEMO_DATABASES.items():
        schema = DEMO_DIR / f"no_insert_{slug}.sql"
        sources.append(
            database_source_from_files(
                dump=(DEMO_DIR / f"{slug}.sql").read_bytes(),
                dump_name=f"{slug}.sql",
                questions=(DEMO_DIR / f"{slug}.jsonl").read_bytes(),
                questions_name=f"{slug}.jsonl",
                schema=schema.read_bytes() if schema.exists() else None,
                display_name=display_name,
            )
        )
    return sources


def demo_source() -> BenchmarkSource:
    """The whole demo benchmark as one source."""
    pairs = demo_database_sources()
    return BenchmarkSource(
        databases=[database for database, _ in pairs],
        questions=[question for _, questions in pairs for question in questions],
    )
