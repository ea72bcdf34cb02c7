"""Finding the real services the suite talks to; see tests/conftest.py."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from urllib.parse import urlparse

import pytest

REQUIRE_SERVICES = os.environ.get("TERMITE_REQUIRE_SERVICES") == "1"


def reachable(url: str, default_port: int) -> bool:
    parsed = urlparse(url)
    try:
        with socket.create_connection(
            (parsed.hostname or "127.0.0.1", parsed.port or default_port), timeout=2
        ):
            return True
    except OSError:
        return False


def require_service(env_name: str, default_port: int) -> str:
    """The service URL from the environment, or skip (fail under TERMITE_REQUIRE_SERVICES=1)."""
    url = os.environ.get(env_name, "")
    problem = None
    if not url:
        problem = f"{env_name} is not set"
    elif not reachable(url, default_port):
        problem = f"{env_name} ({urlparse(url).hostname}:{urlparse(url).port or default_port}) is unreachable"
    if problem:
        if REQUIRE_SERVICES:
            pytest.fail(f"{problem}, and TERMITE_REQUIRE_SERVICES=1 requires it")
        pytest.skip(problem)
    return url


ROOT = Path(__file__).resolve().parents[1]
TERMITE_PASSWORD = "youshallnotpass"


def termite_archive_path() -> Path:
    """The real Termite archive, beside the checkout as CI lays it out (or TERMITE_ARCHIVE)."""
    return Path(os.environ.get("TERMITE_ARCHIVE", ROOT.parent / "shared" / "termite" / "Termite.zip"))


# The question count of each of the ten Termite databases, as the archive's README gives them.
TERMITE_QUESTIONS_PER_DATABASE = {
    "bowling": 24,
    "galleria": 23,
    "pratica": 22,
    "coronavirus": 20,
    "farma": 20,
    "farmacia": 20,
    "centri": 19,
    "hackathon": 19,
    "recensioni": 18,
    "voli": 17,
}
