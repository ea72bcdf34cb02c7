"""The leaderboard under load: a bounded number of queries whatever the number of submissions, a cache
covering each version and each format, and that cache dropped whenever the ranking changes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from evaluation.models import BenchmarkVersion
from leaderboard import ranking
from leaderboard.services import (
    leaderboard_changed,
    submission_moderate,
    submission_score,
    submission_withdraw,
)
from tests.leaderboard.page_rows import row_names
from tests.leaderboard.scored import bulk_scored, scored_fields

pytestmark = pytest.mark.django_db

PAGE = reverse("leaderboard:leaderboard")
JSON = reverse("api:leaderboard")
CSV = reverse("leaderboard:leaderboard_csv", args=["demo-1.0"])

# Cold: the published versions, the version's databases with their question counts, the submissions,
# the baselines. Warm: the published versions only (the ranking page's selector needs them).
COLD = {PAGE: 4, JSON: 4, CSV: 4}
WARM = {PAGE: 1, JSON: 1, CSV: 1}


@pytest.mark.parametrize("count", [10, 1000])
@pytest.mark.parametrize("url", [PAGE, JSON, CSV])
def test_the_page_and_the_exports_run_the_same_few_queries_for_10_or_1000_submissions(
    client, owner, demo_version, count, url
):
    bulk_scored(count, user=owner, version=demo_version)
    with CaptureQueriesContext(connection) as cold:
        response = client.get(url)
    assert response.status_code == 200
    with CaptureQueriesContext(connection) as warm:
        again = client.get(url)
    assert (len(cold), len(warm)) == (COLD[url], WARM[url])
    if url == PAGE:  # the page holds a fresh CSRF token each time (the language form)
        # The first page holds the first hundred rows (?all=1 every row).
        assert len(row_names(response)) == len(row_names(again)) == min(count, 100)
    else:
        assert again.content == response.content
    if url == JSON:
        assert len(response.json()["rows"]) == count


def test_the_rows_never_load_predictions_or_outcomes(client, owner, demo_version):
    bulk_scored(3, user=owner, version=demo_version)
    with CaptureQueriesContext(connection) as queries:
        client.get(PAGE)
    submissions = [q["sql"] for q in queries if "leaderboard_submission" in q["sql"]]
    assert len(submissions) == 1
    assert '"predictions"' not in submissions[0] and '"outcomes"' not in submissions[0]


def test_the_cache_serves_the_ranking_until_it_changes(client, make_submission, demo_version):
    submission = make_submission(model_name="Prima", **scored_fields(12))
    for url in (PAGE, JSON, CSV):
        assert "Prima" in client.get(url).content.decode()
    # Written behind the services' back: nobody drops the cache, so the old name stays.
    type(submission).objects.filter(pk=submission.pk).update(model_name="Dopo")
    for url in (PAGE, JSON, CSV):
        assert "Prima" in client.get(url).content.decode()
    leaderboard_changed(version=demo_version)
    for url in (PAGE, JSON, CSV):
        body = client.get(url).content.decode()
        assert "Dopo" in body and "Prima" not in body


def test_a_newly_scored_submission_appears_at_once(client, make_submission, gold):
    make_submission(model_name="Vecchia", **scored_fields(5))
    for url in (PAGE, JSON, CSV):
        client.get(url)
    fresh = make_submission(model_name="Appena valutata", predictions=gold, is_public=True)
    submission_score(submission_id=fresh.pk)
    for url in (PAGE, JSON, CSV):
        assert "Appena valutata" in client.get(url).content.decode(), url
    assert client.get(JSON).json()["rows"][0]["submission_id"] == fresh.pk


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(
            lambda s: submission_moderate(submission=s, hidden=True, flagged=False, reason="x"), id="hidden"
        ),
        pytest.param(lambda s: submission_withdraw(submission=s), id="withdrawn"),
    ],
)
def test_a_hidden_or_withdrawn_submission_leaves_at_once(client, make_submission, change):
    make_submission(model_name="Resta", **scored_fields(5))
    leaving = make_submission(model_name="Se ne va", **scored_fields(20))
    for url in (PAGE, JSON, CSV):
        assert "Se ne va" in client.get(url).content.decode()
    change(leaving)
    for url in (PAGE, JSON, CSV):
        body = client.get(url).content.decode()
        assert "Se ne va" not in body and "Resta" in body, url


def test_withdrawing_from_the_results_page_updates_the_leaderboard(client, owner, make_submission):
    leaving = make_submission(model_name="Se ne va", **scored_fields(20))
    assert "Se ne va" in client.get(PAGE).content.decode()
    client.force_login(owner)
    client.post(reverse("leaderboard:submission_withdraw", args=[leaving.pk]))
    assert "Se ne va" not in client.get(PAGE).content.decode()


def test_hiding_from_the_admin_updates_the_leaderboard(client, django_user_model, make_submission):
    hidden = make_submission(model_name="Da nascondere", **scored_fields(20))
    assert "Da nascondere" in client.get(JSON).content.decode()
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    url = reverse("admin:leaderboard_submission_change", args=[hidden.pk])
    assert client.post(url, {"is_hidden": "on", "moderation_reason": "duplicato"}).status_code == 302
    assert "Da nascondere" not in client.get(JSON).content.decode()


def test_the_cache_key_covers_the_version(client, make_submission, demo_version):
    other = BenchmarkVersion.objects.create(
        label="demo-2.0", name="Termite demo", status="published", published_at=timezone.now() + timedelta(1)
    )
    make_submission(model_name="Della prima", **scored_fields(10))
    make_submission(version=other, model_name="Della seconda", **scored_fields(10))
    first = client.get(JSON, {"version": "demo-1.0"}).json()
    second = client.get(JSON, {"version": "demo-2.0"}).json()
    assert [r["model_name"] for r in first["rows"]] == ["Della prima"]
    assert [r["model_name"] for r in second["rows"]] == ["Della seconda"]
    assert names_on_page(client, "demo-1.0") == ["Della prima"]
    assert names_on_page(client, "demo-2.0") == ["Della seconda"]
    # A change to one version leaves the other's cache alone.
    key = ranking.cache_key("demo-2.0", "json")
    leaderboard_changed(version=demo_version)
    assert ranking.cache_key("demo-2.0", "json") == key
    assert ranking.cache_key("demo-1.0", "json") != ranking.cache_key("demo-2.0", "json")


def names_on_page(client, label: str) -> list[str]:
    return row_names(client.get(PAGE, {"version": label}))


def test_a_page_built_while_a_change_commits_does_not_bring_back_the_old_ranking(
    client, make_submission, demo_version, django_capture_on_commit_callbacks
):
    submission = make_submission(model_name="Prima", **scored_fields(12))
    with django_capture_on_commit_callbacks() as callbacks:
        leaderboard_changed(version=demo_version)
        # Another request reads the rows before the change below is committed, and caches them.
        assert "Prima" in client.get(JSON).content.decode()
        type(submission).objects.filter(pk=submission.pk).update(model_name="Dopo")
    assert callbacks, "the cache must be dropped again once the change commits"
    for callback in callbacks:
        callback()
    assert "Dopo" in client.get(JSON).content.decode()


def test_the_leaderboard_still_answers_when_the_cache_is_down(client, make_submission, monkeypatch):
    from django.core.cache import cache

    make_submission(model_name="Presente", **scored_fields(12))

    def down(*args, **kwargs):
        raise ConnectionError("cache down")

    for method in ("get", "set", "add"):
        monkeypatch.setattr(cache, method, down)
    assert "Presente" in client.get(JSON).content.decode()
    leaderboard_changed(version=make_submission().version)  # must not raise: scoring calls it
