#!/usr/bin/env python3
"""Set up and run Termite Portal with nothing but Python 3.

    python3 dev.py start   # venv, install, migrate, demo content, serve on http://127.0.0.1:8000
    python3 dev.py test    # venv, install, run the whole test suite (extra arguments go to pytest)
    python3 dev.py lint    # ruff, import-linter (ARCHITECTURE.md's rules) and mypy over the whole codebase
    python3 dev.py install # only the venv and its requirements (what each command above does first)

The virtual environment lives in .venv and is reinstalled only when the requirements change.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
PYTHON = VENV / "bin" / "python"
REQUIREMENTS = [ROOT / "requirements.txt", ROOT / "requirements-dev.txt"]
STAMP = VENV / ".requirements.sha256"


def _requirements_digest() -> str:
    digest = hashlib.sha256()
    for path in REQUIREMENTS:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def ensure_venv() -> None:
    if not PYTHON.exists():
        print("Creating the virtual environment in .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = _requirements_digest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    print("Installing the requirements ...", flush=True)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-r", str(ROOT / "requirements-dev.txt")], check=True)
    STAMP.write_text(digest)


def run(*args: str, env: dict[str, str] | None = None, program: Path = PYTHON) -> None:
    completed = subprocess.run([str(program), *args], cwd=ROOT, env=env)
    if completed.returncode:
        sys.exit(completed.returncode)


def start(extra: list[str]) -> None:
    env = {**os.environ, "DEBUG": os.environ.get("DEBUG", "1")}
    run("manage.py", "migrate", "--noinput", env=env)
    run("manage.py", "load_demo", env=env)
    address = extra[0] if extra else "127.0.0.1:8000"
    print(f"Serving Termite Portal on http://{address}/ (Ctrl-C to stop)", flush=True)
    os.execve(str(PYTHON), [str(PYTHON), "manage.py", "runserver", address], env)


def test(extra: list[str]) -> None:
    os.execv(str(PYTHON), [str(PYTHON), "-m", "pytest", *extra])


def lint(extra: list[str]) -> None:
    run("-m", "ruff", "check", ".", *extra)
    run("-m", "ruff", "format", "--check", ".")
    run("--no-cache", program=VENV / "bin" / "lint-imports")  # ARCHITECTURE.md's rules: layers, no cycles
    run("-m", "mypy")  # the three apps with django-stubs, strict on the scoring library (pyproject.toml)


def install(extra: list[str]) -> None:
    """Nothing more than ensure_venv, which every command runs first: CI makes the venv once, then starts
    the lint and the test lanes side by side, which would otherwise race to install it."""


COMMANDS = {"start": start, "test": test, "lint": lint, "install": install}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(f"usage: python3 dev.py {{{'|'.join(COMMANDS)}}} [arguments]")
    os.chdir(ROOT)
    ensure_venv()
    COMMANDS[sys.argv[1]](sys.argv[2:])
