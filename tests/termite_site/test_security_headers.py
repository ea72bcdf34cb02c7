"""The Content-Security-Policy and the Permissions-Policy: on every answer of the site (every URL pattern,
the site map of tests/site_map.py, with rows from the factories), to a visitor and to staff; and the
one exception, django-rq's dashboard. The browser's side (no violation on any page, the scripts still working) is in
tests/e2e/test_content_security_policy.py."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client

from tests.factories import run_make
from tests.leaderboard.scored import scored_fields
from tests.site_map import site_paths

pytestmark = pytest.mark.django_db

SITE_POLICY = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    "img-src": ["'self'"],
    "font-src": ["'self'"],
    "connect-src": ["'self'"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}
# django-rq's pages and the API's docs, each with its own exception (the tests after the next).
DASHBOARD = ("/admin/rq/", "/admin/django_rq/")
API_DOCS = "/api/v1/docs"
DENIED = {"camera", "microphone", "geolocation", "payment", "usb"}


def directives(header: str) -> dict[str, list[str]]:
    return {name: sources for name, *sources in (part.split() for part in header.split(";"))}


def denied_features(header: str) -> set[str]:
    return {feature for feature, allowed in re.findall(r"([\w-]+)=\(([^)]*)\)", header) if allowed == ""}


@pytest.fixture
def seeds(demo_version, owner, make_submission, make_team) -> list[str]:
    team = make_team("Gruppo delle intestazioni")
    submission = make_submission(model_name="Modello", team=team, **scored_fields(15))
    run = run_make(user=owner, version=demo_version)
    ids = {"label": demo_version.label, "slug": "biblioteca", "pk": str(submission.pk), "uidb64": "MQ"}
    ids |= {"token_id": "1", "token": "set-password"}
    return [
        *site_paths(ids),
        f"/runs/{run.pk}/",
        f"/teams/{team.slug}/",
        f"/accounts/teams/{team.slug}/",
        "/admin/",
        "/admin/leaderboard/submission/",
        f"/admin/leaderboard/submission/{submission.pk}/change/",
        "/not-a-page/",
    ]


@pytest.mark.parametrize("who", ["anonymous", "staff"])
def test_every_answer_carries_the_strict_policy_and_denies_the_browsers_devices(request, who, seeds):
    client = Client()
    if who == "staff":
        staff = request.getfixturevalue("staff")
        staff.is_superuser = True
        staff.save()
        client.force_login(staff)
    # The leaderboard twice: an anonymous visitor's second answer is the cached page, served whole.
    pages = {path: client.get(path) for path in [*seeds, "/leaderboard/"]}
    assert len(pages) > 40, sorted(pages)
    without_policy = [path for path, response in pages.items() if "Content-Security-Policy" not in response]
    assert without_policy == []
    site_pages = {path: r for path, r in pages.items() if not path.startswith((*DASHBOARD, API_DOCS))}
    other_policy = [
        p for p, r in site_pages.items() if directives(r["Content-Security-Policy"]) != SITE_POLICY
    ]
    assert other_policy == []
    devices_allowed = [
        p for p, r in pages.items() if not denied_features(r.get("Permissions-Policy", "")) >= DENIED
    ]
    assert devices_allowed == []


def test_django_rqs_dashboard_alone_allows_inline_styles_and_handlers_but_no_inline_script(client, staff):
    staff.is_superuser = True
    staff.save()
    client.force_login(staff)
    for path in ("/admin/rq/", "/admin/django_rq/dashboard/"):
        response = client.get(path)
        assert response.status_code == 200, path
        policy = directives(response["Content-Security-Policy"])
        assert policy["style-src"] == ["'self'", "'unsafe-inline'"]
        assert policy["script-src-attr"] == ["'unsafe-inline'"]
        assert policy["script-src"] == ["'self'"]
        assert denied_features(response["Permissions-Policy"]) >= DENIED


def test_the_api_docs_alone_allow_data_images_and_nothing_else_of_the_strict_policy(client):
    """Swagger UI's stylesheet draws its icons as data: images; its scripts are static files, as ours."""
    response = client.get(API_DOCS)
    assert response.status_code == 200
    assert directives(response["Content-Security-Policy"]) == {**SITE_POLICY, "img-src": ["'self'", "data:"]}


def test_plotly_still_looks_for_the_elements_the_chart_pages_give_it():
    """plotly.js writes its styles into the elements of templates/leaderboard/_plotly.html only while it
    looks them up by these ids; an upgrade that changes them would bring inline styles back."""
    plotly = (settings.BASE_DIR / "static/vendor/plotly-basic.min.js").read_text(encoding="utf-8")
    ids = re.findall(r'id="([^"]+)"', render_to_string("leaderboard/_plotly.html"))
    assert ids[0] == "plotly.js-style-global" and '"plotly.js-style-"+' in plotly
    assert all(f'document.getElementById("{element_id}")' in plotly for element_id in ids[1:])
    assert len(ids) == 2
