"""How fast the scorer is: a full submission, against what SQLite alone needs for the same queries.

    .venv/bin/python -m benchmarks.score_speed [--archive PATH] [--budget SECONDS]

On the Termite archive when it is present (TERMITE_ARCHIVE, else ../shared/termite/Termite.zip; password
TERMITE_ARCHIVE_PASSWORD), else on the project's own demo benchmark (evaluation/demo). The SQLite copies
are built into a temporary folder. The submission predicts every gold query as written (MySQL), so each
prediction is transpiled and run like a real one; each run puts blanks of its own into the predictions
so that the transpiler's cache, filled by the gold and the runs before, does not serve them.

Prints figures only, never SQL. Every time but the runaway run's is the best of three runs (a cold run
gets a new gold cache):
- floor: SQLite alone, in this process, preparing and running the same gold and predicted queries (and,
  for comparison, the same when SQLite may reuse its prepared statements);
- start-up: what does not grow with the number of predictions, measured as the scoring of a submission
  with one SQLite prediction per database (`SELECT COUNT(*) FROM sqlite_master`) and a warm gold cache:
  the child's start, the private copies of the databases and their sha256, the schemas read by the child's
  connections, the summary, the shutdown (the parent reads a database's schema for MySQL predictions once
  per process, as a worker does: the runs before have read them);
- for the full submission with a cold and a warm gold cache, and with its predictions already in SQLite
  (the scorer without the transpiler): total, ratio = (total - start-up) / floor, and PASS or FAIL against
  the targets: under 0.5 s, and under 3 x floor + start-up. The warm cache is production's case: the
  worker runs the gold of every published version before it starts, and each job's forked work-horse
  inherits the results (`evaluation.grading.warm_gold_cache`);
- the time the transpiler alone takes for the MySQL predictions, which the ratio of a MySQL submission
  cannot be below;
- the conformance check of the MySQL predictions alone, on trees and tokens already read: the scorer
  checks the transpiler's own, so this is what the check adds to the transpiler's time;
- ten runaway predictions with a small per-query budget: target about ten budgets (at most 10 % more,
  plus the start-up).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import itertools
import os
import sqlite3
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack, closing, suppress
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from sqlglot.tokens import SQLGLOTC_INSTALLED

from evaluation.distillation import ScorableGold, distil_suite, suite_seed_of
from evaluation.scoring.compare import order_key_query
from evaluation.scoring.conformance import mysql_conformance_error
from evaluation.scoring.dialect import TranspileError, read_schema, to_sqlite
from evaluation.scoring.functions import install_functions
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.sandbox import Limits
from evaluation.scoring.score import GoldCache, GoldQuestion, ScoreReport, score_predictions
from evaluation.scoring.statements import read_statement, single_statement
from evaluation.sources import BenchmarkSource, demo_source, read_termite_archive

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARCHIVE = ROOT.parent / "shared" / "termite" / "Termite.zip"
# It reads a table of its question's database: the scorer refuses a query that reads none from its text
# (`reads_no_table`), and the run would time nothing.
RUNAWAY = (
    "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT COUNT(*) FROM r"
    " WHERE EXISTS (SELECT 1 FROM `{table}`)"
)
RUNAWAY_QUERIES = 10
REPEATS = 3
SUITE_CANDIDATES = 60  # as TERMITE_SUITE_CANDIDATES by default
RUNS = itertools.count(1)  # run numbers: each run's predictions are its own text

T = TypeVar("T")


@dataclass(frozen=True)
class Benchmark:
    name: str
    database_paths: dict[str, Path]
    questions: list[GoldQuestion]
    gold_mysql: dict[str, str]  # question id -> the gold as written: what the submission predicts
    gold_sqlite: dict[str, str]  # question id -> the same, transpiled, for the questions that transpile
    # The same questions with their test suites, and the paths of the neighbour databases too (TS-EA).
    suite_questions: list[GoldQuestion]
    suite_paths: dict[str, Path]


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
    return "project demo (no archive)", demo_source()


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
    suite_questions, suite_paths = with_suites(source, questions, paths, schemas, directory)
    return Benchmark(name, paths, questions, gold_mysql, gold_sqlite, suite_questions, suite_paths)


def with_suites(
    source: BenchmarkSource,
    questions: list[GoldQuestion],
    paths: dict[str, Path],
    schemas: dict[str, dict[str, dict[str, str]]],
    directory: Path,
) -> tuple[list[GoldQuestion], dict[str, Path]]:
    """The questions with the test suites an import would build (TERMITE_SUITE_CANDIDATES' default)."""
    by_id = {question.question_id: question for question in questions}
    suites: dict[str, tuple[str, ...]] = {}
    suite_paths = dict(paths)
    for database in source.databases:
        golds = [
            ScorableGold(item.public_id, item.gold_sql, by_id[item.public_id].sql_sqlite)
            for item in source.questions
            if item.db_slug == database.slug and by_id[item.public_id].valid
        ]
        suite = distil_suite(
            slug=database.slug,
            dump=database.dump,
            dialect=database.dialect,
            sqlite_file=paths[database.slug],
            column_types=schemas[database.slug],
            golds=golds,
            workdir=directory,
            candidates=SUITE_CANDIDATES,
            seed=suite_seed_of("termite", sha256_of(paths[database.slug])),
            reference_url=None,
        )
        if suite is None:
            continue
        for position, neighbour in enumerate(suite.neighbours):
            suite_paths[f"{database.slug}~{position}"] = neighbour.path
        for question_id, entry in suite.questions.items():
            suites[question_id] = tuple(f"{database.slug}~{position}" for position in entry.neighbours)
    return [replace(q, suite=suites.get(q.question_id, ())) for q in questions], suite_paths


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def report_figures(benchmark: Benchmark, budget: float) -> None:
    cache: GoldCache = {}
    mysql, own = benchmark.gold_mysql, benchmark.gold_sqlite
    cold = best_of(lambda run: score(benchmark, mysql, "mysql", run=run, gold_cache={}))
    score(benchmark, mysql, "mysql", run=next(RUNS), gold_cache=cache)
    warm = best_of(lambda run: score(benchmark, mysql, "mysql", run=run, gold_cache=cache))
    warm_own = best_of(lambda run: score(benchmark, own, "sqlite", run=run, gold_cache=cache))
    with_suite = replace(benchmark, questions=benchmark.suite_questions, database_paths=benchmark.suite_paths)
    score(with_suite, mysql, "mysql", run=next(RUNS), gold_cache=cache)
    warm_suites = best_of(lambda run: score(with_suite, mysql, "mysql", run=run, gold_cache=cache))
    report = score(benchmark, mysql, "mysql", run=0, gold_cache=cache)
    floor, queries = floor_seconds(benchmark, reuse_statements=False)
    floor_reusing, _ = floor_seconds(benchmark, reuse_statements=True)
    suite_floor, suite_queries = floor_seconds(with_suite, reuse_statements=False)
    startup = {dialect: startup_seconds(benchmark, dialect, cache) for dialect in ("mysql", "sqlite")}
    suite_startup = startup_seconds(with_suite, "mysql", cache)
    transpile = transpile_seconds(benchmark)
    conformance = conformance_seconds(benchmark)
    n = len(mysql)
    print(
        f"SQLite floor: {floor:.4f} s for the {queries} queries of the gold, its keyed form and the prediction, "
        f"each prepared and run in this process ({floor_reusing:.4f} s when SQLite reuses the statements it "
        "prepared before, which a real submission cannot)"
    )
    print(
        f"start-up: {startup['mysql']:.3f} s for MySQL predictions, {startup['sqlite']:.3f} s for SQLite "
        "predictions (child start, database copies and sha256, schemas, connections, summary, shutdown)"
    )
    print(
        f"{'submission of ' + str(n) + ' predictions':<40} {'total':>8} {'start-up':>9} {'ratio':>7}  targets"
    )
    for label, total, dialect in (
        ("MySQL predictions, cold gold cache", cold, "mysql"),
        ("MySQL predictions, warm (production)", warm, "mysql"),
        ("predictions in SQLite, warm gold cache", warm_own, "sqlite"),
    ):
        fixed = startup[dialect]
        print(
            f"{label:<40} {total:>6.3f} s {fixed:>7.3f} s {(total - fixed) / floor:>5.1f} x  "
            f"< 0.5 s {verdict(total < 0.5)}, < 3 x floor + start-up "
            f"({3 * floor + fixed:.3f} s) {verdict(total < 3 * floor + fixed)}"
        )
    neighbours = len(benchmark.suite_paths) - len(benchmark.database_paths)
    suites = sum(bool(q.suite) for q in benchmark.suite_questions)
    print(
        f"{'MySQL, warm, with test suites (TS-EA)':<40} {warm_suites:>6.3f} s {suite_startup:>7.3f} s "
        f"{(warm_suites - suite_startup) / suite_floor:>5.1f} x  < 0.5 s {verdict(warm_suites < 0.5)}; "
        f"its floor {suite_floor:.4f} s runs {suite_queries} queries: the above, and the gold, its keyed form and "
        f"the prediction on each of the {neighbours} neighbour databases of the {suites} questions' suites"
    )
    compiled = "compiled by sqlglotc" if SQLGLOTC_INSTALLED else "pure Python: sqlglotc is not installed"
    print(
        f"transpiling the {n} MySQL predictions alone: {transpile:.3f} s = {transpile / floor:.1f} x floor "
        f"(sqlglot {compiled})"
    )
    print(
        f"the conformance check of the {n} MySQL predictions alone, on the transpiler's trees and tokens: "
        f"{conformance:.3f} s = {conformance / floor:.1f} x floor"
    )
    data = report.as_dict()
    overall = data["overall"]
    print(
        f"EA of the gold against itself: {overall['ea']:.4f}, EA-strict {overall['ea_strict']:.4f} "
        f"(n {overall['n']}, excluded {overall['excluded']})"
    )
    print(
        "outcomes: " + ", ".join(f"{outcome} {count}" for outcome, count in data["outcomes"].items() if count)
    )
    runaway = runaway_seconds(benchmark, budget, cache)
    allowed = 1.1 * RUNAWAY_QUERIES * budget + startup["mysql"]
    print(
        f"{RUNAWAY_QUERIES} runaway predictions at {budget:g} s each: {runaway:.3f} s, "
        f"{RUNAWAY_QUERIES} x budget = {RUNAWAY_QUERIES * budget:.3f} s: "
        f"about 10 x budget (at most {allowed:.3f} s with start-up) {verdict(runaway <= allowed)}"
    )


def verdict(passed: bool) -> str:
    return "PASS" if passed else "FAIL"


def score(
    benchmark: Benchmark, predictions: dict[str, str], dialect: str, *, run: int, gold_cache: GoldCache
) -> ScoreReport:
    return score_predictions(
        questions=benchmark.questions,
        predictions={qid: perturbed(sql, run) for qid, sql in predictions.items()},
        database_paths=benchmark.database_paths,
        dialect=dialect,
        gold_cache=gold_cache,
    )


def perturbed(sql: str, run: int) -> str:
    """The same query with blanks of its own after its first word (the transpiler's cache keys on the
    statement, whose surrounding blanks it drops), so that the cache cannot serve it."""
    text = sql.lstrip()
    end_of_first_word = len(sql) - len(text) + len(text.split(maxsplit=1)[0])
    return sql[:end_of_first_word] + " " * run + sql[end_of_first_word:]


def startup_seconds(benchmark: Benchmark, dialect: str, cache: GoldCache) -> float:
    """The scoring of a submission with one prediction per database, which opens it and reads its schema."""
    first: dict[str, str] = {}
    for question in benchmark.questions:
        if question.valid:
            first.setdefault(question.db_id, question.question_id)
    predictions = dict.fromkeys(first.values(), "SELECT COUNT(*) FROM sqlite_master")
    return best_of(
        lambda _run: score_predictions(
            questions=benchmark.questions,
            predictions=predictions,
            database_paths=benchmark.database_paths,
            dialect=dialect,
            gold_cache=cache,
        )
    )


def transpile_seconds(benchmark: Benchmark) -> float:
    schemas = {}
    for db_id, path in benchmark.database_paths.items():
        with closing(sqlite3.connect(path)) as connection:
            schemas[db_id] = read_schema(connection)
    databases = {question.question_id: question.db_id for question in benchmark.questions}

    def transpile_all(run: int) -> None:
        for qid, sql in benchmark.gold_mysql.items():
            with suppress(TranspileError):
                to_sqlite(perturbed(sql, run), schema=schemas[databases[qid]])

    return best_of(transpile_all)


def conformance_seconds(benchmark: Benchmark) -> float:
    """What the conformance check adds to transpiling the gold as written: the scorer checks the tree and
    the tokens the transpiler read (`to_sqlite(check_conformance=True)`), so the parse is not counted, only
    the check."""
    parsed = []
    for sql in benchmark.gold_mysql.values():
        with suppress(TranspileError):
            parsed.append(read_statement(single_statement(sql, "mysql"), source="mysql"))

    def check_all(_run: int) -> None:
        for tree, tokens in parsed:
            mysql_conformance_error(tree, tokens)

    return best_of(check_all)


def floor_seconds(benchmark: Benchmark, *, reuse_statements: bool) -> tuple[float, int]:
    """SQLite in this process runs what the scorer runs: the gold, its keyed form when it has an ORDER BY,
    and the prediction (the same SQLite text), on the question's database and on each database of its test
    suite; the time of the best run and the number of queries.

    The connections are open and warm. Unless `reuse_statements`, each query is prepared as it is run, as
    a scorer must: here the prediction is the gold's text, and each run the same texts as the one before,
    so SQLite's statement cache would hand back statements that a real submission never repeats.
    """
    work = []
    for question in benchmark.questions:
        if question.valid:
            keyed = order_key_query(question.sql_sqlite)
            queries = [question.sql_sqlite, *(keyed[:1] if keyed else []), question.sql_sqlite]
            work.extend((db, sql) for db in (question.db_id, *question.suite) for sql in queries)
    cached = 128 if reuse_statements else 0
    with ExitStack() as stack:
        connections = {}
        for db_id, path in benchmark.database_paths.items():
            connections[db_id] = stack.enter_context(
                closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, cached_statements=cached))
            )
            install_functions(connections[db_id])

        def run_all(_run: int) -> None:
            for db_id, sql in work:
                connections[db_id].execute(sql).fetchall()

        run_all(0)  # the schemas and pages in memory, as the start-up puts them for the scorer
        return best_of(run_all), len(work)


def runaway_seconds(benchmark: Benchmark, budget: float, cache: GoldCache) -> float:
    questions = [q for q in benchmark.questions if q.valid][:RUNAWAY_QUERIES]
    tables = {}
    for db_id in {q.db_id for q in questions}:
        with closing(sqlite3.connect(benchmark.database_paths[db_id])) as connection:
            tables[db_id] = next(iter(read_schema(connection)))
    seconds, report = timed(
        lambda: score_predictions(
            questions=questions,
            predictions={q.question_id: RUNAWAY.format(table=tables[q.db_id]) for q in questions},
            database_paths=benchmark.database_paths,
            limits=Limits(query_seconds=budget),
            gold_cache=cache,
        )
    )
    outcomes = {question.outcome for question in report.questions}
    if outcomes != {"timeout"}:  # a runaway stopped before it ran would make the figure meaningless
        raise SystemExit(f"the runaway predictions ended as {sorted(outcomes)}, not as timeouts")
    return seconds


def best_of(function: Callable[[int], object]) -> float:
    """The shortest of REPEATS timed calls; each call gets a run number never given before."""
    return min(timed(functools.partial(function, next(RUNS)))[0] for _ in range(REPEATS))


def timed(function: Callable[[], T]) -> tuple[float, T]:
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


if __name__ == "__main__":
    main()
