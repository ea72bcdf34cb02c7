"""Crawl the whole site as every kind of visitor: no gold anywhere, and private submissions stay private.

Every page reachable by links from the home page, plus every URL pattern filled with real ids (the site map,
tests/site_map.py), is fetched as an anonymous visitor, a participant, another participant and a staff
member: every seed, and up to three pages of each kind that links reach (one URL pattern, with or without a
query string). No response body or header may hold a gold query or a gold result value that appears nowhere
else, a private submission may show only to its owner and to staff, and so may the description of an
erratum, which may quote the data.
The one exception for staff: a question's errata page, where staff judge the reports against the gold.
"""

from __future__ import annotations

import html
import re
import sqlite3
from collections import Counter, deque
from urllib.parse import urljoin, urlparse

import pytest
from django.http import HttpResponse
from django.test import Client
from django.urls import Resolver404, resolve

from evaluation.errata import erratum_accept, erratum_decline, erratum_report
from evaluation.models import DatabaseImport, Question
from evaluation.scoring.functions import install_functions
from leaderboard.models import RunExchange
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create
from tests.evaluation.gold_leaks import gold_texts
from tests.factories import run_make
from tests.site_map import site_paths

pytestmark = pytest.mark.django_db

PRIVATE_MARK = "ModelloPrivatoZ9"
ERRATUM_MARK = "SegnalazionePrivataW5"
RUN_MARK = "SELECT 'TrascrizionePrivataK7'"
# The staff page of a question's errata shows its gold, for staff to judge the reports.
STAFF_GOLD_PAGE = re.compile(r"/staff/questions/\d+/errata/")
MAX_PAGES = 400
PAGES_PER_KIND = 3
# /healthz answers 503 where Redis is set and no worker runs, as here: a report on the services, not a page
# (tests/termite_site/test_healthz.py).
SKIPPED = ("/accounts/logout/", "/static/", "/admin/rq/", "/i18n/", "/healthz")
PROSE_PAGES = ("/", "/about/", "/metrics/", "/changelog/")


def gold_only_values(version) -> set[str]:
    """Gold result values that appear in no question and no schema: only a leak could show them."""
    shown = " ".join(version.questions.values_list("text", flat=True))
    shown += " ".join(db.schema_sql + db.sqlite_schema for db in version.databases.all())
    values = set()
    for question in Question.objects.filter(version=version).select_related("database"):
        with sqlite3.connect(f"file:{question.database.sqlite_path}?mode=ro", uri=True) as db:
            install_functions(db)  # the collations of the copies' text columns
            for row in db.execute(question.decrypt_gold_sqlite()).fetchall():
                values.update(v for v in row if isinstance(v, str) and len(v) >= 6 and v not in shown)
    return values


def page_kind(path: str) -> tuple[str, bool]:
    """A page's URL pattern, and whether a query string picks its rows: the pages of one kind render one
    template from other rows (a question's admin page, a sort order or a filter of a list)."""
    bare, _, query = path.partition("?")
    try:
        route = resolve(bare).route
    except Resolver404:
        route = bare
    return route, bool(query)


def crawl(client: Client, seeds: list[str]) -> dict[str, object]:
    """Every seed, and the pages their links reach, at most PAGES_PER_KIND of each kind (without that, the
    admin's sort and filter links and the pages of every question and submission fill MAX_PAGES first)."""
    pages: dict[str, object] = {}
    kinds: Counter[tuple[str, bool]] = Counter()
    queue = deque(["/", *seeds])
    while queue:
        path = queue.popleft()
        if path in pages or path.startswith(SKIPPED):
            continue
        kind = page_kind(path)
        if kinds[kind] >= PAGES_PER_KIND and path not in seeds:
            continue
        assert len(pages) < MAX_PAGES, f"more than {MAX_PAGES} pages to visit: the crawl would not end"
        kinds[kind] += 1
        response = client.get(path)
        if response.streaming:  # a download: read once, so that it can be checked like any page
            body = b"".join(response.streaming_content)
            response = HttpResponse(body, status=response.status_code, headers=dict(response.items()))
        pages[path] = response
        if "html" not in response.get("Content-Type", ""):
            continue
        for href in re.findall(r'href="([^"#]+)', response.content.decode(errors="replace")):
            target = urlparse(urljoin(path, html.unescape(href)))
            if not target.netloc and target.path.startswith("/"):
                queue.append(target.path + (f"?{target.query}" if target.query else ""))
    return pages


def hidden_values(version) -> set[str]:
    """Text values of every table of every built copy that no question or schema shows (the test reads
    the copies directly, as only the scorer may)."""
    shown = " ".join(version.questions.values_list("text", flat=True))
    shown += " ".join(db.schema_sql + db.sqlite_schema for db in version.databases.all())
    values = set()
    for database in version.databases.all():
        with sqlite3.connect(f"file:{database.sqlite_path}?mode=ro", uri=True) as db:
            tables = [row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            for table in tables:
                for row in db.execute(f'SELECT * FROM "{table}"'):
                    values.update(v for v in row if isinstance(v, str) and len(v) >= 6 and v not in shown)
    return values


def shows_any(text: str, values: set[str]) -> bool:
    """Whether `text` shows one of the hidden `values`. A value of digits only (a code: '000320') counts
    only as a number of its own, not as a run of digits inside another (a time's microseconds, an id)."""
    numbers = set(re.findall(r"\d+", text))  # every run of digits, whole
    return any(value in numbers if value.isdigit() else value in text for value in values)


def data_reading_predictions(version) -> dict[str, str]:
    """One prediction per question that makes SQLite quote a whole text column in its error message,
    and one that turns a fact about the data into a runtime error or not: what a prober would upload."""
    columns = []
    for database in version.databases.all():
        with sqlite3.connect(f"file:{database.sqlite_path}?mode=ro", uri=True) as db:
            for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
                for column in db.execute(f'PRAGMA table_info("{table}")'):
                    if "CHAR" in column[2].upper() or "TEXT" in column[2].upper():
                        columns.append((table, column[1]))
    predictions = {}
    for n, question_id in enumerate(sorted(version.questions.values_list("public_id", flat=True))):
        table, column = columns[n % len(columns)]
        reading = f'(SELECT group_concat("{column}", \',\') FROM "{table}")'
        predictions[question_id] = (
            f"SELECT json_extract('{{}}', 'x' || {reading})"
            if n % 2 == 0
            else f"SELECT CASE WHEN {reading} LIKE '%a%' THEN json_extract('{{}}', 'x') ELSE 1 END"
        )
    return predictions


@pytest.fixture
def site(demo_version, owner, other_user, staff, make_submission, make_team, gold):
    # A team of the owner's, the other user in it too: a teammate does not see a private submission.
    team = make_team("Gruppo del crawler", members=[other_user])
    mine_private = make_submission(
        model_name=PRIVATE_MARK, is_public=False, team=team, predictions={q: "SELECT 1" for q in gold}
    )
    mine_public = make_submission(
        model_name="Modello pubblico", is_public=True, team=team, predictions={q: "SELECT 1" for q in gold}
    )
    theirs = make_submission(user=other_user, model_name="Altro modello", is_public=True, predictions={})
    probing = data_reading_predictions(demo_version)
    probes = [
        make_submission(model_name=f"Sonda {dialect}", is_public=public, dialect=dialect, predictions=probing)
        for dialect in ("sqlite", "mysql")
        for public in (False, True)
    ]
    for submission in (mine_private, mine_public, theirs, *probes):
        submission_score(submission_id=submission.pk)
    prose = " ".join(Client().get(page).content.decode() for page in PROSE_PAGES)
    token, _raw = api_token_create(user=owner, name="crawl")
    question = demo_version.questions.first()
    report = demo_version.reports.first()
    # The page of a database being added: a job that ended with its report.
    job = DatabaseImport.objects.create(
        version=demo_version, slug="biblioteca", state=DatabaseImport.State.DONE, percent=100, report=report
    )
    erratum_report(reporter=owner, question=question, description=f"{ERRATUM_MARK}: open")
    declined = erratum_report(reporter=owner, question=question, description=f"{ERRATUM_MARK}: declined")
    erratum_decline(erratum=declined, by=staff, staff_reason="La domanda è corretta.")
    accepted = erratum_report(reporter=owner, question=question, description=f"{ERRATUM_MARK}: accepted")
    erratum_accept(erratum=accepted, by=staff, public_reason="Ambigua.")
    # A protocol run of the owner's, with its transcript: only the owner and staff may reach it.
    run = run_make(user=owner, version=demo_version)
    RunExchange.objects.create(
        run=run, database="biblioteca", question_id=question.public_id, kind="question", attempt=1,
        request=[{"role": "user", "content": question.text}], answer=f"```sql\n{RUN_MARK}\n```",
        sql=RUN_MARK, ok=True,
    )  # fmt: skip
    ids = {
        "label": demo_version.label,
        "slug": "biblioteca",
        "pk": str(mine_private.pk),
        "token_id": str(token.pk),
        "uidb64": "MQ",
        "token": "set-password",
    }
    seeds = [
        *site_paths(ids),
        *(probe.get_absolute_url() for probe in probes),
        f"/staff/questions/{question.pk}/exclusion/",
        f"/staff/questions/{question.pk}/errata/",
        f"/errata/new/?version={demo_version.label}&question_id={question.public_id}",
        f"/staff/reports/{report.pk}/",
        f"/staff/imports/{job.pk}/",
        "/admin/",
        "/admin/evaluation/question/",
        f"/admin/evaluation/question/{question.pk}/change/",
        "/admin/leaderboard/submission/",
        f"/admin/leaderboard/submission/{mine_private.pk}/change/",
        f"/teams/{team.slug}/",
        f"/accounts/teams/{team.slug}/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/transcript.jsonl",
        "/admin/leaderboard/protocolrun/",
        f"/admin/leaderboard/protocolrun/{run.pk}/change/",
    ]
    return {
        "private": mine_private,
        "gold_page": f"/staff/questions/{question.pk}/errata/",
        "seeds": seeds,
        "golds": gold_texts(),
        "values": gold_only_values(demo_version),
        # Less any that the site's own prose happens to use (first names in the citation, say).
        "hidden": {value for value in hidden_values(demo_version) if value not in prose},
        "probes": probes,
        "probe_pages": {probe.get_absolute_url() for probe in probes},
        "transcript": f"/runs/{run.pk}/transcript.jsonl",
    }


@pytest.fixture
def unconfirmed(django_user_model, password):
    """An account that signed up and has not confirmed its address: it may not see the questions yet."""
    return django_user_model.objects.create_user(
        username="dora", email="dora@example.org", password=password, email_confirmed_at=None
    )


@pytest.mark.parametrize("who", ["anonymous", "owner", "other_user", "unconfirmed", "staff"])
def test_no_page_shows_gold_and_private_work_stays_private(request, who, site, demo_version):
    client = Client()
    if who != "anonymous":
        user = request.getfixturevalue(who)
        if who == "staff":
            user.is_superuser = True
            user.save()
        client.force_login(user)
    pages = crawl(client, site["seeds"])
    assert len(pages) > 20, sorted(pages)
    leaks, private_seen, errors, data_seen, errata_seen, runs_seen, questions_seen = (
        [],
        [],
        [],
        [],
        [],
        [],
        [],
    )
    questions = list(demo_version.questions.values_list("text", flat=True))
    for path, response in pages.items():
        text = " ".join(response.content.decode(errors="replace").split()) + " " + str(dict(response.items()))
        gold_page = who == "staff" and STAFF_GOLD_PAGE.fullmatch(path) is not None
        if not gold_page and any(gold in text for gold in site["golds"]):
            leaks.append(f"{path}: gold query")
        # Staff see the probes' error texts, which quote the data, gold results included.
        probe_page = who == "staff" and path in site["probe_pages"]
        if not (probe_page or gold_page) and any(value in text for value in site["values"]):
            leaks.append(f"{path}: a gold result value")
        if PRIVATE_MARK in text:
            private_seen.append(path)
        if ERRATUM_MARK in text:
            errata_seen.append(path)
        if RUN_MARK in text:
            runs_seen.append(path)
        if any(" ".join(html.escape(question).split()) in text for question in questions):
            questions_seen.append(path)
        if response.status_code >= 500:
            errors.append(path)
        if shows_any(text, site["hidden"]):
            data_seen.append(path)
    assert not errors, errors
    # The failure lists pages, never the gold or the data itself.
    assert not leaks, leaks
    if who == "staff":  # the probes did read the data: staff see their error texts
        assert site["probes"][0].get_absolute_url() in data_seen
    else:
        assert data_seen == []
    if who in ("anonymous", "other_user", "unconfirmed"):
        assert private_seen == []
        assert errata_seen == []
        assert runs_seen == []  # a run's transcript is its owner's and staff's
    else:
        assert site["private"].get_absolute_url() in private_seen
        assert site["transcript"] in runs_seen
    if who in ("anonymous", "unconfirmed"):  # the questions wait for a confirmed address
        assert questions_seen == []
    else:
        assert f"/benchmark/{demo_version.label}/biblioteca/" in questions_seen
    if who == "owner":
        assert errata_seen == ["/errata/mine/"]
    if who == "staff":
        assert site["gold_page"] in pages and site["gold_page"] in errata_seen
    assert "/errata/" in pages and pages["/errata/"].status_code == 200


@pytest.mark.parametrize("who", ["owner", "other_user"])
def test_no_api_answer_shows_a_value_of_the_hidden_databases(request, who, site):
    user = request.getfixturevalue(who)
    _token, raw = api_token_create(user=user, name="probe")
    client = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    answers = [client.get("/api/v1/submissions").content.decode()]
    answers += [client.get(f"/api/v1/submissions/{probe.pk}").content.decode() for probe in site["probes"]]
    answers.append(client.get("/api/v1/errata").content.decode())
    answers.append(client.get("/api/v1/leaderboard").content.decode())
    assert [n for n, text in enumerate(answers) if shows_any(text, site["hidden"])] == []
    if who == "owner":
        assert all('"checks"' in text for text in answers[1:-2])
    assert (ERRATUM_MARK in answers[-2]) is (who == "owner")
