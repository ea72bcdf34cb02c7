"""Shared fixtures: people, the services the suite talks to, and a clean cache for every test.

Services are real. A service that is not configured skips the tests that need it; with
TERMITE_REQUIRE_SERVICES=1 (as in CI) a missing or unreachable service fails them instead.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.migrations import migrate_to_latest
from tests.processes import CHROMIUM, CHROMIUM_ARGS, RUNNING, require_process_lane
from tests.services import REQUIRE_SERVICES, reachable, require_service, termite_archive_path

if TYPE_CHECKING:
    from tests.demo_store import StoreRows

# The benchmark store as built once per session: the plain demo, the demo with its test suites, and the
# demo as the practice version `dev.py start` loads.
DEMO_ROWS: pytest.StashKey[StoreRows] = pytest.StashKey()
DEMO_WITH_SUITES_ROWS: pytest.StashKey[StoreRows] = pytest.StashKey()
PRACTICE_DEMO_ROWS: pytest.StashKey[StoreRows] = pytest.StashKey()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not REQUIRE_SERVICES:
        return
    missing = [
        name
        for name, port in (("DATABASE_URL", 5432), ("REDIS_URL", 6379), ("TERMITE_REFERENCE_MYSQL_URL", 3306))
        if not os.environ.get(name) or not reachable(os.environ[name], port)
    ]
    if missing:
        pytest.exit(
            f"TERMITE_REQUIRE_SERVICES=1 but not set or unreachable: {', '.join(missing)}", returncode=1
        )


@pytest.fixture(autouse=True)
def _running(request):
    """Tell the process helpers which test runs, for their check of its lane (tests/processes.py)."""
    token = RUNNING.set(request.node)
    yield
    RUNNING.reset(token)


@pytest.fixture(scope="module")
def browser(request):
    """Headless Chromium (Debian's), for the module's tests; they must be in the process lane."""
    require_process_lane("Chromium", request.node)
    if not Path(CHROMIUM).exists():
        if REQUIRE_SERVICES:
            pytest.fail(f"{CHROMIUM} is missing (apt-get install chromium chromium-driver)")
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop on this thread while it runs; Django's ORM, which the same
    # tests use to arrange and check data, refuses to run beside one unless told it is safe (one thread:
    # it is). Only for as long as Playwright runs, so that no other test runs with the check off.
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(autouse=True)
def _default_language():
    """Each test starts in the default language: a request in Italian leaves this thread speaking it
    (LocaleMiddleware activates a request's language and nothing deactivates it)."""
    yield
    from django.conf import settings

    if settings.configured:
        from django.utils import translation

        translation.deactivate()


@pytest.fixture
def latest_after():
    """The database goes back to the latest migrations, which the tests after a migration's test need."""
    yield
    migrate_to_latest()


@pytest.fixture(autouse=True)
def _clean_cache():
    from django.conf import settings

    if not settings.configured:  # plain-Python tests run without Django too (-p no:django)
        yield
        return
    from django.core.cache import cache

    from leaderboard import ranking_views
    from termite_site import cached_page
    from termite_site.accounts import backends

    def clear() -> None:
        cache.clear()
        # What a process keeps besides the cache: a row's HTML, a visitor's nav, a signed-in user's row.
        ranking_views._ROWS_RENDERED.clear()
        cached_page._NAVS.clear()
        backends._ROWS.clear()

    clear()
    yield
    clear()


@pytest.fixture
def redis_url() -> str:
    return require_service("REDIS_URL", 6379)


@pytest.fixture
def password() -> str:
    return "a-long-test-passphrase-42"


@pytest.fixture
def owner(django_user_model, password):
    return django_user_model.objects.create_user(
        username="ada", email="ada@example.org", password=password, affiliation="Università di Torino"
    )


@pytest.fixture
def other_user(django_user_model, password):
    return django_user_model.objects.create_user(
        username="bruno", email="bruno@example.org", password=password
    )


@pytest.fixture
def staff(django_user_model, password):
    return django_user_model.objects.create_user(
        username="carla", email="carla@example.org", password=password, is_staff=True
    )


@pytest.fixture(scope="session")
def termite_archive():
    """The real Termite archive beside the checkout; its tests skip cleanly where it is absent."""
    path = termite_archive_path()
    if not path.is_file():
        pytest.skip(f"the Termite archive is not at {path}")
    return path


@pytest.fixture
def reference_url() -> str:
    return require_service("TERMITE_REFERENCE_MYSQL_URL", 3306)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker, request):
    """The test database, migrated, with the demo benchmark in it: built once per session (per xdist
    worker) and committed, so that every test finds it and rolls back what it did (tests/demo_store.py).

    The tests' demo is a sealed version whose participants see the schema only: the portal's real case,
    whose rule (leaderboard/feedback.py) most tests check. `practice_demo` gives the demo as a new portal
    loads it, a practice version."""
    from tests.demo_store import StoreRows, sealed_demo_load

    with django_db_blocker.unblock():
        sealed_demo_load()
        request.config.stash[DEMO_ROWS] = StoreRows.take()


@pytest.fixture(autouse=True)
def _demo_in_the_store(request):
    """Every test that reads the database finds the demo. A test that commits (`transactional_db`) ends with
    every table emptied, so the next one gets the demo back: from the rows kept in memory, not the importer.
    (pytest-django runs those tests last, so this is rare.)"""
    if _reads_the_database(request):
        from evaluation.models import BenchmarkVersion
        from evaluation.services import DEMO_LABEL

        # An autouse fixture comes before `db`: the first test of a run to read the database (a module
        # run alone) would otherwise ask before the test database exists.
        request.getfixturevalue("django_db_setup")
        with request.getfixturevalue("django_db_blocker").unblock():
            if not BenchmarkVersion.objects.filter(label=DEMO_LABEL).exists():
                request.config.stash[DEMO_ROWS].restore()
    yield


def _reads_the_database(request) -> bool:
    if not request.config.pluginmanager.has_plugin("django"):
        return False
    database_fixtures = {"db", "transactional_db", "live_server", "django_db_reset_sequences"}
    return request.node.get_closest_marker("django_db") is not None or bool(
        database_fixtures & set(request.fixturenames)
    )


@pytest.fixture
def empty_store(db):
    """No benchmark at all, as on a portal where nothing was imported yet: for the few tests that need it."""
    from tests.demo_store import store_empty

    store_empty()


@pytest.fixture
def demo_version(db):
    """The project's own demo benchmark, loaded through the same path as an admin's upload (once per session)."""
    from evaluation.models import BenchmarkVersion
    from evaluation.services import DEMO_LABEL

    return BenchmarkVersion.objects.get(label=DEMO_LABEL)


@pytest.fixture
def demo_with_suites(db, settings, request):
    """The demo benchmark with its test suites, as `dev.py start` loads it (other tests skip suites). Built
    in the first test that asks, then written back from the rows kept in memory, like the plain demo."""
    from tests.demo_store import sealed_demo_load, store_built_once

    settings.TERMITE_SUITE_CANDIDATES = 12
    return store_built_once(request.config.stash, DEMO_WITH_SUITES_ROWS, sealed_demo_load)


@pytest.fixture
def practice_demo(db, request):
    """The demo as `dev.py start` loads it: a practice version, whose participants see everything, alone in
    the store (it may share nothing with a sealed version). Built in the first test that asks, then
    written back from the rows kept in memory."""
    from evaluation.services import demo_benchmark_load
    from tests.demo_store import store_built_once

    return store_built_once(request.config.stash, PRACTICE_DEMO_ROWS, demo_benchmark_load)


@pytest.fixture
def in_process(settings, monkeypatch):
    """Score in this process, as the embedded default does, but in the test's own thread, at once: the
    default's thread has a database connection of its own, which would not see the rows of a test that
    are never committed. tests/leaderboard/test_embedded_scoring.py tests the thread itself."""
    from django.utils.module_loading import import_string

    from leaderboard import queue

    settings.REDIS_URL = ""
    monkeypatch.setattr(queue, "score_in_thread", lambda job, *args, name: import_string(job)(*args))


@pytest.fixture
def imports_in_process(settings, monkeypatch):
    """Run the job of adding a database in this process, in the test's own thread, once the request's
    transaction commits (wrap the request in `django_capture_on_commit_callbacks(execute=True)`): the
    embedded mode's thread would not see the test's uncommitted rows."""
    from django.utils.module_loading import import_string

    from evaluation import imports

    settings.REDIS_URL = ""
    monkeypatch.setattr(imports, "start_thread", lambda job, *args, **kwargs: import_string(job)(*args))


@pytest.fixture
def gold():
    from tests.demo import demo_gold

    return demo_gold()


@pytest.fixture
def make_submission(demo_version, owner):
    """A stored submission of the owner's on the demo, straight in the table (tests/factories.py): for tests
    about what happens after an upload."""
    from tests.factories import submission_make

    def make(**fields):
        return submission_make(**{"user": owner, "version": demo_version, **fields})

    return make


@pytest.fixture
def make_team(db, owner):
    """A team made as on the site: owned by `by` (the owner unless told), with `members` in it too."""
    from tests.factories import team_make

    def make(name: str = "Gruppo Torino", *, by=None, members=()):
        return team_make(owner=by or owner, name=name, members=tuple(members))

    return make


@pytest.fixture
def real_services(transactional_db, settings):
    """PostgreSQL and Redis shared with real worker and server processes; an empty scoring queue."""
    from tests.processes import require_postgresql

    require_service("DATABASE_URL", 5432)
    settings.REDIS_URL = require_service("REDIS_URL", 6379)
    require_postgresql()
    from leaderboard.queue import scoring_queue

    scoring_queue().empty()
    return settings
