"""The task bundle participants download: questions and schemas, never gold."""

from __future__ import annotations

import io
import json
import zipfile

from evaluation.models import BenchmarkVersion

# Fixed timestamps make the bundle byte-identical for the same version, so its sha256 can be cited.
_EPOCH = (2024, 1, 1, 0, 0, 0)

README = """{version}: the Termite task bundle

questions.jsonl   one question per line: question_id, db_id, question (Italian), hardness
schemas/mysql/    each database's schema as MySQL (the dialect the benchmark was written for)
schemas/sqlite/   the same schemas as the SQLite copies the scorer runs on

Submit one JSON object per line: {{"question_id": "...", "sql": "..."}} (MySQL by default; declare SQLite
on the upload form if you predict SQLite). Questions you leave out count as not submitted.
Keep this bundle private: do not publish the questions or schemas.
"""


def bundle_filename(version: BenchmarkVersion) -> str:
    return f"termite-{version.label}-task.zip"


def build_bundle(version: BenchmarkVersion) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:

        def add(name: str, text: str) -> None:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)

        add("README.txt", README.format(version=version))
        lines = [
            json.dumps(
                {
                    "question_id": q.public_id,
                    "db_id": q.database.slug,
                    "question": q.text,
                    "hardness": q.hardness,
                },
                ensure_ascii=False,
            )
            for q in version.questions.scored()
            .select_related("database")
            .order_by("database__slug", "position")
        ]
        add("questions.jsonl", "\n".join(lines) + "\n")
        for database in version.databases.order_by("slug"):
            add(f"schemas/mysql/{database.slug}.sql", database.schema_sql)
            add(f"schemas/sqlite/{database.slug}.sql", database.sqlite_schema)
    return buffer.getvalue()
