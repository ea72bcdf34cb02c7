"""`manage.py fetch_databases`: prepares a scoring host's cache, and says what it fetched."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.demo import database_lost


def fetch(*args: str) -> str:
    out = StringIO()
    call_command("fetch_databases", *args, stdout=out)
    return out.getvalue()


def test_it_fetches_what_this_host_lacks_then_finds_it_here(demo_version, settings, tmp_path):
    settings.TERMITE_DATABASE_CACHE_DIR = tmp_path / "cache"
    first = fetch("--version", demo_version.label)
    assert "fetched" in first and first.endswith("2 fetched, 0 already here\n")
    assert fetch().endswith("0 fetched, 2 already here\n")


def test_an_unknown_version_is_refused(db):
    with pytest.raises(CommandError, match="No benchmark version 'nessuna'"):
        fetch("--version", "nessuna")


def test_a_database_the_platform_lacks_is_reported_and_fails_the_command(demo_version):
    with (
        database_lost(demo_version.databases.get(slug="ciclismo")),
        pytest.raises(CommandError, match="Database demo-1.0/ciclismo is not stored on the platform"),
    ):
        fetch()
