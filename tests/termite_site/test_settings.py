"""The settings module reads its configuration from the environment (run in a fresh interpreter each)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "prod-" + "k3y" * 20,
    "TERMITE_GOLD_KEY": "q1v4JQn3bX9b0vJ6wq2m3Zs0xWlC1yH8d7m5P2aTQ0U=",
    "ALLOWED_HOSTS": "termite.example.org",
}
# Each probe reads the settings in a Python process of its own, with the environment it is given.
pytestmark = pytest.mark.processes

PROBE = """
import json
from termite_site import settings as s
print(json.dumps({
    "engine": s.DATABASES["default"]["ENGINE"],
    "name": str(s.DATABASES["default"]["NAME"]),
    "queue": s.RQ_QUEUES["scoring"],
    "cache": s.CACHES["default"]["BACKEND"],
    "debug": s.DEBUG,
    "hosts": s.ALLOWED_HOSTS,
    "allow_loopback": s.TERMITE_PROTOCOL_ALLOW_LOOPBACK,
}))
"""


def _clean_env(tmp_path: Path, **env: str) -> dict[str, str]:
    names = [
        "DATABASE_URL",
        "REDIS_URL",
        "SECRET_KEY",
        "TERMITE_GOLD_KEY",
        "DEBUG",
        "ALLOWED_HOSTS",
        "TERMITE_PROTOCOL_ALLOW_LOOPBACK",
    ]
    base = {k: v for k, v in os.environ.items() if k not in names and k != "DJANGO_SETTINGS_MODULE"}
    return {**base, "TERMITE_DATA_DIR": str(tmp_path), **env}


def _probe(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    """Import the settings in a fresh interpreter with exactly this environment."""
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=_clean_env(tmp_path, **env),
        capture_output=True,
        text=True,
    )


def _settings(tmp_path: Path, **env: str) -> dict:
    result = _probe(tmp_path, **env)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_the_embedded_default_is_sqlite_in_the_data_folder_with_in_process_jobs(tmp_path):
    config = _settings(tmp_path, DEBUG="1")
    assert config["engine"] == "django.db.backends.sqlite3"
    assert config["name"] == str(tmp_path / "portal.sqlite3")
    assert config["queue"]["ASYNC"] is False


def test_database_url_selects_postgresql(tmp_path):
    config = _settings(tmp_path, DEBUG="1", DATABASE_URL="postgres://termite@db.internal:5432/portal")
    assert config["engine"] == "django.db.backends.postgresql"
    assert config["name"] == "portal"


def test_redis_url_selects_django_rq_workers_and_the_redis_cache(tmp_path):
    config = _settings(tmp_path, DEBUG="1", REDIS_URL="redis://cache.internal:6379/2")
    assert config["queue"]["URL"] == "redis://cache.internal:6379/2"
    assert config["queue"]["ASYNC"] is True
    assert config["cache"] == "termite_site.redis_cache.ReusingRedisCache"


def test_embedded_secrets_are_generated_once_and_kept_private(tmp_path):
    _settings(tmp_path, DEBUG="1")
    key_file = tmp_path / "secrets" / "SECRET_KEY"
    first = key_file.read_text()
    assert oct(key_file.stat().st_mode & 0o777) == "0o600"
    assert oct((tmp_path / "secrets" / "TERMITE_GOLD_KEY").stat().st_mode & 0o777) == "0o600"
    _settings(tmp_path, DEBUG="1")
    assert key_file.read_text() == first


@pytest.mark.parametrize("missing", ["SECRET_KEY", "TERMITE_GOLD_KEY"])
def test_production_refuses_to_start_without_a_secret(tmp_path, missing):
    env = {k: v for k, v in PRODUCTION.items() if k != missing}
    result = _probe(tmp_path, **env)
    assert result.returncode != 0
    assert f"{missing} must be set when DEBUG is off" in result.stderr
    assert not (tmp_path / "secrets").exists()


def test_protocol_runs_call_loopback_only_when_development_asks_for_it(tmp_path):
    assert _settings(tmp_path, DEBUG="1")["allow_loopback"] is False
    assert _settings(tmp_path, DEBUG="1", TERMITE_PROTOCOL_ALLOW_LOOPBACK="1")["allow_loopback"] is True


def test_a_malformed_boolean_is_a_clear_error(tmp_path):
    result = _probe(tmp_path, DEBUG="maybe")
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_the_deploy_check_passes_with_production_settings(tmp_path):
    env = _clean_env(tmp_path, **PRODUCTION, DJANGO_SETTINGS_MODULE="termite_site.settings")
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_the_suite_uses_postgresql_when_database_url_is_set():
    expected = "postgresql" if os.environ.get("DATABASE_URL", "").startswith("postgres") else "sqlite"
    assert connection.vendor == expected
