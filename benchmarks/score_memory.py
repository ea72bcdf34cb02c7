"""How much memory scoring one submission takes, for an ordinary file and for a memory-hungry one.

    .venv/bin/python -m benchmarks.score_memory [--archive PATH] [--questions N]

On the Termite archive when it is present (as benchmarks/score_speed.py finds it), else on the project's
demo benchmark, its questions repeated under new ids up to N (198 by default, Termite's scored count).
Each file is scored in a fresh interpreter, which prints its peak resident set size (ru_maxrss) before
and after scoring; the sandbox's child process is not counted (it has its own address-space limit).
The hungry file gives every question one of the predictions below: each returns tens of megabytes
if nothing stops it, or stays just under the caps of one result. Target: the scoring process's peak stays under 300 MB. Prints figures
only, never SQL.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.score_speed import DEFAULT_ARCHIVE, load_source, prepare
from evaluation.scoring.score import GoldQuestion, score_predictions

TARGET_MB = 300
HUNGRY = [
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) SELECT printf('%600d', n) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 100000) SELECT n, n, n, n FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 20) SELECT zeroblob(3000000) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 30) SELECT randomblob(2000000) FROM r",
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 5000) SELECT printf('%9000d', n) FROM r",
    # Just under the default caps of one result (20,000 rows, 8 MB): these are kept until compared.
    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r LIMIT 19999) SELECT printf('%390d', n) FROM r",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--archive", type=Path, default=Path(os.environ.get("TERMITE_ARCHIVE", DEFAULT_ARCHIVE))
    )
    parser.add_argument("--questions", type=int, default=198)
    parser.add_argument("--child", choices=["gold", "hungry"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(score_in_this_process(args.archive, args.questions, args.child)))
        return
    print(
        f"benchmark: {'Termite archive' if args.archive.is_file() else 'project demo'}; target: peak < {TARGET_MB} MB"
    )
    print(f"{'file':<8} {'questions':>9} {'before MB':>10} {'peak MB':>8} {'grown MB':>9}  outcomes")
    for kind in ("gold", "hungry"):
        command = [sys.executable, "-m", "benchmarks.score_memory", "--archive", str(args.archive)]
        command += ["--questions", str(args.questions), "--child", kind]
        figures = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        verdict = "PASS" if figures["peak_mb"] < TARGET_MB else "FAIL"
        print(
            f"{kind:<8} {figures['questions']:>9} {figures['before_mb']:>10.0f} {figures['peak_mb']:>8.0f} "
            f"{figures['peak_mb'] - figures['before_mb']:>9.0f}  {figures['outcomes']}  {verdict}"
        )


def score_in_this_process(archive: Path, count: int, kind: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="score-memory-") as directory:
        benchmark = prepare(*load_source(archive), Path(directory))
        valid = [q for q in benchmark.questions if q.valid]
        questions = valid if archive.is_file() else repeated(valid, count)
        # The gold as written, in MySQL like a real submission; the hungry queries in SQLite.
        if kind == "gold":
            dialect = "mysql"
            predictions = {
                q.question_id: benchmark.gold_mysql[q.question_id.split("#")[0]] for q in questions
            }
        else:
            dialect = "sqlite"
            predictions = {q.question_id: HUNGRY[n % len(HUNGRY)] for n, q in enumerate(questions)}
        before = peak_mb()
        report = score_predictions(
            questions=questions,
            predictions=predictions,
            database_paths=benchmark.database_paths,
            dialect=dialect,
        )
        return {
            "questions": len(questions),
            "before_mb": before,
            "peak_mb": peak_mb(),
            "outcomes": {name: n for name, n in report.metrics.outcomes.items() if n},
        }


def repeated(questions: list[GoldQuestion], count: int) -> list[GoldQuestion]:
    """`count` questions: the given ones, then copies of them under new ids (`<id>#<n>`)."""
    return [
        GoldQuestion(f"{q.question_id}#{n}", q.db_id, q.hardness, q.sql_sqlite)
        for n in range(count)
        for q in [questions[n % len(questions)]]
    ]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kilobytes on Linux


if __name__ == "__main__":
    main()
