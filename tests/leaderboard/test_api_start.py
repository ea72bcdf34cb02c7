"""What a client needs to start: the versions (GET /api/v1/versions), a version's questions as its task bundle
gives them (GET /api/v1/versions/<label>/questions), the index of the API and its docs to try."""

from __future__ import annotations

import io
import json
import re
import zipfile

import pytest
from django.urls import reverse

from evaluation.services import version_create_draft
from leaderboard.api_common import openapi_document
from termite_site.accounts.services import api_token_create
from tests.leaderboard.test_api import assert_error

pytestmark = pytest.mark.django_db

VERSIONS = reverse("api:versions")


def bearer(user) -> dict:
    return {"HTTP_AUTHORIZATION": f"Bearer {api_token_create(user=user, name='tests')[1]}"}


def questions_of(label: str) -> str:
    return reverse("api:version_questions", args=[label])


def test_anyone_lists_the_published_versions_with_what_a_client_needs(client, demo_version):
    (version,) = client.get(VERSIONS).json()["versions"]
    assert version == {
        "label": "demo-1.0",
        "name": "Termite demo",
        "kind": "sealed",
        "questions": 23,
        "databases": demo_version.databases.count(),
        "published_at": demo_version.published_at.isoformat(),
        "first_added_on": min(db.added_on for db in demo_version.databases.all()).isoformat(),
        "last_added_on": max(db.added_on for db in demo_version.databases.all()).isoformat(),
        "accepts_submissions": True,
        "latest": True,
        "questions_url": "http://testserver" + questions_of("demo-1.0"),
    }


def test_the_demo_a_new_portal_loads_is_listed_as_a_practice_version(client, practice_demo):
    assert [version["kind"] for version in client.get(VERSIONS).json()["versions"]] == ["practice"]


def test_opening_the_breakdowns_of_a_sealed_version_leaves_it_sealed(client, demo_version):
    demo_version.set_private_breakdowns(True)
    assert [version["kind"] for version in client.get(VERSIONS).json()["versions"]] == ["sealed"]


def test_a_draft_is_listed_to_staff_alone_and_takes_no_submissions(client, demo_version, owner, staff):
    version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    for who in (None, owner):
        listed = client.get(VERSIONS, **(bearer(who) if who else {})).json()["versions"]
        assert [version["label"] for version in listed] == ["demo-1.0"]
    listed = {
        version["label"]: version for version in client.get(VERSIONS, **bearer(staff)).json()["versions"]
    }
    assert listed["demo-1.1"]["accepts_submissions"] is False and listed["demo-1.1"]["published_at"] is None
    assert listed["demo-1.1"]["latest"] is False and listed["demo-1.0"]["latest"] is True


def test_the_questions_are_the_task_bundles_and_never_the_gold(client, owner, demo_version, gold):
    answer = client.get(questions_of("demo-1.0"), **bearer(owner))
    assert answer.status_code == 200
    client.force_login(owner)
    bundle = client.get(reverse("evaluation:task_bundle", args=["demo-1.0"])).content
    lines = zipfile.ZipFile(io.BytesIO(bundle)).read("questions.jsonl").decode().splitlines()
    assert answer.json() == {"version": "demo-1.0", "questions": [json.loads(line) for line in lines]}
    text = answer.content.decode()
    assert not [sql for sql in gold.values() if sql in text]


def test_the_questions_ask_for_a_token_a_confirmed_address_and_a_version_you_may_see(
    client, owner, staff, demo_version
):
    assert_error(client.get(questions_of("demo-1.0")), 401, "unauthenticated")
    client.force_login(owner)  # the session is no token
    assert_error(client.get(questions_of("demo-1.0")), 401, "unauthenticated")
    version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    assert_error(client.get(questions_of("demo-1.1"), **bearer(owner)), 404, "not_found")
    assert_error(client.get(questions_of("nessuna"), **bearer(owner)), 404, "not_found")
    assert client.get(questions_of("demo-1.1"), **bearer(staff)).status_code == 200
    owner.email_confirmed_at = None
    owner.save()
    assert_error(client.get(questions_of("demo-1.0"), **bearer(owner)), 403, "email_unconfirmed")


def test_the_index_lists_every_endpoint_and_leads_to_the_docs(client, db):
    page = client.get(reverse("api:index")).content.decode()
    for path, operations in openapi_document()["paths"].items():
        for method in operations:
            assert re.search(rf"<code>{method.upper()}</code></td><td><code>{re.escape(path)}</code>", page)
    assert f'href="{reverse("api:docs")}"' in page and f'href="{reverse("api:openapi")}"' in page


def test_the_docs_come_from_this_sites_static_files_and_read_its_document(client, db):
    page = client.get(reverse("api:docs")).content.decode()
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(source.startswith("/static/") for source in sources), sources
    settings_json = re.search(r'id="swagger-settings">(.*?)</script>', page, re.S)[1]
    assert json.loads(settings_json)["url"] == reverse("api:openapi")
    assert json.loads(settings_json)["validatorUrl"] is None  # no badge fetched from a validator on the web
