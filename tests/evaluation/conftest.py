from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.services import require_service

ROOT = Path(__file__).resolve().parents[2]
TERMITE_PASSWORD = "youshallnotpass"


def termite_archive_path() -> Path:
    return Path(os.environ.get("TERMITE_ARCHIVE", ROOT.parent / "shared" / "termite" / "Termite.zip"))


@pytest.fixture
def termite_archive() -> Path:
    """The real Termite archive beside the checkout; its tests skip cleanly where it is absent."""
    path = termite_archive_path()
    if not path.is_file():
        pytest.skip(f"the Termite archive is not at {path}")
    return path


@pytest.fixture
def reference_url() -> str:
    return require_service("TERMITE_REFERENCE_MYSQL_URL", 3306)


@pytest.fixture
def demo_version(db):
    """The project's own demo benchmark, loaded through the same path as an admin's upload."""
    from evaluation.services import demo_benchmark_load

    return demo_benchmark_load()
