"""How fast the scorer is: a full submission, against what SQLite alone needs for the same queries.

    .venv/bin/python -m benchmarks.score_speed [--archive PATH] [--budget SECONDS]

On the Termite archive when it is present (TERMITE_ARCHIVE, else ../shared/termite/Termite.zip; password
TERMITE_ARCHIVE_PASSWORD), else on the project's own demo benchmark (evaluation/demo). The SQLite copies
are built into a temporary folder. The submission predicts every gold query as written (MySQL), so each
prediction is transpiled and run like a real one; each run appends its own whitespace to the predictions
so that the transpiler's cache, filled by the gold and the runs before, does not serve them.

Prints figures only, never SQL:
- a full submission with a cold gold cache, then with a warm one, then with its predictions already in
  SQLite (no MySQL transpiling: the scorer's own cost); warm figures are the best of three;
- the floor: SQLite alone, in this process, running the same gold and predicted queries (best of three);
- the fixed start-up cost of the sandbox's child process (it overlaps the transpiling);
- ten runaway predictions with a small per-query budget, whose total should be about ten budgets.
Targets: a full submission under 0.5 s and under 3 x floor + start-up; the runaway run about 10 x budget.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack, closing, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from evaluation.scoring.compare import order_key_query
from evaluation.scoring.dialect import TranspileError, read_schema, to_sqlite
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.sandbox import Limits, Sandbox
from evaluation.scoring.score import GoldCache, GoldQuestion, ScoreReport, score_predictions
from evaluation.sources import BenchmarkSource, database_source_from_files, read_termite_archive

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARCHIVE = ROOT.parent / "shared" / "termite" / "Termite.zip"
DEMO_DIR = ROOT / "evaluation" / "demo"
RUNAWAY = "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r"
RUNAWAY_QUERIES = 10
REPEATS = 3

T = TypeVar("T")


@dataclass(frozen=True)
class Benchmark:
    name: str
    database_paths: dict[str, Path]
    questions: list[GoldQuestion]
    gold_mysql: dict[str, str]  # question id -> the gold as written: what the submission predicts
    gold_sqlite: dict[str, str]  # question id -> the same, transpiled, for the questions that transpile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--archive", type=Path, default=Path(os.environ.get("TERMITE_ARCHIVE", DEFAULT_ARCHIVE))
    )
    parser.add_argument("--budget", type=float, default=0.25, help="per-query budget of the runaway run (s)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="score-speed-") as directory:
        seconds, benchmark = timed(lambda: prepare(*load_source(args.archive), Path(directory)))
        print(
            f"benchmark: {benchmark.name}, {len(benchmark.database_paths)} databases, "
            f"{len(benchmark.questions)} questions ({len(benchmark.gold_sqlite)} transpile), "
            f"prepared in {seconds:.2f} s"
        )
        report_figures(benchmark, args.budget)


def load_source(archive: Path) -> tuple[str, BenchmarkSource]:
    if archive.is_file():
        password = os.environ.get("TERMITE_ARCHIVE_PASSWORD", "youshallnotpass")
        return "Termite archive", read_termite_archive(archive, password)
    databases, questions = [], []
    for questions_file in sorted(DEMO_DIR.glob("*.jsonl")):
        dump_file = questions_file.with_suffix(".sql")
        database, database_questions = database_source_from_files(
            dump=dump_file.read_bytes(),
            dump_name=dump_file.name,
            questions=questions_file.read_bytes(),
            questions_name=questions_file.name,
        )
        databases.append(database)
        questions.extend(database_questions)
    return "project demo (no archive)", BenchmarkSource(databases=databases, questions=questions)


def prepare(name: str, source: BenchmarkSource, directory: Path) -> Benchmark:
    paths, schemas = {}, {}
    for database in source.databases:
        paths[database.slug] = directory / f"{database.slug}.sqlite"
        build_sqlite(database.dump, paths[database.slug], source=database.dialect)
        with closing(sqlite3.connect(paths[database.slug])) as connection:
            schemas[database.slug] = read_schema(connection)
    gold_sqlite = {}
    for item in source.questions:
        with suppress(TranspileError):
            gold_sqlite[item.public_id] = to_sqlite(item.gold_sql, schema=schemas[item.db_slug])
    questions = [
        GoldQuestion(
            item.public_id,
            item.db_slug,
            "unknown",
            gold_sqlite.get(item.public_id, ""),
            valid=item.public_id in gold_sqlite,
        )
        for item in source.questions
    ]
    gold_mysql = {item.public_id: item.gold_sql for item in source.questions}
    return Benchmark(name, paths, questions, gold_mysql, gold_sqlite)


def report_figures(benchmark: Benchmark, budget: float) -> None:
    cache: GoldCache = {}
    cold, report = timed(lambda: score(benchmark, benchmark.gold_mysql, "mysql", run=1, gold_cache=cache))
    warm = best_of(lambda run: score(benchmark, benchmark.gold_mysql, "mysql", run=run, gold_cache=cache))
    own = best_of(lambda run: score(benchmark, benchmark.gold_sqlite, "sqlite", run=run, gold_cache=cache))
    floor = floor_seconds(benchmark)
    startup = startup_seconds(next(iter(benchmark.database_paths.values())))
    target = 3 * floor + startup
    data = report.as_dict()
    overall = data["overall"]
    print(f"full submission, cold gold cache:            {cold:.3f} s")
    print(f"full submission, warm gold cache:            {warm:.3f} s")
    print(f"full submission, predictions already SQLite: {own:.3f} s")
    print(f"SQLite floor, same gold and predicted queries: {floor:.4f} s")
    print(f"start-up of the sandbox child: {startup:.3f} s")
    print(f"ratios to the floor: warm {warm / floor:.0f} x, SQLite predictions {own / floor:.0f} x")
    print(
        f"target 3 x floor + start-up = {target:.3f} s: warm {'meets' if warm < target else 'misses'} it, "
        f"SQLite predictions {'meet' if own < target else 'miss'} it"
    )
    print(
        f"EA of the gold against itself: {overall['ea']:.4f}, EA-strict {overall['ea_strict']:.4f} "
        f"(n {overall['n']}, excluded {overall['excluded']})"
    )
    print("outcomes: " + ", ".join(f"{outcome} {n}" for outcome, n in data["outcomes"].items() if n))
    runaway = runaway_seconds(benchmark, budget, cache)
    print(
        f"{RUNAWAY_QUERIES} runaway predictions at {budget:g} s each: {runaway:.3f} s "
        f"({RUNAWAY_QUERIES} x budget = {RUNAWAY_QUERIES * budget:.3f} s; start-up included)"
    )


def score(
    benchmark: Benchmark, predictions: dict[str, str], dialect: str, *, run: int, gold_cache: GoldCache
) -> ScoreReport:
    return score_predictions(
        questions=benchmark.questions,
        predictions={qid: sql + "\n" * run for qid, sql in predictions.items()},
        database_paths=benchmark.database_paths,
        dialect=dialect,
        gold_cache=gold_cache,
    )


def floor_seconds(benchmark: Benchmark) -> float:
    """SQLite in this process runs what the scorer runs: the gold, its keyed form when it has an ORDER BY,
    and the prediction (the same SQLite text)."""
    work = []
    for question in benchmark.questions:
        if question.valid:
            keyed = order_key_query(question.sql_sqlite)
            queries = [question.sql_sqlite, *(keyed[:1] if keyed else []), question.sql_sqlite]
            work.extend((question.db_id, sql) for sql in queries)
    with ExitStack() as stack:
        connections = {}
        for db_id, path in benchmark.database_paths.items():
            connections[db_id] = stack.enter_context(
                closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True))
            )
            install_functions(connections[db_id])

        def run_all(_run: int) -> None:
            for db_id, sql in work:
                connections[db_id].execute(sql).fetchall()

        return best_of(run_all)


def startup_seconds(database: Path) -> float:
    with Sandbox() as sandbox:
        sandbox.execute(database, "SELECT 1")
        return sandbox.startup_seconds


def runaway_seconds(benchmark: Benchmark, budget: float, cache: GoldCache) -> float:
    questions = [q for q in benchmark.questions if q.valid][:RUNAWAY_QUERIES]
    seconds, _report = timed(
        lambda: score_predictions(
            questions=questions,
            predictions={q.question_id: RUNAWAY for q in questions},
            database_paths=benchmark.database_paths,
            limits=Limits(query_seconds=budget),
            gold_cache=cache,
        )
    )
    return seconds


def best_of(function: Callable[[int], object]) -> float:
    """The shortest of REPEATS timed calls; each call gets its run number, from 2 (run 1 is the cold one)."""
    return min(timed(lambda run=run: function(run))[0] for run in range(2, 2 + REPEATS))


def timed(function: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


if __name__ == "__main__":
    main()
