"""dev.py, all a fresh checkout needs: its usage, and `manage` running manage.py with the venv's Python and
the settings `start` uses."""

from __future__ import annotations

import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.processes import ROOT, child_env, require_process_lane

pytestmark = pytest.mark.processes

DEV_PY = ROOT / "dev.py"
# Set by a deployment or by this test run, never in a fresh checkout's shell. With DEBUG unset the settings
# would refuse to start for want of SECRET_KEY: `dev.py manage` turns DEBUG on, as `start` does.
NOT_ON_A_FRESH_CHECKOUT = (
    "DEBUG",
    "SECRET_KEY",
    "TERMITE_GOLD_KEY",
    "DJANGO_SETTINGS_MODULE",
    "DATABASE_URL",
    "REDIS_URL",
)


def dev_py(script: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    require_process_lane("dev.py")
    return subprocess.run(
        [sys.executable, str(script), *args],
        cwd=script.parent,
        env=env or child_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


def fresh_checkout_env(data_dir: Path) -> dict[str, str]:
    """A fresh checkout's shell, with a data folder of the test's own for the secrets DEBUG generates."""
    inherited = {name: value for name, value in child_env().items() if name not in NOT_ON_A_FRESH_CHECKOUT}
    return {**inherited, "TERMITE_DATA_DIR": str(data_dir)}


@pytest.fixture
def dev_py_alone(tmp_path: Path) -> Path:
    """dev.py in a folder of its own, with no venv beside it."""
    return Path(shutil.copy(DEV_PY, tmp_path))


@pytest.mark.parametrize("spelling", ["--help", "-h", "help"])
def test_help_lists_every_command_with_its_arguments_without_making_the_venv(dev_py_alone, spelling):
    done = dev_py(dev_py_alone, spelling)

    assert done.returncode == 0, done.stderr
    commands = runpy.run_path(str(DEV_PY))["COMMANDS"]
    assert {"start", "test", "lint", "install", "manage"} <= set(commands)
    for name in commands:
        assert re.search(rf"^  {name} ", done.stdout, re.M), f"{name} is not listed:\n{done.stdout}"
    assert "127.0.0.1:8000" in done.stdout  # the address `start` serves on unless given another
    assert "pytest" in done.stdout  # where `test` passes its arguments
    assert not (dev_py_alone.parent / ".venv").exists()


def test_an_unknown_command_fails_with_the_usage_on_stderr(dev_py_alone):
    done = dev_py(dev_py_alone, "serve")

    assert done.returncode != 0
    assert done.stdout == ""
    assert "usage: python3 dev.py" in done.stderr and "Unknown command: 'serve'" in done.stderr
    assert not (dev_py_alone.parent / ".venv").exists()


def test_manage_runs_a_project_command_on_a_fresh_checkout(tmp_path):
    done = dev_py(DEV_PY, "manage", "help", env=fresh_checkout_env(tmp_path))

    assert done.returncode == 0, done.stderr[-2000:]
    # Only settings that load list the project's own commands beside Django's.
    assert "[evaluation]" in done.stdout and "run_protocol" in done.stdout, done.stdout


def test_manage_exits_with_the_commands_status(tmp_path):
    done = dev_py(DEV_PY, "manage", "no_such_command", env=fresh_checkout_env(tmp_path))

    assert done.returncode == 1
    assert "Unknown command: 'no_such_command'" in done.stderr
