"""How much memory scoring one predictions file takes: the whole process tree of `manage.py score` (the
command and the sandbox's child below it), for the gold, memory-hungry predictions and memory bombs.

    .venv/bin/python -m benchmarks.score_memory [--archive PATH]

A scratch embedded portal (SQLite, no services, a temporary TERMITE_DATA_DIR) holds the Termite archive
when it is present (as benchmarks/score_speed.py finds it), else the project's demo benchmark. Each file
gives every question of the version one prediction, going round its list:
- gold: the gold as written, in MySQL like a real submission;
- hungry: each returns tens of megabytes if nothing stops it, or stays just under the caps of one result;
- bombs (one file per dialect): every kind of `tests/evaluation/hostile_sql.MEMORY_BOMBS` (recursive CTEs
  feeding GROUP_CONCAT, zeroblob and randomblob near 1e9 bytes, 4-way cross joins ordered at random,
  sorts, DISTINCT and recursive UNIONs of blobs), each of which would hold hundreds of megabytes or more.
While `manage.py score` runs, this process reads /proc every 10 ms for it and all its descendants and keeps
the peak of their summed resident sets (RSS, where a page two processes share counts twice) and of their
proportional sets (PSS from /proc/PID/smaps_rollup, a shared page split among its sharers; "-" where it
cannot be read). Target: the tree's RSS peak at most 300 MB. Prints figures only, never SQL.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from contextlib import closing, suppress
from dataclasses import dataclass
from pathlib import Path

from cryptography.fernet import Fernet

from benchmarks.score_speed import DEFAULT_ARCHIVE, ROOT
from evaluation.scoring.functions import install_functions
from tests.evaluation.hostile_sql import MEMORY_BOMBS, UNDER_THE_RESULT_CAPS

TARGET_MB = 300
POLL_SECONDS = 0.01
_READS_TABLE = " WHERE EXISTS (SELECT 1 FROM `{table}`)"  # the scorer refuses a query that reads no table
HUNGRY = [
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) SELECT printf('%600d', n) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) SELECT n, n, n, n FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 20) SELECT zeroblob(3000000) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 30) SELECT randomblob(2000000) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 5000) SELECT printf('%9000d', n) FROM r",
]
FILES = {
    "gold": ("mysql", None),
    "hungry": ("sqlite", [sql + _READS_TABLE for sql in HUNGRY] + [UNDER_THE_RESULT_CAPS]),
    **{
        f"bombs-{dialect}": (
            dialect,
            [sql for bomb_dialect, sql in MEMORY_BOMBS.values() if bomb_dialect == dialect],
        )
        for dialect in ("sqlite", "mysql")
    },
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--archive", type=Path, default=Path(os.environ.get("TERMITE_ARCHIVE", DEFAULT_ARCHIVE))
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="score-memory-") as directory:
        env = portal_env(Path(directory))
        name, questions = load_portal(env, args.archive)
        print(f"benchmark: {name}, {len(questions)} questions; target: tree peak <= {TARGET_MB} MB")
        print(
            f"{'file':<13} {'tree RSS MB':>11} {'ratio':>5} {'PSS MB':>6} {'command MB':>10} {'child MB':>8}  outcomes"
        )
        for kind, (dialect, templates) in FILES.items():
            path = Path(directory, f"{kind}.jsonl")
            with path.open("w") as file:
                for n, (question_id, table, gold) in enumerate(questions):
                    sql = gold if templates is None else templates[n % len(templates)].format(table=table)
                    file.write(json.dumps({"question_id": question_id, "sql": sql}) + "\n")
            peaks, outcomes = score_tree(env, path, dialect)
            rss = peaks.rss / 1024
            pss = "-" if peaks.pss is None else f"{peaks.pss / 1024:.0f}"
            print(
                f"{kind:<13} {rss:>11.0f} {rss / TARGET_MB:>5.2f} {pss:>6} {peaks.command / 1024:>10.0f} "
                f"{peaks.below / 1024:>8.0f}  {outcomes}  {'PASS' if rss <= TARGET_MB else 'FAIL'}"
            )


def portal_env(data_dir: Path) -> dict[str, str]:
    """The embedded mode on a data folder of its own, with production's defaults (DEBUG off)."""
    env = {name: value for name, value in os.environ.items() if name not in ("DATABASE_URL", "REDIS_URL")}
    return {
        **env,
        "DJANGO_SETTINGS_MODULE": "termite_site.settings",
        "DEBUG": "0",
        "SECRET_KEY": "benchmark-only-secret-key-" + "x" * 30,
        "TERMITE_GOLD_KEY": Fernet.generate_key().decode(),
        "TERMITE_DATA_DIR": str(data_dir),
        "LOG_LEVEL": "WARNING",
    }


def load_portal(env: dict[str, str], archive: Path) -> tuple[str, list[tuple[str, str, str]]]:
    """Migrate and load the benchmark; its name and (question id, largest table, gold as written) per question."""
    manage(env, "migrate", "--noinput")
    if archive.is_file():
        password = os.environ.get("TERMITE_ARCHIVE_PASSWORD", "youshallnotpass")
        manage(env, "import_termite", str(archive), "--password", password, "--version", "1.0")
        name = "Termite archive"
    else:
        manage(env, "load_demo")
        name = "project demo (no archive)"
    os.environ.clear()
    os.environ.update(env)
    # Django and the models only now: the settings are read from the scratch portal's environment.
    import django

    django.setup()
    from evaluation.models import BenchmarkVersion, Question

    version = BenchmarkVersion.objects.latest_published()
    questions = Question.objects.filter(version=version).select_related("database").order_by("public_id")
    tables = {database.slug: largest_table(database.sqlite_path) for database in version.databases.all()}
    return name, [(q.public_id, tables[q.database.slug], q.decrypt_gold()) for q in questions]


def largest_table(path: Path) -> str:
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as connection:
        install_functions(connection)  # the copies' collations
        names = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return max(names, key=lambda name: connection.execute(f'SELECT COUNT(*) FROM "{name}"').fetchone()[0])


def manage(env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode:
        sys.exit(f"manage.py {args[0]} failed:\n{done.stderr[-3000:]}")


@dataclass
class Peaks:
    """Peaks over one scoring, in kB: of the whole tree (RSS, and PSS unless unreadable), of the command
    alone and of what runs below it (the sandbox's child), each at its own moment."""

    rss: int = 0
    pss: int | None = 0
    command: int = 0
    below: int = 0

    def take(self, pid: int) -> None:
        rss, pss, command = 0, 0, 0
        for process in tree(pid):
            process_rss, process_pss = memory_kb(process)
            rss += process_rss
            command = command or process_rss  # the tree lists the command first
            pss = None if pss is None or process_pss is None else pss + process_pss
        self.rss, self.command, self.below = (
            max(self.rss, rss),
            max(self.command, command),
            max(self.below, rss - command),
        )
        self.pss = None if self.pss is None or pss is None else max(self.pss, pss)


def score_tree(env: dict[str, str], path: Path, dialect: str) -> tuple[Peaks, dict[str, int]]:
    """Score the file with `manage.py score`, reading its process tree's memory all along; the peaks and
    how many questions ended in each outcome."""
    command = [sys.executable, "manage.py", "score", str(path), "--dialect", dialect, "--json", "--questions"]
    peaks = Peaks()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=err)
        while process.poll() is None:
            peaks.take(process.pid)
            time.sleep(POLL_SECONDS)
        if process.returncode:
            err.seek(0)
            sys.exit(f"manage.py score failed:\n{err.read()[-3000:]}")
        out.seek(0)
        outcomes = Counter(question["outcome"] for question in json.load(out)["questions"])
    return peaks, dict(outcomes.most_common())


def tree(pid: int) -> list[int]:
    """The process and all its descendants (Linux's /proc/PID/task/TID/children), less a child that has
    not run its program yet: it still has its parent's command line and shares its parent's pages."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            with suppress(OSError):  # gone since it was listed
                todo += [
                    child
                    for child in map(int, children.read_text().split())
                    if not same_program(child, current)
                ]
    return found


def same_program(child: int, parent: int) -> bool:
    try:
        return Path(f"/proc/{child}/cmdline").read_bytes() == Path(f"/proc/{parent}/cmdline").read_bytes()
    except OSError:
        return True  # gone: nothing to count


def memory_kb(pid: int) -> tuple[int, int | None]:
    """The resident set of the process and its proportional set (None where it cannot be read), in kB; a
    process gone since it was listed takes none."""
    try:
        rss = int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024
    except OSError:
        return 0, 0
    try:
        rollup = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except PermissionError:
        return rss, None
    except OSError:  # gone
        return 0, 0
    pss = next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), None)
    return rss, pss


if __name__ == "__main__":
    main()
