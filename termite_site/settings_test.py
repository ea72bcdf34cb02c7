"""Settings for the test suite: the real settings, with fixed test secrets and fast hashing.

PostgreSQL and Redis are used when DATABASE_URL / REDIS_URL are set, exactly as in production.
"""

from __future__ import annotations

import os
import tempfile
from urllib.parse import urlsplit, urlunsplit

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz")
# A fixed, test-only Fernet key: production keys come from the environment.
os.environ.setdefault("TERMITE_GOLD_KEY", "q1v4JQn3bX9b0vJ6wq2m3Zs0xWlC1yH8d7m5P2aTQ0U=")
os.environ.setdefault("TERMITE_DATA_DIR", tempfile.mkdtemp(prefix="termite-test-"))
# Results show as soon as they are scored; tests/leaderboard/test_feedback_release.py sets the delay.
os.environ.setdefault("TERMITE_RESULT_DELAY_SECONDS", "0")
# Imports build no test suites (each costs a second or so, and hundreds of tests load the demo): the tests of
# suites and TS-EA ask for them (tests/evaluation/test_suites.py, the `demo_with_suites` fixture).
os.environ.setdefault("TERMITE_SUITE_CANDIDATES", "0")


def _redis_database_of_worker(url: str, worker: str) -> str:
    """The Redis URL of pytest-xdist worker `worker` ("gw0", "gw1", ...): the URL's database number plus
    the worker's. Each worker has its own PostgreSQL test database (pytest-django's suffix) and, through
    this, its own Redis database, so that no worker's flush or queue reaches another's."""
    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0) + int(worker.removeprefix("gw"))
    return urlunsplit(parts._replace(path=f"/{database}"))


_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if _WORKER:
    # The workers inherit the data folder pytest's own process chose: each keeps its database copies in
    # a folder of its own, since a test may move a copy aside (tests/demo.py `database_lost`).
    os.environ["TERMITE_DATA_DIR"] = os.path.join(os.environ["TERMITE_DATA_DIR"], _WORKER)
    os.makedirs(os.environ["TERMITE_DATA_DIR"], exist_ok=True)
    if os.environ.get("REDIS_URL"):
        os.environ["REDIS_URL"] = _redis_database_of_worker(os.environ["REDIS_URL"], _WORKER)

# The settings read the environment prepared above.
from termite_site.settings import *  # noqa: E402, F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Rate-limit counters and cached pages must not leak from one test into the next; the autouse
# fixture in tests/conftest.py clears this cache. A portal a test starts (gunicorn and its workers,
# tests/processes.py) keeps the real settings' cache instead, shared by its processes as in production;
# the tests that use it empty it before each test.
if os.environ.get("TERMITE_TEST_PORTAL") != "1":
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
# The embedded mode's test database is a file, as the mode's own is, rather than Django's shared in-memory
# SQLite: there, a write from one connection while another writes fails at once ("database table is
# locked") instead of waiting its turn, and the tests of attempts arriving together write from threads.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": DATA_DIR / "test.sqlite3"}  # noqa: F405
SECURE_SSL_REDIRECT = False
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"}}  # noqa: F405
# Tests never send real mail: it stays in memory, or, where a browser test tells its server to (see
# tests/e2e/conftest.py), goes to files in EMAIL_FILE_PATH for the test to open the links in it.
_FILE_MAIL = "django.core.mail.backends.filebased.EmailBackend"
EMAIL_BACKEND = (
    _FILE_MAIL
    if os.environ.get("EMAIL_BACKEND") == _FILE_MAIL
    else "django.core.mail.backends.locmem.EmailBackend"
)
# Tests render pages without running collectstatic; whitenoise warns about a missing folder otherwise.
WHITENOISE_USE_FINDERS = True
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
# The browser tests talk plain HTTP to 127.0.0.1; secure-only cookies would never be sent there.
SESSION_COOKIE_SECURE = False
CSRF_COOKIE_SECURE = False
