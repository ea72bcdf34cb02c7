"""Reading settings from the environment, with secrets kept for the embedded default.

No Django imports: settings.py uses this before Django is configured.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


class MissingSetting(RuntimeError):
    """A production secret is not configured; the site must not start without it."""


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise MissingSetting(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return int(raw)
    except ValueError:
        raise MissingSetting(f"{name}={raw!r} is not a whole number") from None


def env_float(name: str, default: float) -> float:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise MissingSetting(f"{name}={raw!r} is not a number") from None


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


def secret(name: str, *, data_dir: Path, generate: Callable[[], str], allow_generated: bool) -> str:
    """The secret from the environment, else (embedded mode only) one generated once and kept on disk.

    Generated secrets live in the data folder with 0600 permissions so that a restart keeps sessions
    valid and encrypted gold readable; in production a missing secret is a start-up error instead,
    because a generated one would silently differ between hosts.
    """
    value = os.environ.get(name)
    if value:
        return value
    if not allow_generated:
        raise MissingSetting(f"{name} must be set when DEBUG is off (see README, 'Configuration')")
    path = data_dir / "secrets" / name
    if path.exists():
        return path.read_text().strip()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    value = generate()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(value)
    return value


def random_secret_key() -> str:
    return secrets.token_urlsafe(50)
