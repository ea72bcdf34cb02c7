#!/usr/bin/env python3
"""Set up and run Termite Portal with nothing but Python 3: `python3 dev.py --help` lists the commands.

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

USAGE = """\
usage: python3 dev.py COMMAND [ARGUMENTS]

  start [ADDRESS]     make the venv, migrate, load the demo and serve it on ADDRESS, HOST:PORT
                      (default 127.0.0.1:8000)
  test [PYTEST ARGS]  run the test suite; the arguments go to pytest (-m processes, a file, -k tokens -x)
  lint [RUFF ARGS]    ruff, import-linter (ARCHITECTURE.md's rules) and mypy over the whole codebase;
                      the arguments go to `ruff check` (--fix)
  install             only the venv and its requirements (what each other command does first)
  manage ARGS         manage.py ARGS with the venv's Python and the settings `start` uses (DEBUG=1 unless
                      DEBUG is set): `manage help` lists the commands, `manage score --help` one's options
  help, -h, --help    this text
"""
HELP = ("help", "-h", "--help")


def _requirements_digest() -> str:
    digest = hashlib.sha256()
    for path in REQUIREMENTS:
        digest.update(path.read_bytes())
    return digest.hexdigest()


def ensure_venv() -> None:
    if not PYTHON.exists():
        # On stderr, as pip's own messages: stdout is the command's (`manage score --json > scores.json`).
        print("Creating the virtual environment in .venv ...", file=sys.stderr, flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    digest = _requirements_digest()
    if STAMP.exists() and STAMP.read_text() == digest:
        return
    print("Installing the requirements ...", file=sys.stderr, flush=True)
    pip = [str(PYTHON), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "-r", str(ROOT / "requirements-dev.txt")], check=True)
    STAMP.write_text(digest)


def run(*args: str, env: dict[str, str] | None = None, program: Path = PYTHON) -> None:
    completed = subprocess.run([str(program), *args], cwd=ROOT, env=env)
    if completed.returncode:
        sys.exit(completed.returncode)


def development_env() -> dict[str, str]:
    """This shell's environment with DEBUG on unless it says otherwise: the embedded portal then generates
    its secrets under ./var/ instead of refusing to start without them."""
    return {**os.environ, "DEBUG": os.environ.get("DEBUG", "1")}


def start(extra: list[str]) -> None:
    os.chdir(ROOT)
    env = development_env()
    run("manage.py", "migrate", "--noinput", env=env)
    run("manage.py", "load_demo", env=env)
    address = extra[0] if extra else "127.0.0.1:8000"
    print(f"Serving Termite Portal on http://{address}/ (Ctrl-C to stop)", flush=True)
    os.execve(str(PYTHON), [str(PYTHON), "manage.py", "runserver", address], env)


def test(extra: list[str]) -> None:
    os.chdir(ROOT)  # the README's test paths are the checkout's
    os.execv(str(PYTHON), [str(PYTHON), "-m", "pytest", *extra])


def lint(extra: list[str]) -> None:
    run("-m", "ruff", "check", ".", *extra)
    run("-m", "ruff", "format", "--check", ".")
    run("--no-cache", program=VENV / "bin" / "lint-imports")  # ARCHITECTURE.md's rules: layers, no cycles
    run("-m", "mypy")  # the three apps with django-stubs, strict on the scoring library (pyproject.toml)


def install(extra: list[str]) -> None:
    """Nothing more than ensure_venv, which every command runs first: CI makes the venv once, then starts
    the lint and the test lanes side by side, which would otherwise race to install it."""


def manage(extra: list[str]) -> None:
    # In the caller's directory: the paths among the arguments are relative to it (`score predictions.jsonl`).
    os.execve(str(PYTHON), [str(PYTHON), str(ROOT / "manage.py"), *extra], development_env())


COMMANDS = {"start": start, "test": test, "lint": lint, "install": install, "manage": manage}

if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command in HELP:
        print(USAGE, end="")
        sys.exit()
    if command not in COMMANDS:
        sys.exit(f"{USAGE}\nUnknown command: {command!r}" if command else USAGE)
    ensure_venv()
    COMMANDS[command](sys.argv[2:])
