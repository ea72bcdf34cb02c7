"""A submission the portal ran: its mark on the leaderboard, its page, the API and the exports; the
`?portal_run=1` filter; and its transcript, which only its owner and staff can reach."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser
from django.urls import reverse

from leaderboard.jobs import run_protocol
from termite_site.accounts.services import api_token_create
from tests.demo import PUBLIC_CARD
from tests.leaderboard.protocol_runs import good_model, start_run
from tests.leaderboard.scored import scored_fields
from tests.openai_stub import OpenAIStub

pytestmark = pytest.mark.usefixtures("in_process", "loopback_allowed", "no_waiting")

LEADERBOARD = reverse("leaderboard:leaderboard")


@pytest.fixture
def portal_submission(demo_version, owner, django_capture_on_commit_callbacks):
    card = {
        "model_name": "Modello del portale",
        "is_public": True,
        **{k: PUBLIC_CARD[k] for k in ("model_size", "weights", "training_cutoff")},
    }
    with OpenAIStub(good_model(demo_version)) as stub:
        run = start_run(owner, demo_version, stub, model_card=card)
        with django_capture_on_commit_callbacks(execute=True):
            run_protocol(run.pk)
    run.refresh_from_db()
    assert run.submission.status == "scored" and run.submission.is_public
    return run.submission


@pytest.fixture
def uploaded(make_submission, other_user):
    return make_submission(user=other_user, model_name="Modello caricato", **scored_fields(15))


def test_the_leaderboard_marks_the_portals_row_and_filters_on_it(client, portal_submission, uploaded):
    html = client.get(LEADERBOARD).content.decode()
    assert 'class="badge portal-run"' in html and "termite-2turn-it/1 · 127.0.0.1" in html
    assert 'data-portal-run="1"' in html and 'data-portal-run=""' in html
    assert 'name="portal_run" value="1"' in html
    filtered = client.get(LEADERBOARD, {"portal_run": "1"}).content.decode()
    assert 'name="portal_run" value="1" checked' in filtered
    tbody = filtered.split("<tbody")[1].split("</tbody>")[0]
    shown = [part for part in tbody.split("<tr")[1:] if not part.startswith(" hidden")]
    assert len(shown) == 1 and "Modello del portale" in shown[0]


def test_the_exports_carry_the_mark(client, portal_submission, uploaded):
    rows = {row["model_name"]: row for row in client.get(reverse("api:leaderboard")).json()["rows"]}
    mark = rows["Modello del portale"]
    assert (mark["portal_run"], mark["portal_protocol"], mark["portal_endpoint_host"]) == (
        True,
        "termite-2turn-it/1",
        "127.0.0.1",
    )
    assert mark["portal_run_at"] == portal_submission.portal_run_at.date().isoformat()
    assert (
        rows["Modello caricato"]["portal_run"] is False
        and rows["Modello caricato"]["portal_protocol"] is None
    )
    csv = client.get(reverse("leaderboard:leaderboard_csv", args=["demo-1.0"])).content.decode()
    assert ",true,termite-2turn-it/1,127.0.0.1," in csv


def test_the_public_page_shows_the_mark_and_only_the_owner_and_staff_reach_the_transcript(
    client, portal_submission, owner, other_user, staff
):
    url = portal_submission.get_absolute_url()
    for viewer in (None, other_user):
        if viewer:
            client.force_login(viewer)
        html = client.get(url).content.decode()
        assert 'id="portal-run"' in html and portal_submission.transcript_sha256 in html
        assert 'id="portal-run-link"' not in html
        assert f"/runs/{portal_submission.protocol_run.pk}/" not in html
    for viewer in (owner, staff):
        client.force_login(viewer)
        assert f'href="/runs/{portal_submission.protocol_run.pk}/"' in client.get(url).content.decode()


def test_the_api_gives_the_mark_to_whoever_may_see_the_submission(client, portal_submission, other_user):
    token = api_token_create(user=other_user, name="t")[1]
    body = client.get(
        reverse("api:submission_detail", args=[portal_submission.pk]), HTTP_AUTHORIZATION=f"Bearer {token}"
    ).json()
    assert body["portal_run"] == {
        "protocol": "termite-2turn-it/1",
        "endpoint_host": "127.0.0.1",
        "run_at": portal_submission.portal_run_at.isoformat(),
        "transcript_sha256": portal_submission.transcript_sha256,
    }
    assert "127.0.0.1:" not in str(body) and "chat/completions" not in str(body)  # the host, never the URL


def test_the_feedback_module_shows_the_transcript_to_the_owner_and_staff_only(
    portal_submission, owner, other_user, staff
):
    from leaderboard.feedback import transcript_run

    assert transcript_run(portal_submission, AnonymousUser()) is None
    assert transcript_run(portal_submission, other_user) is None
    assert transcript_run(portal_submission, owner) == transcript_run(portal_submission, staff) is not None
