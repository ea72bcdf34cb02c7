"""The leaderboard under load: a bounded number of queries whatever the number of submissions, a cache
covering each version and each format, and that cache dropped whenever the ranking changes."""

from __future__ import annotations

import gzip
import hashlib
import re
import time
from datetime import timedelta

import pytest
from django.contrib import messages
from django.contrib.messages.storage.cookie import CookieStorage
from django.contrib.messages.storage.session import SessionStorage
from django.core.cache import cache
from django.db import connection
from django.http import HttpResponse
from django.test import Client, RequestFactory
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from evaluation.services import version_create_draft, version_publish
from leaderboard import ranking, ranking_views
from leaderboard.services import (
    leaderboard_changed,
    submission_moderate,
    submission_score,
    submission_withdraw,
)
from termite_site.accounts.services import team_rename
from tests.factories import version_make
from tests.leaderboard.page_rows import row_names
from tests.leaderboard.scored import bulk_scored, scored_fields

pytestmark = pytest.mark.django_db

PAGE = reverse("leaderboard:leaderboard")
JSON = reverse("api:leaderboard")
CSV = reverse("leaderboard:leaderboard_csv", args=["demo-1.0"])

# Cold: the published versions, the version's databases with their question counts, the submissions with
# their verdicts per question (the rank rule's), the baselines. Warm: the published versions only (the
# ranking page's selector needs them), and for an anonymous visitor's page nothing: its whole answer is
# kept.
COLD = {PAGE: 4, JSON: 4, CSV: 4}
WARM = {PAGE: 0, JSON: 1, CSV: 1}


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
    assert again.content == response.content
    if url == PAGE:  # the first page holds the first hundred rows (?all=1 every row)
        assert len(row_names(response)) == min(count, 100)
    if url == JSON:
        assert len(response.json()["rows"]) == count


def test_the_rows_never_load_predictions_and_read_the_verdicts_once(client, owner, demo_version):
    """The verdicts each row keeps (one per question) are read with the rows, once per build, for the rank
    rule; the outcome lines they were made of (a hundred bytes and more a question) and the files never."""
    bulk_scored(3, user=owner, version=demo_version)
    with CaptureQueriesContext(connection) as queries:
        client.get(PAGE)
    submissions = [q["sql"] for q in queries if "leaderboard_submission" in q["sql"]]
    assert len(submissions) == 1
    assert '"ea_verdicts"' in submissions[0]
    assert '"predictions"' not in submissions[0] and '"outcomes"' not in submissions[0]


def test_a_cold_page_gets_the_versions_rows_and_charts_once(client, owner, demo_version, monkeypatch):
    """After a change the columns' build makes the version's page (rows, charts); the context uses that one
    rather than unpickling it back from the cache, a thousand rows again."""
    bulk_scored(3, user=owner, version=demo_version)
    calls = []
    page_of = ranking_views._page
    monkeypatch.setattr(
        ranking_views, "_page", lambda version: calls.append(version.label) or page_of(version)
    )
    assert client.get(PAGE).status_code == 200
    assert calls == [demo_version.label]


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
    other = version_make(label="demo-2.0")
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


# The page's answer is cached whole (termite_site/cached_page.py): per version, language and query,
# gzipped, with the visitor's nav put in per request.

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]*"')


def without_tokens(body: bytes) -> str:
    return TOKEN.sub("", body.decode())


def test_a_cached_answer_renders_nothing_but_the_visitors_nav(client, make_submission):
    make_submission(model_name="Prima", **scored_fields(12))
    first = client.get(PAGE)
    assert "leaderboard/ranking.html" in [t.name for t in first.templates]
    again = client.get(PAGE)
    assert [t.name for t in again.templates if not t.name.startswith("site/")] == []
    assert "Prima" in again.content.decode()


def rename_team(submission):
    team_rename(team=submission.team, name="Gruppo Nuovo", by=submission.user)


@pytest.mark.parametrize(
    ("change", "gone", "present"),
    [
        pytest.param(
            lambda s: submission_moderate(submission=s, hidden=True, flagged=False, reason="x"),
            "Se ne va",
            "Resta",
            id="hidden",
        ),
        pytest.param(lambda s: submission_withdraw(submission=s), "Se ne va", "Resta", id="withdrawn"),
        pytest.param(rename_team, "Gruppo Vecchio", "Gruppo Nuovo", id="team renamed"),
    ],
)
@pytest.mark.parametrize(
    "query", [{}, {"sort": "model_name", "order": "asc"}, {"all": "1"}, {"weights": "open"}]
)
def test_every_cached_answer_is_dropped_when_the_ranking_changes(
    client, make_submission, make_team, change, gone, present, query
):
    make_submission(model_name="Resta", weights="open", **scored_fields(5))
    leaving = make_submission(
        model_name="Se ne va", weights="open", team=make_team("Gruppo Vecchio"), **scored_fields(20)
    )
    assert gone in client.get(PAGE, query).content.decode()
    assert gone in client.get(PAGE, query).content.decode()  # cached
    change(leaving)
    body = client.get(PAGE, query, HTTP_ACCEPT_ENCODING="gzip").content
    assert gone not in gzip.decompress(body).decode() and present in gzip.decompress(body).decode()


def test_a_newly_scored_submission_shows_on_the_cached_gzipped_page(client, make_submission, gold):
    make_submission(model_name="Vecchia", **scored_fields(5))
    client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
    fresh = make_submission(model_name="Appena valutata", predictions=gold, is_public=True)
    submission_score(submission_id=fresh.pk)
    assert (
        "Appena valutata" in gzip.decompress(client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip").content).decode()
    )


@pytest.mark.parametrize("logged_in", [False, True])
def test_a_client_that_accepts_gzip_gets_the_same_page_gzipped(client, owner, make_submission, logged_in):
    make_submission(model_name="Prima", **scored_fields(12))
    if logged_in:
        client.force_login(owner)
    for _cold_then_cached in range(2):
        zipped = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        plain = client.get(PAGE)
        assert zipped["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain
        assert without_tokens(gzip.decompress(zipped.content)) == without_tokens(plain.content)
        assert len(zipped.content) < len(plain.content) / 3
        assert zipped["Vary"] == plain["Vary"]
        assert {"Accept-Encoding", "Accept-Language", "Cookie"} <= {
            v.strip() for v in zipped["Vary"].split(",")
        }
        assert "private" in zipped["Cache-Control"]


@pytest.mark.parametrize("accept", ["", "identity", "gzip;q=0", "br", "deflate, gzip;q=0.0"])
def test_a_client_that_does_not_accept_gzip_gets_the_page_plain(client, make_submission, accept):
    make_submission(model_name="Prima", **scored_fields(12))
    for _cold_then_cached in range(2):
        response = client.get(PAGE, HTTP_ACCEPT_ENCODING=accept)
        assert "Content-Encoding" not in response and "Prima" in response.content.decode()


def test_a_matching_etag_gets_304_until_the_page_changes(client, make_submission, demo_version):
    submission = make_submission(model_name="Prima", **scored_fields(12))
    first = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip")
    etag = first["ETag"]
    assert etag.startswith('W/"')
    again = client.get(PAGE, HTTP_ACCEPT_ENCODING="gzip", HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == etag
    # Plain or gzipped, it is the same page: a weak ETag for both.
    assert client.get(PAGE, HTTP_IF_NONE_MATCH=etag).status_code == 304
    # Another query, another page.
    assert client.get(PAGE, {"sort": "ea"}, HTTP_IF_NONE_MATCH=etag).status_code == 200
    leaderboard_changed(version=demo_version)  # the same rows: the same page
    assert client.get(PAGE, HTTP_IF_NONE_MATCH=etag).status_code == 304
    type(submission).objects.filter(pk=submission.pk).update(model_name="Dopo")
    leaderboard_changed(version=demo_version)
    changed = client.get(PAGE, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag


def test_an_etag_is_the_visitors_own(client, owner, other_user, make_submission):
    make_submission(model_name="Prima", **scored_fields(12))
    anonymous = client.get(PAGE)["ETag"]
    client.force_login(owner)
    # Logged in, the nav differs (and the CSRF secret was rotated): the anonymous copy is not theirs.
    as_owner = client.get(PAGE, HTTP_IF_NONE_MATCH=anonymous)
    assert as_owner.status_code == 200 and as_owner["ETag"] != anonymous
    client.force_login(other_user)
    assert client.get(PAGE, HTTP_IF_NONE_MATCH=as_owner["ETag"]).status_code == 200


def test_one_visitors_page_never_reaches_another(client, owner, other_user, make_submission):
    make_submission(model_name="Prima", **scored_fields(12))
    client.force_login(owner)
    for query in ({}, {"all": "1"}):
        assert owner.username in client.get(PAGE, query).content.decode()  # cached now
    client.logout()
    for query in ({}, {"all": "1"}):
        anonymous = client.get(PAGE, query, HTTP_ACCEPT_ENCODING="gzip")
        body = gzip.decompress(anonymous.content).decode()
        assert owner.username not in body and reverse("accounts:login") in body
    client.force_login(other_user)
    body = client.get(PAGE).content.decode()
    assert other_user.username in body and owner.username not in body


def test_the_language_form_of_a_cached_page_works_for_each_visitor_without_a_token(make_submission, db):
    make_submission(model_name="Prima", **scored_fields(12))
    for _first_then_cached in range(2):
        visitor = Client(enforce_csrf_checks=True)
        body = visitor.get(PAGE).content.decode()
        assert "csrfmiddlewaretoken" not in body
        answer = visitor.post(reverse("set_language"), {"language": "en", "next": PAGE})
        assert answer.status_code == 302 and answer.cookies["django_language"].value == "en"
        assert visitor.get(PAGE)["Content-Language"] == "en"


def test_the_logout_form_keeps_its_token(client, owner, make_submission):
    make_submission(model_name="Prima", **scored_fields(12))
    client.force_login(owner)
    for _first_then_cached in range(2):
        assert len(TOKEN.findall(client.get(PAGE).content.decode())) == 1


# An anonymous visitor's answer is kept whole (leaderboard/ranking.py, `whole_page`): the second visitor
# gets the bytes the first one got, and nothing is rendered or queried for them.

GZIP = {"HTTP_ACCEPT_ENCODING": "gzip, deflate, br"}


def test_an_anonymous_visitor_gets_the_kept_answer_without_any_query_or_template(make_submission, db):
    make_submission(model_name="Prima", **scored_fields(12))
    first = Client().get(PAGE, **GZIP)
    with CaptureQueriesContext(connection) as queries:
        second = Client().get(PAGE, **GZIP)
    assert second.content == first.content and second["ETag"] == first["ETag"]
    assert (len(queries), second.templates) == (0, [])
    assert "Prima" in gzip.decompress(second.content).decode()
    assert Client().get(PAGE, HTTP_IF_NONE_MATCH=first["ETag"], **GZIP).status_code == 304


def test_a_signed_in_visitor_gets_the_kept_page_with_only_their_nav_made_for_them(
    make_submission, owner, other_user
):
    """The page without its nav is kept per address for visitors with a session: after the first, no
    query but their session's and their own row, and only the nav's template."""
    make_submission(model_name="Prima", **scored_fields(12))
    first, second = Client(), Client()
    first.force_login(owner)
    second.force_login(other_user)
    assert first.get(PAGE, **GZIP).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        response = second.get(PAGE, **GZIP)
    body = gzip.decompress(response.content).decode()
    assert "Prima" in body and other_user.username in body and owner.username not in body
    assert [t.name for t in response.templates if t.name] == ["site/_nav.html", "site/_nav_links.html"]
    assert not any("leaderboard_submission" in q["sql"] or "benchmarkversion" in q["sql"] for q in queries)


def test_a_page_served_stale_while_another_request_renders_the_change_is_not_kept_as_current(
    make_submission, demo_version
):
    make_submission(model_name="Prima", **scored_fields(12))
    assert Client().get(PAGE).status_code == 200  # built, cached and kept
    make_submission(model_name="Seconda", **scored_fields(20))
    leaderboard_changed(version=demo_version)
    rows = ranking.cache_key(demo_version.label, "rows")
    assert cache.add(f"{rows}:building", 1)  # another request is building the new ranking
    assert row_names(Client().get(PAGE)) == ["Prima"]  # served the ranking before the change
    cache.delete(f"{rows}:building")  # the other request is done (here: died; the next one builds)
    assert row_names(Client().get(PAGE)) == ["Seconda", "Prima"]


@pytest.mark.parametrize(
    "address",
    [
        PAGE + "?sort=rank",  # the default said aloud
        PAGE + "?page=1",
        PAGE + "?order=desc&sort=ea",  # the parameters in another order
        PAGE + "?utm_source=x",  # a parameter the page does not know
        PAGE + "?q=Prima",  # a search
    ],
)
def test_an_answer_is_kept_only_at_its_pages_one_address(make_submission, db, address):
    make_submission(model_name="Prima", **scored_fields(12))
    for _first_then_again in range(2):
        assert Client().get(address, **GZIP).status_code == 200
    assert ranking.whole_page(f"en {PAGE}")[0] is None  # the canonical address was never asked for
    assert ranking.whole_page(f"en {address}")[0] is None


def test_each_language_has_its_own_kept_answer(make_submission, db):
    make_submission(model_name="Prima", **scored_fields(12))
    for _first_then_kept in range(2):
        italian = Client().get(PAGE, HTTP_ACCEPT_LANGUAGE="it", **GZIP)
        english = Client().get(PAGE, HTTP_ACCEPT_LANGUAGE="en", **GZIP)
        assert 'lang="it"' in gzip.decompress(italian.content).decode()
        assert 'lang="en"' in gzip.decompress(english.content).decode()


@pytest.mark.parametrize("cookie", ["sessionid", "messages"])
def test_a_visitor_with_a_session_or_a_message_never_gets_the_kept_answer(make_submission, db, cookie):
    make_submission(model_name="Prima", **scored_fields(12))
    Client().get(PAGE, **GZIP)
    visitor = Client()
    visitor.cookies[cookie] = "anything"
    with CaptureQueriesContext(connection) as queries:
        assert visitor.get(PAGE, **GZIP).status_code == 200
    assert len(queries) >= 1  # the page was made for them


def test_a_kept_answer_ends_when_a_version_is_published(make_submission, demo_version):
    make_submission(model_name="Prima", **scored_fields(12))
    assert "demo-1.0" in gzip.decompress(Client().get(PAGE, **GZIP).content).decode()
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    version_publish(version=draft)
    body = gzip.decompress(Client().get(PAGE, **GZIP).content).decode()
    assert re.search(r'<option value="demo-1.1" selected', body)


def test_a_kept_answer_ends_when_a_scored_row_is_released(make_submission, demo_version, monkeypatch):
    make_submission(model_name="Prima", **scored_fields(12))
    later = make_submission(model_name="Poi", **scored_fields(20))
    type(later).objects.filter(pk=later.pk).update(released_at=timezone.now() + timedelta(minutes=5))
    leaderboard_changed(version=demo_version)
    assert "Poi" not in gzip.decompress(Client().get(PAGE, **GZIP).content).decode()
    ten_minutes_later = time.time() + 600
    monkeypatch.setattr(time, "time", lambda: ten_minutes_later)
    type(later).objects.filter(pk=later.pk).update(released_at=timezone.now() - timedelta(seconds=1))
    assert "Poi" in gzip.decompress(Client().get(PAGE, **GZIP).content).decode()


def test_the_page_is_served_when_the_cache_is_down(make_submission, db, monkeypatch):
    make_submission(model_name="Prima", **scored_fields(12))

    def down(*args, **kwargs):
        raise ConnectionError("cache down")

    for method in ("get", "get_many", "set", "set_many", "add"):
        monkeypatch.setattr(cache, method, down)
    for _twice in range(2):
        response = Client().get(PAGE, **GZIP)
        assert response.status_code == 200 and "Prima" in gzip.decompress(response.content).decode()


def test_a_page_with_a_message_for_its_visitor_is_not_cached(client, owner, make_submission):
    make_submission(model_name="Prima", **scored_fields(12))
    client.force_login(owner)
    stored, response = CookieStorage(RequestFactory().get("/")), HttpResponse()
    stored.add(messages.SUCCESS, "Messaggio per te solo")
    stored.update(response)
    client.cookies.update(response.cookies)
    assert "Messaggio per te solo" in client.get(PAGE).content.decode()
    client.logout()
    assert "Messaggio per te solo" not in client.get(PAGE).content.decode()


def test_a_message_kept_in_the_session_of_a_known_visitor_is_shown_on_the_kept_page(
    client, owner, make_submission, settings
):
    """Where messages are kept in the session, a visitor known to the process (no read of their session,
    termite_site/accounts/known_visitors.py) still gets the page with their message, uncached."""
    settings.MESSAGE_STORAGE = "django.contrib.messages.storage.session.SessionStorage"
    make_submission(model_name="Prima", **scored_fields(12))
    client.force_login(owner)
    assert "Prima" in client.get(PAGE).content.decode()  # known, and the page kept for signed-in visitors
    request = RequestFactory().get("/")
    request.session = client.session
    stored = SessionStorage(request)
    stored.add(messages.SUCCESS, "Messaggio nella sessione")
    stored.update(HttpResponse())
    request.session.save()
    assert "Messaggio nella sessione" in client.get(PAGE).content.decode()
    assert "Messaggio nella sessione" not in client.get(PAGE).content.decode()  # shown once


def test_the_json_export_is_kept_gzipped_and_served_plain_to_a_client_without_gzip(client, make_submission):
    make_submission(model_name="Prima", **scored_fields(12))
    for _cold_then_cached in range(2):
        zipped = client.get(JSON, HTTP_ACCEPT_ENCODING="gzip, deflate, br")
        plain = client.get(JSON, HTTP_ACCEPT_ENCODING="identity")
        assert zipped["Content-Encoding"] == "gzip" and "Content-Encoding" not in plain
        assert gzip.decompress(zipped.content) == plain.content
        assert [row["model_name"] for row in plain.json()["rows"]] == ["Prima"]
        assert "Accept-Encoding" in zipped["Vary"] and zipped["Content-Type"] == "application/json"


def test_while_one_request_renders_a_changed_ranking_the_others_get_the_previous_one(demo_version):
    """Stale while revalidating, one renderer per key: after a change, a request that finds another
    building the new value is served the value built before the change, and builds nothing."""
    builds = []

    def build(value: str):
        def make() -> str:
            builds.append(value)
            return value

        return make

    assert ranking.cached("demo-1.0", "probe", build("before")) == "before"
    leaderboard_changed(version=demo_version)
    key = ranking.cache_key("demo-1.0", "probe")
    assert cache.add(f"{key}:building", 1)  # another request is rendering the new value
    assert ranking.cached("demo-1.0", "probe", build("after")) == "before"
    assert builds == ["before"]
    cache.delete(f"{key}:building")  # it is done (here: it died; the next request builds)
    assert ranking.cached("demo-1.0", "probe", build("after")) == "after"
    assert ranking.cached("demo-1.0", "probe", build("again")) == "after"
    assert builds == ["before", "after"]


@pytest.mark.parametrize(
    "being_built",
    [
        "response-en-" + hashlib.sha256(b"").hexdigest()[:32],  # the first page's: its query is empty
        "columns",
        "page-en",  # its rows' HTML and charts
        "rows",  # the ranking itself, the longest part
    ],
)
def test_while_a_change_is_being_rendered_the_page_kept_before_it_is_served_and_then_the_new_one(
    make_submission, demo_version, owner, being_built
):
    """Stale while revalidating for the pages kept per address: after a change, while one request makes
    the page again, or any part it is made of, anonymous and signed-in visitors get the page kept before
    it, with no query but a signed-in visitor's own (they used to make the page again, each, from the
    parts of before); once it is made, the new one."""
    make_submission(model_name="Prima", **scored_fields(12))
    signed_in = Client()
    signed_in.force_login(owner)
    for visitor in (Client(), signed_in):
        assert row_names(visitor.get(PAGE)) == ["Prima"]  # made, and kept at the page's address
    make_submission(model_name="Seconda", **scored_fields(20))
    leaderboard_changed(version=demo_version)
    lock = f"{ranking.cache_key(demo_version.label, being_built)}:building"
    assert cache.add(lock, 1)  # another request is making the new page
    with CaptureQueriesContext(connection) as queries:
        assert row_names(Client().get(PAGE)) == ["Prima"]
    assert len(queries) == 0
    with CaptureQueriesContext(connection) as queries:
        assert row_names(signed_in.get(PAGE)) == ["Prima"]
    assert not any("leaderboard_submission" in q["sql"] for q in queries)
    cache.delete(lock)  # it is done (here: it died; the next request makes it)
    for visitor in (Client(), signed_in):
        assert row_names(visitor.get(PAGE)) == ["Seconda", "Prima"]


def test_with_nothing_built_before_a_request_builds_rather_than_wait(demo_version):
    key = ranking.cache_key("demo-1.0", "probe-new")
    assert cache.add(f"{key}:building", 1)
    assert ranking.cached("demo-1.0", "probe-new", lambda: "built") == "built"
