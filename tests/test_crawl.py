"""Crawl the whole site as every kind of visitor: no gold anywhere, and private submissions stay private.

Every page reachable by links from the home page, plus every URL pattern filled with real ids, is fetched
as an anonymous visitor, a participant, another participant and a staff member. No response body or
header may hold a gold query or a gold result value that appears nowhere else, and a private submission
may show only to its owner and to staff.
"""

from __future__ import annotations

import html
import re
import sqlite3
from collections import deque
from urllib.parse import urljoin, urlparse

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from evaluation.models import Question
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create
from tests.evaluation.gold_leaks import gold_texts

pytestmark = pytest.mark.django_db

PRIVATE_MARK = "ModelloPrivatoZ9"
MAX_PAGES = 400
SKIPPED = ("/accounts/logout/", "/static/", "/admin/rq/", "/i18n/")


def gold_only_values(version) -> set[str]:
    """Gold result values that appear in no question and no schema: only a leak could show them."""
    shown = " ".join(version.questions.values_list("text", flat=True))
    shown += " ".join(db.schema_sql + db.sqlite_schema for db in version.databases.all())
    values = set()
    for question in Question.objects.filter(version=version).select_related("database"):
        with sqlite3.connect(f"file:{question.database.sqlite_path}?mode=ro", uri=True) as db:
            for row in db.execute(question.decrypt_gold_sqlite()).fetchall():
                values.update(v for v in row if isinstance(v, str) and len(v) >= 6 and v not in shown)
    return values


def filled_patterns(ids: dict[str, str]) -> list[str]:
    """Every URL pattern of the site with real ids in place of its parameters."""
    urls = []

    def walk(patterns, prefix: str) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route)
            elif isinstance(pattern, URLPattern):
                names = re.findall(r"<(?:\w+:)?(\w+)>", route)
                if all(name in ids for name in names) and not route.startswith(("^", "admin/")):
                    urls.append("/" + re.sub(r"<(?:\w+:)?(\w+)>", lambda m: ids[m.group(1)], route))

    walk(get_resolver().url_patterns, "")
    return sorted(set(urls))


def crawl(client: Client, seeds: list[str]) -> dict[str, object]:
    pages: dict[str, object] = {}
    queue = deque(["/", *seeds])
    while queue and len(pages) < MAX_PAGES:
        path = queue.popleft()
        if path in pages or path.startswith(SKIPPED):
            continue
        response = client.get(path)
        pages[path] = response
        if "html" not in response.get("Content-Type", ""):
            continue
        for href in re.findall(r'href="([^"#]+)', response.content.decode(errors="replace")):
            target = urlparse(urljoin(path, html.unescape(href)))
            if not target.netloc and target.path.startswith("/"):
                queue.append(target.path + (f"?{target.query}" if target.query else ""))
    return pages


@pytest.fixture
def site(demo_version, owner, other_user, staff, make_submission, gold):
    mine_private = make_submission(
        model_name=PRIVATE_MARK, is_public=False, predictions={q: "SELECT 1" for q in gold}
    )
    mine_public = make_submission(
        model_name="Modello pubblico", is_public=True, predictions={q: "SELECT 1" for q in gold}
    )
    theirs = make_submission(user=other_user, model_name="Altro modello", is_public=True, predictions={})
    for submission in (mine_private, mine_public, theirs):
        submission_score(submission_id=submission.pk)
    token, _raw = api_token_create(user=owner, name="crawl")
    question = demo_version.questions.first()
    report = demo_version.reports.first()
    ids = {
        "label": demo_version.label,
        "slug": "biblioteca",
        "pk": str(mine_private.pk),
        "token_id": str(token.pk),
        "uidb64": "MQ",
        "token": "set-password",
    }
    seeds = [
        *filled_patterns(ids),
        f"/staff/questions/{question.pk}/exclusion/",
        f"/staff/reports/{report.pk}/",
        "/admin/",
        "/admin/evaluation/question/",
        f"/admin/evaluation/question/{question.pk}/change/",
        "/admin/leaderboard/submission/",
        f"/admin/leaderboard/submission/{mine_private.pk}/change/",
    ]
    return {
        "private": mine_private,
        "seeds": seeds,
        "golds": gold_texts(),
        "values": gold_only_values(demo_version),
    }


@pytest.mark.parametrize("who", ["anonymous", "owner", "other_user", "staff"])
def test_no_page_shows_gold_and_private_work_stays_private(request, who, site):
    client = Client()
    if who != "anonymous":
        user = request.getfixturevalue(who)
        if who == "staff":
            user.is_superuser = True
            user.save()
        client.force_login(user)
    pages = crawl(client, site["seeds"])
    assert len(pages) > 20, sorted(pages)
    leaks, private_seen, errors = [], [], []
    for path, response in pages.items():
        text = " ".join(response.content.decode(errors="replace").split()) + " " + str(dict(response.items()))
        if any(gold in text for gold in site["golds"]):
            leaks.append(f"{path}: gold query")
        if any(value in text for value in site["values"]):
            leaks.append(f"{path}: a gold result value")
        if PRIVATE_MARK in text:
            private_seen.append(path)
        if response.status_code >= 500:
            errors.append(path)
    assert not errors, errors
    # The failure lists pages, never the gold itself.
    assert not leaks, leaks
    if who in ("anonymous", "other_user"):
        assert private_seen == []
    else:
        assert site["private"].get_absolute_url() in private_seen
