"""What participants see of the benchmark: logged in only, never indexed, never the gold."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse

from evaluation.services import version_create_draft
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.factories import version_make

pytestmark = pytest.mark.django_db


def pages(version) -> list[str]:
    database = version.databases.first()
    return [
        reverse("evaluation:version_list"),
        reverse("evaluation:version_detail", args=[version.label]),
        reverse("evaluation:database_detail", args=[version.label, database.slug]),
        reverse("evaluation:task_bundle", args=[version.label]),
    ]


def test_anonymous_visitors_are_sent_to_log_in_everywhere(client, demo_version):
    for url in pages(demo_version):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response.url.startswith(reverse("accounts:login")), url


def test_participants_see_every_page_marked_noindex_and_without_gold(client, owner, demo_version):
    client.force_login(owner)
    golds = gold_texts()
    for url in pages(demo_version):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["X-Robots-Tag"] == "noindex, nofollow, noarchive", url
        assert_no_gold(response.content, golds, where=url)
    html = client.get(pages(demo_version)[2]).content
    assert b'<meta name="robots" content="noindex, nofollow">' in html


def test_the_database_page_shows_the_schema_and_the_questions(client, owner, demo_version):
    client.force_login(owner)
    database = demo_version.databases.get(slug="biblioteca")
    body = client.get(database.get_absolute_url()).content.decode()
    assert "CREATE TABLE" in body
    for question in database.questions.all():
        assert question.public_id in body


def test_the_task_bundle_holds_questions_and_both_schemas_and_no_gold(client, owner, demo_version):
    client.force_login(owner)
    response = client.get(reverse("evaluation:task_bundle", args=[demo_version.label]))
    assert response["Content-Disposition"] == f'attachment; filename="termite-{demo_version.label}-task.zip"'
    archive = zipfile.ZipFile(io.BytesIO(response.content))
    names = set(archive.namelist())
    for slug in ("biblioteca", "ciclismo"):
        assert {f"schemas/mysql/{slug}.sql", f"schemas/sqlite/{slug}.sql"} <= names
    lines = [json.loads(line) for line in archive.read("questions.jsonl").decode().splitlines()]
    assert len(lines) == demo_version.questions.scored().count()
    assert set(lines[0]) == {"question_id", "db_id", "question", "hardness", "added_on"}
    # Not hidden data: the day each database joined the benchmark, to compare with a training cutoff.
    assert {line["db_id"]: line["added_on"] for line in lines} == {
        "biblioteca": "2024-03-01",
        "ciclismo": "2025-03-01",
    }
    golds = gold_texts()
    for name in names:
        assert_no_gold(archive.read(name), golds, where=name)


def test_the_bundle_is_byte_identical_between_downloads(client, owner, demo_version):
    client.force_login(owner)
    url = reverse("evaluation:task_bundle", args=[demo_version.label])
    assert client.get(url).content == client.get(url).content


def test_drafts_are_hidden_from_participants_but_shown_to_staff(client, owner, staff, demo_version):
    version_create_draft(label="zeta-9", name="Termite", derived_from=demo_version)
    client.force_login(owner)
    assert client.get(reverse("evaluation:version_detail", args=["zeta-9"])).status_code == 404
    assert b"zeta-9" not in client.get(reverse("evaluation:version_list")).content
    client.force_login(staff)
    assert client.get(reverse("evaluation:version_detail", args=["zeta-9"])).status_code == 200


def test_the_version_list_counts_each_question_once_however_many_databases(client, owner):
    version = version_make(label="conta-1.0", databases={"biblioteca": 3, "ciclismo": 20})
    client.force_login(owner)
    response = client.get(reverse("evaluation:version_list"))
    listed = next(v for v in response.context["versions"] if v.pk == version.pk)
    assert (listed.question_count, listed.database_count) == (23, 2)
    assert '<td class="num">2</td><td class="num">23</td>' in response.content.decode()


def test_unknown_versions_and_databases_are_404(client, owner, demo_version):
    client.force_login(owner)
    assert client.get(reverse("evaluation:version_detail", args=["nope"])).status_code == 404
    assert (
        client.get(reverse("evaluation:database_detail", args=[demo_version.label, "nope"])).status_code
        == 404
    )


def test_the_pages_only_take_get(client, owner, demo_version):
    client.force_login(owner)
    for url in pages(demo_version):
        assert client.post(url).status_code == 405, url


def test_robots_txt_disallows_the_benchmark_pages(client):
    body = client.get("/robots.txt").content.decode()
    assert "Disallow: /benchmark/" in body
    assert "Disallow: /staff/" in body
