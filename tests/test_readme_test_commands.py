"""The README's test commands select what it says they do: the two lanes split the suite, one file is that
file, one test is that test. Each command runs as written, with `--collect-only` added: running the whole
suite from inside itself would run it twice."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.processes import ROOT, child_env
from tests.readme import shell_commands

pytestmark = pytest.mark.processes


def collected(words: list[str]) -> list[str]:
    """The ids of the tests the command `words` would run."""
    assert words[:3] == ["python3", "dev.py", "test"], words
    done = subprocess.run(
        [sys.executable, *words[1:], "--collect-only", "-q", "-p", "no:cacheprovider"],
        cwd=ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_the_lanes_split_the_suite_and_a_file_or_a_test_is_just_that():
    commands = shell_commands(section="Tests")
    assert len(commands) == 5, commands
    with ThreadPoolExecutor(max_workers=2) as pool:
        everything, main, processes, one_file, one_test, parallel = pool.map(
            collected, [["python3", "dev.py", "test"], *commands]
        )
    assert set(main).isdisjoint(processes) and sorted(main + processes) == sorted(everything)
    assert any(test.startswith("tests/e2e/") for test in processes)
    assert not any(test.startswith(("tests/e2e/", "tests/faults/")) for test in main)
    assert parallel == main

    file_name = commands[2][3]
    assert one_file and all(test.startswith(f"{file_name}::") for test in one_file)
    assert one_file == [test for test in everything if test.startswith(f"{file_name}::")]
    assert one_test == [commands[3][3]]
