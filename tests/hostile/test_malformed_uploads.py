"""Malformed prediction files, through the web form and the API: each refused with a clear message, never a 500."""

from __future__ import annotations

import gzip
import io
import json
import os
import tarfile
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from leaderboard.models import Submission
from termite_site.accounts.services import api_token_create

pytestmark = pytest.mark.django_db

GOOD = {"question_id": "biblioteca-001", "sql": "SELECT 1"}


def lines(*items) -> bytes:
    return "\n".join(item if isinstance(item, str) else json.dumps(item) for item in items).encode()


def zipped(files: dict[str, bytes], *, declare: int | None = None) -> bytes:
    """A zip of `files`; with `declare`, its directory gives that size for every member, whatever it holds."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for info in archive.infolist():
            info.file_size = info.file_size if declare is None else declare
    return buffer.getvalue()


def tarred() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        data = lines(GOOD)
        info = tarfile.TarInfo("biblioteca/predict.txt")
        info.size = len(data)
        archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


MALFORMED = [
    pytest.param(os.urandom(4096).replace(b"\n", b" "), "NUL bytes", id="random-binary"),
    pytest.param(b"\x89PNG\r\n\x1a\n" + b"\0" * 100, "NUL bytes", id="png-image"),
    pytest.param(b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", "not UTF-8", id="pdf-document"),
    pytest.param(gzip.compress(lines(GOOD)), "NUL bytes", id="gzip-compressed"),
    pytest.param(tarred(), "NUL bytes", id="tar-archive"),
    pytest.param(
        b'{"question_id": "biblioteca-001", "sql": "SEL', "line 1: not a JSON object", id="truncated-json"
    ),
    pytest.param(
        lines(GOOD, '{"question_id": "biblioteca-002",'),
        "line 2: not a JSON object",
        id="truncated-last-line",
    ),
    pytest.param(
        b"{}\n" * 100_000, "line 50: field &#x27;question_id&#x27; is missing", id="hundred-thousand-lines"
    ),
    pytest.param(b"[" * 50_000 + b"]" * 50_000, "line 1:", id="deeply-nested-json"),
    pytest.param(b'{"a":' * 20_000 + b"1" + b"}" * 20_000, "line 1:", id="deeply-nested-objects"),
    pytest.param(
        lines({"question_id": "biblioteca-001", "sql": "x" * 4_000_000}),
        "longer than 20000 characters",
        id="huge-single-line",
    ),
    pytest.param(b"x" * (6 * 1024 * 1024), "larger than 5120 KB", id="over-the-size-cap"),
    pytest.param(lines(GOOD).decode().encode("utf-16"), "NUL bytes", id="utf16-with-bom"),
    pytest.param(lines(GOOD).decode().encode("utf-16-le"), "NUL bytes", id="utf16-without-bom"),
    pytest.param(b'{"question_id": "biblioteca-001", "sql": "SELECT \'per\xf2\'"}', "not UTF-8", id="latin1"),
    pytest.param(b"", "The submitted file is empty", id="empty"),
    pytest.param(b" \n\t\n\r\n", "the file is empty", id="only-whitespace"),
    pytest.param(json.dumps([GOOD, GOOD]).encode(), "expected a JSON object, got list", id="one-json-array"),
    pytest.param(
        b'{"question_id": "biblioteca-001", "sql": "SELECT 1",}', "not a JSON object", id="trailing-comma"
    ),
    pytest.param(b"42", "expected a JSON object, got int", id="a-number"),
    pytest.param(b"null", "expected a JSON object, got NoneType", id="null"),
    pytest.param(
        lines({"question_id": ["biblioteca-001"], "sql": "SELECT 1"}),
        "field &#x27;question_id&#x27; is not a string",
        id="id-as-list",
    ),
    pytest.param(
        lines({"question_id": "biblioteca-001", "sql": {"text": "SELECT 1"}}),
        "field &#x27;sql&#x27; is not a string",
        id="sql-as-object",
    ),
    pytest.param(
        b'{"question_id": "biblioteca-001", "sql": NaN}',
        "field &#x27;sql&#x27; is not a string",
        id="sql-nan",
    ),
    pytest.param(lines(GOOD, GOOD), "repeats line 1", id="duplicate-id"),
    pytest.param(
        lines({"question_id": "q" * 100_000, "sql": "SELECT 1"}), "unknown question", id="huge-unknown-id"
    ),
    pytest.param(
        b'{"question_id": "biblioteca-001", "sql": "SELECT \\u0000"}',
        "contains a NUL character",
        id="nul-character",
    ),
    pytest.param(
        b'{"question_id": "biblioteca-001", "sql": "SELECT \\udfff"}',
        "contains a lone surrogate",
        id="lone-surrogate",
    ),
    pytest.param(
        lines(GOOD) + b"\n\xef\xbb\xbf" + lines({"question_id": "biblioteca-002", "sql": "x"}),
        "line 2: not a JSON object",
        id="bom-in-the-middle",
    ),
    pytest.param(
        zipped({"biblioteca/predict.txt": b"\0" * (30 * 2**20)}),
        "unzips to more than 5120 KB, the upload limit",
        id="zip-bomb",
    ),
    pytest.param(
        zipped({f"{db}/predict.txt": b"\0" * (20 * 2**20) for db in ("biblioteca", "ciclismo")}, declare=10),
        "biblioteca/predict.txt: unzips past 5120 KB (the upload limit, for the whole zip)",
        id="zip-members-lying-about-their-size",
    ),
    pytest.param(
        zipped({f"f{n}/predict.txt": b"x" for n in range(600)}),
        "more than 500 files",
        id="zip-with-many-files",
    ),
    pytest.param(
        zipped({"../../etc/predict.txt": b"SELECT 1\tetc"}),
        "unknown database &#x27;etc&#x27;",
        id="zip-path-traversal",
    ),
    pytest.param(
        zipped({"inner.zip": zipped({"biblioteca/predict.txt": b"SELECT 1\tbiblioteca"})}),
        "no &lt;database&gt;/predict.txt",
        id="zip-in-a-zip",
    ),
    pytest.param(
        zipped({"biblioteca/predict.txt": b"SELECT 1\tbiblioteca"})[:40],
        "not a readable zip",
        id="truncated-zip",
    ),
    pytest.param(
        zipped({"biblioteca/predict.txt": "SELECT 'è'\tbiblioteca".encode("latin-1")}),
        "not UTF-8",
        id="zip-latin1",
    ),
]


@pytest.fixture
def participant(client, owner, demo_version):
    client.force_login(owner)
    return client


@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_the_web_form_refuses_it_with_a_clear_message(participant, data, message):
    response = participant.post(
        reverse("leaderboard:submission_new"),
        {"model_name": "M", "predictions": SimpleUploadedFile("p.jsonl", data)},
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Submission.objects.exists()


@pytest.mark.parametrize(("data", "message"), MALFORMED)
def test_the_api_refuses_it_with_a_clear_message(client, owner, demo_version, data, message):
    _token, raw = api_token_create(user=owner, name="t")
    response = client.post(
        reverse("api:submissions"),
        {"model_name": "M", "predictions": SimpleUploadedFile("p.jsonl", data)},
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert response.status_code in (400, 413)
    body = response.json()["error"]
    text = " ".join([body["message"], *body["details"]])
    plain = message.replace("&#x27;", "'").replace("&lt;", "<").replace("&gt;", ">")
    assert plain in text or response.status_code == 413
    assert not Submission.objects.exists()


def test_crlf_line_endings_are_not_malformed(participant, in_process, django_capture_on_commit_callbacks):
    data = lines(GOOD, {"question_id": "biblioteca-002", "sql": "SELECT 2"}).replace(b"\n", b"\r\n")
    with django_capture_on_commit_callbacks(execute=True):
        response = participant.post(
            reverse("leaderboard:submission_new"),
            {"model_name": "M", "predictions": SimpleUploadedFile("p.jsonl", data)},
        )
    assert response.status_code == 302
    assert Submission.objects.get().predictions == {
        "biblioteca-001": "SELECT 1",
        "biblioteca-002": "SELECT 2",
    }
