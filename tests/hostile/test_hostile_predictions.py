"""The scorer's hostile corpus, submitted through the real upload path and scored end to end.

Each prediction ends with the outcome the sandbox tests expect, the database copy is unchanged, and the
next submission is scored normally.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from evaluation.services import database_add, version_create_draft, version_publish
from evaluation.sources import database_source_from_files
from leaderboard.models import Submission
from tests.evaluation.demo_db import CLIENTI, ORDINI, SCHEMA
from tests.evaluation.hostile_sql import HOSTILE

pytestmark = pytest.mark.django_db


def _refused_at_upload(sql: str) -> bool:
    """Over the upload's SQL cap, or not storable text (NUL, lone surrogates): the file is refused first."""
    try:
        sql.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return len(sql) > 20_000 or "\x00" in sql


REFUSED = {param.id for param in HOSTILE if _refused_at_upload(param.values[0])}

# Where the whole path ends otherwise than the sandbox alone, and why.
THROUGH_UPLOAD = {
    # The statement splitter of the dialect layer sees the trigger body's own statement: refused earlier.
    "create-temp-trigger": {"syntax_error"},
    # Not one of SQLite's built-in functions: the dialect's allow-list refuses the call before it runs.
    "fts3-tokenizer": {"syntax_error"},
    "load-extension": {"syntax_error"},
    "writefile": {"syntax_error"},
    # A blank prediction is no prediction at all.
    "empty": {"not_submitted"},
    # With the portal's limits, whether time or memory runs out first depends on the machine (and on its
    # load: a busy machine builds the string more slowly).
    "memory-exhaustion-by-sort": {"timeout", "resource_limit"},
    "group-concat-explosion": {"timeout", "resource_limit"},
    # Writing the capped 10 MB of text takes about 0.13 s on a quiet machine, close to this test's 0.2 s
    # budget: a busy one runs out of time first (the sandbox tests check the cap at their own budget).
    "printf-expansion-capped": {"wrong_result", "timeout"},
}


def _sqlite_dump() -> str:
    def literal(value) -> str:
        return (
            "NULL"
            if value is None
            else repr(value)
            if isinstance(value, (int, float))
            else "'" + value.replace("'", "''") + "'"
        )

    inserts = [
        f"INSERT INTO {table} VALUES ({', '.join(literal(v) for v in row)});"
        for table, rows in (("clienti", CLIENTI), ("ordini", ORDINI))
        for row in rows
    ]
    return SCHEMA + "\n".join(inserts) + "\n"


@pytest.fixture
def negozio():
    """A version whose one database is the sandbox tests' own, with one question per hostile query."""
    version = version_create_draft(label="ostile", name="Prova")
    questions = "\n".join(
        json.dumps({"question": f"Domanda {n}", "gold_sql": "SELECT COUNT(*) FROM clienti"})
        for n in range(1, len(HOSTILE) + 1)
    )
    database, sources = database_source_from_files(
        dump=_sqlite_dump().encode(),
        dump_name="negozio.sql",
        questions=questions.encode(),
        questions_name="q.jsonl",
        dialect="sqlite",
    )
    database_add(version=version, database=database, questions=sources)
    version_publish(version=version)
    return version


def test_every_hostile_prediction_ends_as_expected_through_the_upload(
    client, owner, negozio, settings, in_process, django_capture_on_commit_callbacks
):
    settings.TERMITE_QUERY_TIMEOUT = 0.2
    database = negozio.databases.get()
    before = hashlib.sha256(database.sqlite_path.read_bytes()).hexdigest()
    expected, lines = {}, []
    for number, param in enumerate(HOSTILE, start=1):
        if param.id in REFUSED:
            continue
        question_id = f"negozio-{number:03d}"
        # A hostile query that runs ("ok" in the sandbox) returns something other than the gold count.
        sandbox_outcome = "wrong_result" if param.values[1] == "ok" else param.values[1]
        expected[question_id] = (param.id, THROUGH_UPLOAD.get(param.id, {sandbox_outcome}))
        lines.append(json.dumps({"question_id": question_id, "sql": param.values[0]}))
    client.force_login(owner)
    form = {
        "model_name": "Ostile",
        "dialect": "sqlite",
        "version": negozio.pk,
        "predictions": SimpleUploadedFile("ostile.jsonl", "\n".join(lines).encode()),
    }
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("leaderboard:submission_new"), form)
    refused = response.context["form"].errors if response.status_code != 302 else None
    assert response.status_code == 302, refused
    submission = Submission.objects.get(user=owner)
    submission.refresh_from_db()
    assert submission.status == "scored"
    outcomes = {row["question_id"]: row["outcome"] for row in submission.outcomes}
    wrong = {
        f"{name}: {outcomes[qid]} (expected {sorted(accepted)})"
        for qid, (name, accepted) in expected.items()
        if outcomes[qid] not in accepted
    }
    assert not wrong, sorted(wrong)
    assert hashlib.sha256(database.sqlite_path.read_bytes()).hexdigest() == before
    with sqlite3.connect(f"file:{database.sqlite_path}?mode=ro", uri=True) as check:
        assert check.execute("SELECT COUNT(*) FROM clienti").fetchone() == (6,)

    # The scorer is still healthy: the next submission scores normally.
    form["predictions"] = SimpleUploadedFile(
        "buona.jsonl", b'{"question_id": "negozio-001", "sql": "SELECT COUNT(*) FROM clienti"}'
    )
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("leaderboard:submission_new"), form)
    latest = Submission.objects.order_by("-pk").first()
    assert latest.status == "scored" and latest.scores["outcomes"]["correct"] == 1


def test_hostile_queries_that_cannot_be_stored_are_refused_at_upload_with_their_line(client, owner, negozio):
    lines = [
        json.dumps({"question_id": f"negozio-{number:03d}", "sql": param.values[0]})
        for number, param in enumerate(HOSTILE, start=1)
        if param.id in REFUSED
    ]
    assert len(lines) >= 5, "the corpus has long queries, a NUL and lone surrogates"
    client.force_login(owner)
    response = client.post(
        reverse("leaderboard:submission_new"),
        {
            "model_name": "Ostile",
            "version": negozio.pk,
            "predictions": SimpleUploadedFile("lunghe.jsonl", "\n".join(lines).encode()),
        },
    )
    assert response.status_code == 400
    body = response.content.decode()
    for reason in (
        "the SQL is longer than 20000 characters",
        "contains a NUL character",
        "contains a lone surrogate",
    ):
        assert reason in body
    assert not Submission.objects.exists()
