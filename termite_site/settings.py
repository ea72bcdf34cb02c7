"""Termite Portal settings: everything comes from the environment (see README, "Configuration").

With nothing set, the portal runs embedded: a SQLite file and generated secrets under TERMITE_DATA_DIR,
and scoring jobs run in-process. DATABASE_URL and REDIS_URL switch to PostgreSQL and django-rq workers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import dj_database_url
from cryptography.fernet import Fernet
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from termite_site import upload_caps
from termite_site.env import (
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    random_secret_key,
    secret,
)

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("TERMITE_DATA_DIR", str(BASE_DIR / "var"))).resolve()

DEBUG = env_bool("DEBUG", False)

SECRET_KEY = secret("SECRET_KEY", data_dir=DATA_DIR, generate=random_secret_key, allow_generated=DEBUG)
# The Fernet key that encrypts gold SQL at rest; rotate with `manage.py rotate_gold_key`.
TERMITE_GOLD_KEY = secret(
    "TERMITE_GOLD_KEY",
    data_dir=DATA_DIR,
    generate=lambda: Fernet.generate_key().decode(),
    allow_generated=DEBUG,
)

ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_rq",
    "csp",
    # The API (leaderboard/api.py); installed so that its docs page is served from its static files.
    "ninja",
    "termite_site",
    "termite_site.accounts",
    "evaluation",
    "leaderboard",
]
# A command that only scores a file against the benchmark store runs with the store's apps alone: the
# others serve people, run the queue and keep the leaderboard, and importing them (the admin: every app's
# admin module; django-rq: redis and rq; django-ninja: pydantic; the leaderboard's models) was most of
# `manage.py score`'s start-up (issue 31). A module such a command imports must need no other app.
STORE_ONLY_COMMANDS = ("score",)
STORE_APPS = (
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "termite_site",
    "termite_site.accounts",
    "evaluation",
)
if Path(sys.argv[0]).name == "manage.py" and len(sys.argv) > 1 and sys.argv[1] in STORE_ONLY_COMMANDS:
    INSTALLED_APPS = [app for app in INSTALLED_APPS if app in STORE_APPS]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "termite_site.middleware.PermissionsPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    # Before anything that reads the request into a query (and after the locale, for its message).
    "termite_site.middleware.RejectNulMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "termite_site.accounts.known_visitors.KnownVisitorMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "termite_site.middleware.NoIndexMiddleware",
]

ROOT_URLCONF = "termite_site.urls"
WSGI_APPLICATION = "termite_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
    {
        # Only the templates one render of the ranking repeats per row (leaderboard/jinja_environment.py).
        "NAME": "jinja2",
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "leaderboard.jinja_environment.environment"},
    },
]

DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 60))}
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATA_DIR / "portal.sqlite3",  # type: ignore[typeddict-item]  # Django takes a Path; the stubs say str
            # Scoring writes while pages read, and several workers write at once: WAL lets readers go on
            # beside a writer, and IMMEDIATE transactions take the write lock when they begin, so a writer
            # waits its turn (up to the busy timeout) instead of failing with "database is locked" when it
            # finds it cannot upgrade a read. It also serialises the quota check with the insert it guards.
            "OPTIONS": {
                "timeout": 20,
                "transaction_mode": "IMMEDIATE",
                "init_command": "PRAGMA journal_mode=WAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = env_str("REDIS_URL")
# The longest the job of adding a database may run; past it a worker stops it, and a sweep fails a job
# whose process ended without a word (evaluation/imports.py).
TERMITE_IMPORT_TIMEOUT = env_int("TERMITE_IMPORT_TIMEOUT", 3600)
# Without Redis, no queue is used: jobs run in threads of the web process (termite_site/queue.py).
RQ_QUEUES = {
    "scoring": {
        "URL": REDIS_URL or "redis://127.0.0.1:6379/0",
        "DEFAULT_TIMEOUT": env_int("TERMITE_JOB_TIMEOUT", 900),
        "ASYNC": bool(REDIS_URL),
    },
    # The scoring queue's sibling: protocol runs (leaderboard/protocols/runner.py), which wait on a model
    # endpoint for minutes or hours and must not hold up scoring. A worker listens on both:
    # `manage.py rqworker scoring protocol`.
    "protocol": {
        "URL": REDIS_URL or "redis://127.0.0.1:6379/0",
        "DEFAULT_TIMEOUT": env_int("TERMITE_PROTOCOL_MAX_SECONDS", 6 * 3600) + 600,
        "ASYNC": bool(REDIS_URL),
    },
    # Adding a database to a draft (evaluation/imports.py): building it and its test suite takes minutes, and
    # must hold up neither the web request nor scoring. `manage.py rqworker scoring protocol imports`.
    "imports": {
        "URL": REDIS_URL or "redis://127.0.0.1:6379/0",
        "DEFAULT_TIMEOUT": TERMITE_IMPORT_TIMEOUT,
        "ASYNC": bool(REDIS_URL),
    },
}
RQ = {"COMMIT_MODE": "on_db_commit", "WORKER_CLASS": "leaderboard.worker.ScoringWorker"}
# termite_site/admin.py registers django-rq's dashboard in the admin itself, under its own CSP exception.
RQ_SHOW_ADMIN_LINK = False

# A file cache's LOCATION is a folder, which Django takes as a Path too.
CACHES: dict[str, dict[str, str | Path]]
if REDIS_URL:
    CACHES = {"default": {"BACKEND": "termite_site.redis_cache.ReusingRedisCache", "LOCATION": REDIS_URL}}
else:
    # A file cache is shared by every process on the host, so cached pages hold under several gunicorn
    # workers too. (Rate limits count in the database: termite_site/ratelimit.py says why.)
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": DATA_DIR / "cache",
        }
    }

AUTH_USER_MODEL = "accounts.User"
# Django's ModelBackend, with each signed-in user's row kept between requests while unchanged.
AUTHENTICATION_BACKENDS = ["termite_site.accounts.backends.RememberingModelBackend"]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "accounts:profile"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("it", _("Italian"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = "UTC"
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STORAGES = {
    "default": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": DATA_DIR / "media"},
    },
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
MEDIA_ROOT = DATA_DIR / "media"

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "Termite Portal <noreply@localhost>")
# Where the file back end (django.core.mail.backends.filebased.EmailBackend) writes each message.
EMAIL_FILE_PATH = env_str("EMAIL_FILE_PATH", str(DATA_DIR / "mail"))
# How long the link that confirms an e-mail address works; self sign-up must confirm before uploading.
TERMITE_EMAIL_CONFIRM_DAYS = env_int("TERMITE_EMAIL_CONFIRM_DAYS", 3)

# A session is read from the cache (Redis in production), written through to the database, and stamped:
# a signed-in visitor known to a process costs one cache read, of the stamps of their session and user
# (termite_site/accounts/known_visitors.py; README "Performance").
SESSION_ENGINE = "termite_site.accounts.sessions"

# Production hardening; `manage.py check --deploy` passes with DEBUG off.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0 if DEBUG else 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Content-Security-Policy (django-csp): everything from the site itself, nothing inline, no plugins, no
# framing, forms post only here. Every script and style is a static file (plotly.js too:
# templates/leaderboard/_plotly.html); the pages' data travels in json_script blocks, which are data, not
# scripts. django-rq's dashboard has its own exception (termite_site/rq_dashboard.py).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF],
        "font-src": [SELF],
        "connect-src": [SELF],
        "object-src": [NONE],
        "base-uri": [NONE],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
    }
}

# Rate limits: (attempts, window in seconds).
LOGIN_RATE_LIMIT_PER_IP = (env_int("TERMITE_LOGIN_LIMIT_PER_IP", 20), 300)
LOGIN_RATE_LIMIT_PER_ACCOUNT = (env_int("TERMITE_LOGIN_LIMIT_PER_ACCOUNT", 5), 300)
SIGNUP_RATE_LIMIT_PER_IP = (env_int("TERMITE_SIGNUP_LIMIT_PER_IP", 10), 3600)
# Confirmation e-mails one account may ask for (a new link, or a change of address): each goes to an
# address the account chose, so without a limit the site could be made to mail anyone over and over.
TERMITE_CONFIRM_MAIL_RATE_LIMIT = (env_int("TERMITE_CONFIRM_MAIL_LIMIT_PER_HOUR", 3), 3600)

# Scoring.
# This host's copies of the built databases: the platform keeps them all in the database
# (evaluation.StoredDatabase), and a worker fetches what it lacks into here (evaluation/database_cache.py).
TERMITE_DATABASE_CACHE_DIR = Path(
    env_str("TERMITE_DATABASE_CACHE_DIR", str(DATA_DIR / "databases"))
).resolve()
TERMITE_QUERY_TIMEOUT = env_float("TERMITE_QUERY_TIMEOUT", 2.0)
# Wall-clock seconds all the predictions of one submission may take, from the first query's start to the
# last one's end, whatever happens in between (comparing results, a sandbox child started again): past it,
# every query left is a timeout. What a scoring does before its first query is bounded by the rest of
# TERMITE_SCORING_BOUND_SECONDS: the sandbox starting, copying the databases, transpiling, the gold queries
# of a cold cache.
TERMITE_SUBMISSION_BUDGET = env_float("TERMITE_SUBMISSION_BUDGET", 60.0)
TERMITE_SCORING_BOUND_SECONDS = env_float("TERMITE_SCORING_BOUND_SECONDS", 90.0)
# How long scoring took depends on the hidden data, so participants see how it ended only at
# max(received + TERMITE_RESULT_DELAY_SECONDS, started + TERMITE_SCORING_BOUND_SECONDS): a function of when
# the file came and of the queue, never of how long its queries ran (leaderboard/models.py, release_time).
# 0 shows a result as soon as it is stored (the tests; a portal with nothing to hide).
TERMITE_RESULT_DELAY_SECONDS = env_float("TERMITE_RESULT_DELAY_SECONDS", 120.0)
if TERMITE_SCORING_BOUND_SECONDS < TERMITE_SUBMISSION_BUDGET or (
    0 < TERMITE_RESULT_DELAY_SECONDS < TERMITE_SUBMISSION_BUDGET
):
    raise ImproperlyConfigured(
        "TERMITE_SCORING_BOUND_SECONDS, and TERMITE_RESULT_DELAY_SECONDS unless 0, must be at least"
        " TERMITE_SUBMISSION_BUDGET: a result must not show before its queries could have ended."
    )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
}

# Behind a reverse proxy, how many proxies append to X-Forwarded-For (0: use REMOTE_ADDR). Rate
# limits key on the client address, so trusting a spoofable header would let anyone bypass them.
TERMITE_TRUSTED_PROXIES = env_int("TERMITE_TRUSTED_PROXIES", 0)

# Submissions.
TERMITE_DAILY_QUOTA = env_int("TERMITE_DAILY_QUOTA", 5)
TERMITE_VERSION_QUOTA = env_int("TERMITE_VERSION_QUOTA", 100)
TERMITE_MAX_UPLOAD_BYTES = env_int("TERMITE_MAX_UPLOAD_BYTES", upload_caps.MAX_UPLOAD_BYTES)
TERMITE_MAX_SQL_CHARS = env_int("TERMITE_MAX_SQL_CHARS", upload_caps.MAX_SQL_CHARS)
# What one prediction's result may hold (rows, bytes), and all of a submission's results together: over
# either, that question is resource_limit; each result is compared and dropped as it arrives.
TERMITE_MAX_RESULT_ROWS = env_int("TERMITE_MAX_RESULT_ROWS", 20_000)
TERMITE_MAX_RESULT_BYTES = env_int("TERMITE_MAX_RESULT_BYTES", 8_000_000)
TERMITE_SUBMISSION_RESULT_BYTES = env_int("TERMITE_SUBMISSION_RESULT_BYTES", 256_000_000)
# Public submissions show their breakdowns (leaderboard/feedback.py), so each is a probe everyone sees;
# this bounds how many a user holds per version (withdrawn ones count, as for the quota).
TERMITE_PUBLIC_PER_VERSION = env_int("TERMITE_PUBLIC_PER_VERSION", 3)
# A submission made on behalf of a team counts towards the team's quotas (the defaults above) as well as
# its uploader's: otherwise a team would multiply its budget, and its probes of the hidden data, by
# adding accounts.
TERMITE_TEAM_QUOTAS = env_bool("TERMITE_TEAM_QUOTAS", True)
# Days an invitation link to a team stays usable.
TERMITE_TEAM_INVITATION_DAYS = env_int("TERMITE_TEAM_INVITATION_DAYS", 7)
# Watching for probing (leaderboard/probing.py, the staff page of a version): a resubmission changing at
# most this many predictions of an earlier file of the same account; a file with at least this share of
# trivial predictions; two accounts' files sharing at least this share of their predictions, counting as
# evidence only the predictions written by at most this share of the accounts.
TERMITE_PROBING_MAX_CHANGED = env_int("TERMITE_PROBING_MAX_CHANGED", 5)
TERMITE_PROBING_TRIVIAL_SHARE = env_float("TERMITE_PROBING_TRIVIAL_SHARE", 0.5)
TERMITE_PROBING_SIMILARITY = env_float("TERMITE_PROBING_SIMILARITY", 0.9)
TERMITE_PROBING_COMMON_SHARE = env_float("TERMITE_PROBING_COMMON_SHARE", 0.1)
# Test suites (evaluation/scoring/suites.py): neighbour databases generated per database at import, of which
# at most 8 are kept; the seed makes them reproducible (same archive and seed, same bytes). 0 builds none.
# 60: a neighbour is drawn from a sample of each large table (neighbours.py), and 60 such candidates tell
# apart at least as many near misses as 40 drawn from whole tables did (benchmarks/suite_build.py, README).
TERMITE_SUITE_CANDIDATES = env_int("TERMITE_SUITE_CANDIDATES", 60)
TERMITE_SUITE_SEED = env_str("TERMITE_SUITE_SEED", "termite")
# A scoring job stamps its submission's heartbeat this often; the sweeper re-enqueues a `running`
# submission silent for three beats (its job died), or, whatever its heartbeat, running for longer than
# TERMITE_STUCK_AFTER_SECONDS (a job that beats but never ends); each at most TERMITE_MAX_ATTEMPTS times.
# Every worker sweeps every TERMITE_SWEEP_SECONDS, so a dead job is requeued at most three beats and one
# sweep after it died: 3 x 5 + 15 = 30 s, within the minute a participant may wait for it (README).
TERMITE_HEARTBEAT_SECONDS = env_float("TERMITE_HEARTBEAT_SECONDS", 5.0)
TERMITE_SWEEP_SECONDS = env_float("TERMITE_SWEEP_SECONDS", 15.0)
TERMITE_STUCK_AFTER_SECONDS = env_int("TERMITE_STUCK_AFTER_SECONDS", 1800)
TERMITE_MAX_ATTEMPTS = env_int("TERMITE_MAX_ATTEMPTS", 3)
# /healthz fails when no worker has stamped its heartbeat in RQ's registry for this long (termite_site/health.py).
# An idle RQ worker stamps it every 405 s (its TTL, 420 s, less 15), a busy one every 30 s or so.
TERMITE_HEALTH_WORKER_SILENCE_SECONDS = env_int("TERMITE_HEALTH_WORKER_SILENCE_SECONDS", 450)
TERMITE_UPLOAD_RATE_LIMIT = (env_int("TERMITE_UPLOAD_LIMIT_PER_HOUR", 30), 3600)

# Errata: reports a participant may file per day (form and API together).
TERMITE_ERRATA_RATE_LIMIT = (env_int("TERMITE_ERRATA_LIMIT_PER_DAY", 20), 86400)

# Protocol runs call a model's endpoint that a user gave (termite_site/outbound.py): only https to public
# addresses. On, http and https to loopback addresses are allowed too, for development and the tests.
TERMITE_PROTOCOL_ALLOW_LOOPBACK = env_bool("TERMITE_PROTOCOL_ALLOW_LOOPBACK", False)
# The most requests one run may have in flight at once (a run asks for at most this many).
TERMITE_PROTOCOL_MAX_CONCURRENCY = env_int("TERMITE_PROTOCOL_MAX_CONCURRENCY", 4)
# The largest budget a run may ask for, and the default one: requests, and seconds of running.
TERMITE_PROTOCOL_MAX_REQUESTS = env_int("TERMITE_PROTOCOL_MAX_REQUESTS", 5000)
TERMITE_PROTOCOL_MAX_SECONDS = env_int("TERMITE_PROTOCOL_MAX_SECONDS", 6 * 3600)
# One request: how long to wait for the answer, and how large it may be.
TERMITE_PROTOCOL_TIMEOUT = env_float("TERMITE_PROTOCOL_TIMEOUT", 120.0)
TERMITE_PROTOCOL_MAX_RESPONSE_BYTES = env_int("TERMITE_PROTOCOL_MAX_RESPONSE_BYTES", 1024 * 1024)
# A request that fails for a reason that may pass (429, 5xx, a timeout, a malformed answer) is tried at most
# this many times, waiting BACKOFF * 2^(attempt - 1) seconds (with jitter, and at least a 429's Retry-After)
# between tries, never more than MAX_BACKOFF.
TERMITE_PROTOCOL_ATTEMPTS = env_int("TERMITE_PROTOCOL_ATTEMPTS", 4)
TERMITE_PROTOCOL_BACKOFF_SECONDS = env_float("TERMITE_PROTOCOL_BACKOFF_SECONDS", 2.0)
TERMITE_PROTOCOL_MAX_BACKOFF_SECONDS = env_float("TERMITE_PROTOCOL_MAX_BACKOFF_SECONDS", 60.0)
