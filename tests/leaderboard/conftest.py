"""Fixtures of the protocol-run tests, which talk to the OpenAI-compatible stub on 127.0.0.1."""

from __future__ import annotations

import pytest


@pytest.fixture
def loopback_allowed(settings):
    """Endpoints on loopback may be called (TERMITE_PROTOCOL_ALLOW_LOOPBACK=1), with quick heartbeats."""
    settings.TERMITE_PROTOCOL_ALLOW_LOOPBACK = True
    settings.TERMITE_HEARTBEAT_SECONDS = 0.2


@pytest.fixture
def no_waiting(monkeypatch) -> list[float]:
    """The runner's waits between retries, recorded and never slept."""
    from leaderboard.protocols import runner

    waits: list[float] = []
    monkeypatch.setattr(runner, "pause", lambda seconds, stop: waits.append(seconds))
    return waits
