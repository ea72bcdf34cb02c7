"""Scoring one submission: every prediction against its gold query, in one sandbox.

    report = score_predictions(questions=..., predictions=..., database_paths=...)
    report.as_dict()    # the JSON the leaderboard and the scripts read (scores_json.ScoresJSON)
    report.questions    # one QuestionScore per question, in the order given

Nothing here describes a gold query or its rows: a question's error is its prediction's own, and a gold
query that fails at scoring time excludes its question with a reason that names only the question id.
The one exception is asked for: with `explain`, for a practice version, whose gold and data are public,
each question's score carries what ran and the first rows of both results (`QuestionDetail`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import sqlite3
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, cast

from evaluation.scoring.compare import (
    Difference,
    Row,
    difference,
    order_key_query,
    results_match,
    results_match_strict,
    split_order_keys,
)
from evaluation.scoring.dialect import (
    FrozenSchema,
    QueryTooComplex,
    ReadsNoTable,
    TranspileError,
    freeze_schema,
    read_schema,
    to_sqlite,
)
from evaluation.scoring.full_group_by import Keys, read_keys
from evaluation.scoring.metrics import Graded, Metrics, summarise
from evaluation.scoring.sandbox import DEFAULT_LIMITS, Execution, Limits, Query, Sandbox, refusal
from evaluation.scoring.sandbox_child import MAX_ERROR_CHARS
from evaluation.scoring.scores_json import ScoresJSON
from evaluation.scoring.vocabulary import EXCLUDED

# 1.6.0: ENUM and SET columns as MySQL 8.0 takes them (the copies keep their members): an ENUM sorts in its
# declared order and is its member's position where MySQL wants a number, a SET the bits of its members;
# FIND_IN_SET runs (it failed on SQLite); MATCH ... AGAINST is a static syntax_error naming full-text search.
# 1.5.0: MySQL 8.0's default sql_mode: ONLY_FULL_GROUP_BY with its functional dependence (ERROR 1055, 1140,
# 3065, 3066: a static syntax_error); integer results out of range, UNSIGNED ones below zero included, are
# ERROR 1690 as the query runs; zero dates are NULL; every utf8mb4/utf8mb3 collation in COLLATE (1273, 1253);
# the day numbers (TO_DAYS, FROM_DAYS, ...) as MySQL counts them; ANY_VALUE(x) no longer aggregates.
# 1.4.0: a prediction that reads no table (`SELECT 'Roma'`, a CTE of constants) is `reads_no_table`, wrong
# whatever it returns: its result cannot depend on the database. Every other verdict is as in 1.3.0.
# 1.3.0: test-suite EA (TS-EA): a prediction right on the original database must be right on every
# neighbour database of its question's suite too. EA and EA-strict are as in 1.2.0.
# 1.2.0: a prediction must be written in its dialect: what MySQL 8.0 (or SQLite) refuses, such as `==`,
# `ILIKE`, `NULLS FIRST` or SQLite's functions in a MySQL prediction, is a syntax_error before transpiling
# (conformance.py); a SQLite prediction may not call the MySQL helpers the sandbox installs.
# 1.1.0: result caps (20,000 rows, 8 MB; 256 MB a submission), static outcomes marked, predictions the
# reader chokes on scored alone. EA of every ordinary prediction is as in 1.0.0.
SCORER_VERSION = "1.6.0"


def scored_by_older_scorer(scorer_version: str) -> bool:
    """Whether scores that `scorer_version` made are not the current scorer's: the pages and exports flag
    them until they are rescored."""
    return scorer_version != SCORER_VERSION


logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class GoldQuestion:
    question_id: str
    db_id: str
    hardness: str
    sql_sqlite: str  # already transpiled to SQLite
    valid: bool = True
    # The question's test suite: keys of `database_paths` naming neighbour databases of `db_id` on which
    # the gold is checked to be right; TS-EA needs the prediction right on each of them too.
    suite: tuple[str, ...] = ()


# How many rows of each result a question's detail keeps: enough to see why they differ.
DETAIL_ROWS = 5


class QuestionDetail(NamedTuple):
    """What a practice version shows of a question: the prediction as it ran (SQLite; None when a check
    of its text stopped it), the first rows of its result and of the gold's, how many each had, and why
    they differ."""

    sql_run: str | None
    columns: tuple[str, ...]
    rows: tuple[Row, ...]
    row_count: int | None  # None: nothing ran, or it failed
    gold_rows: tuple[Row, ...]
    gold_row_count: int
    difference: Difference | None


class QuestionScore(NamedTuple):
    question_id: str
    outcome: str  # one of vocabulary.OUTCOMES, or vocabulary.EXCLUDED
    ea: bool
    ea_strict: bool
    error: str | None
    # Decided by a check of the prediction's text alone, before anything ran on the data: what a
    # participant may be told per question (leaderboard/feedback.py).
    static: bool = False
    # Test-suite EA: EA on the original database and on every database of the question's suite.
    ts: bool = False
    detail: QuestionDetail | None = None  # with `explain` only


@dataclass(frozen=True)
class GoldResult:
    """The rows of the gold query as written, in the engine's order (EA-strict compares with them), and,
    when it has a top-level ORDER BY, one order key per row (EA lets rows with equal keys swap)."""

    rows: tuple[tuple[Any, ...], ...]
    order_keys: tuple[tuple[Any, ...], ...] | None


# (sha256 of the database file, question id, sha256 of the gold SQL) -> the gold result
GoldCache = MutableMapping[tuple[str, str, str], GoldResult]
# (question id, key of the database in `database_paths`) -> the gold result there, None where it failed
GoldResults = dict[tuple[str, str], GoldResult | None]


@dataclass(frozen=True)
class ScoreReport:
    version: str
    metrics: Metrics
    questions: tuple[QuestionScore, ...]
    scorer_version: str = SCORER_VERSION

    def as_dict(self) -> ScoresJSON:
        metrics = self.metrics
        return {
            "version": self.version,
            "scorer_version": self.scorer_version,
            "overall": {
                "ea": metrics.overall.ea,
                "ea_strict": metrics.overall.ea_strict,
                "ea_ci95": list(metrics.ea_ci95),
                "ts_ea": metrics.overall.ts_ea,
                "ts_ea_ci95": list(metrics.ts_ea_ci95),
                "ts_questions": metrics.ts_questions,
                "n": metrics.overall.n,
                "excluded": metrics.excluded,
            },
            "per_database": {db: accuracy.as_dict() for db, accuracy in metrics.per_database.items()},
            "per_hardness": {level: accuracy.as_dict() for level, accuracy in metrics.per_hardness.items()},
            "outcomes": dict(metrics.outcomes),
        }


def score_predictions(
    *,
    questions: Sequence[GoldQuestion],
    predictions: Mapping[str, str],
    database_paths: Mapping[str, Path],
    dialect: str = "mysql",
    limits: Limits = DEFAULT_LIMITS,
    gold_cache: GoldCache | None = None,
    benchmark_version: str = "",
    explain: bool = False,
) -> ScoreReport:
    """Score `predictions` (question id -> SQL written for `dialect`) on `questions`.

    A question without a prediction, or with a blank one, is `not_submitted`; predictions for unknown
    question ids are ignored. `gold_cache`, kept by the caller between submissions, saves running the gold
    queries again. `benchmark_version` becomes the report's "version". With `explain` (a practice
    version's public gold only), each score carries its `QuestionDetail`.
    """
    valid = [q for q in questions if q.valid]
    missing = sorted({key for q in valid for key in (q.db_id, *q.suite)} - set(database_paths))
    if missing:
        raise ValueError(f"no database file for: {', '.join(missing)}")
    with Sandbox(limits) as sandbox:
        # The child boots and opens the databases while this process reads their schemas and the gold
        # results (from the cache, in production). Only MySQL predictions need the column types.
        sandbox.open_ahead(dict.fromkeys(database_paths[key] for q in valid for key in (q.db_id, *q.suite)))
        schemas = (
            {
                db_id: _schema(sandbox.database_sha256(database_paths[db_id]), Path(database_paths[db_id]))
                for db_id in {q.db_id for q in valid}
            }
            if dialect == "mysql"
            else {}
        )
        prepared: dict[str, str | tuple[str, str | None]] = {}

        def prepare(question: GoldQuestion) -> str | tuple[str, str | None]:
            if question.question_id not in prepared:
                prepared[question.question_id] = _prepare(
                    predictions.get(question.question_id), dialect, schemas.get(question.db_id), limits
                )
            return prepared[question.question_id]

        def prepare_all() -> None:
            for question in valid:
                prepare(question)

        # Gold queries to run (a cold cache) wait for the child to be up: the predictions are transpiled
        # first, meanwhile. With every gold result cached, they are transpiled as the sandbox asks.
        golds = _gold_results(
            [(q, key) for q in valid for key in (q.db_id, *q.suite)],
            database_paths,
            sandbox,
            gold_cache,
            before_running=prepare_all,
        )
        runs: list[GoldQuestion] = []  # the questions whose prediction runs, in the order it is sent

        def predictions_to_run() -> Iterator[Query]:
            """Each prediction, transpiled when the sandbox asks for it: transpiling costs more than
            running, and the child runs the predictions already sent meanwhile."""
            for q in valid:
                sql = prepare(q)
                if isinstance(sql, str) and golds[(q.question_id, q.db_id)] is not None:
                    runs.append(q)
                    yield Query(database_paths[q.db_id], sql)

        # Each result is compared as it arrives and dropped: only the verdicts stay.
        ran = {
            runs[index].question_id: _verdict(
                runs[index],
                execution,
                golds[(runs[index].question_id, runs[index].db_id)],
                ran_sql=cast(str, prepared[runs[index].question_id]) if explain else None,
            )
            for index, execution in sandbox.stream(predictions_to_run())
        }
        ran.update(_test_suite_verdicts(runs, ran, prepared, golds, database_paths, sandbox))
    scores = tuple(_score_question(q, prepared, golds, ran, explain=explain) for q in questions)
    graded = [
        Graded(
            question.db_id,
            question.hardness,
            score.outcome,
            score.ea,
            score.ea_strict,
            ts=score.ts,
            has_suite=bool(question.suite),
        )
        for question, score in zip(questions, scores, strict=True)
    ]
    return ScoreReport(version=benchmark_version, metrics=summarise(graded), questions=scores)


def _test_suite_verdicts(
    runs: Sequence[GoldQuestion],
    ran: Mapping[str, QuestionScore],
    prepared: Mapping[str, str | tuple[str, str | None]],
    golds: GoldResults,
    database_paths: Mapping[str, Path],
    sandbox: Sandbox,
) -> dict[str, QuestionScore]:
    """The EA-right predictions run again on each database of their question's suite: TS-EA holds when
    every one gives the gold's rows there (a prediction wrong on the original is wrong on the suite)."""
    checks = [
        (question, key)
        for question in runs
        if ran[question.question_id].ea
        for key in question.suite
        if golds[(question.question_id, key)] is not None  # validated at import; never fails in practice
    ]
    queries = [Query(database_paths[key], cast(str, prepared[q.question_id])) for q, key in checks]
    failed: set[str] = set()
    for index, execution in sandbox.stream(queries):
        question, key = checks[index]
        gold = golds[(question.question_id, key)]
        if not (
            execution.outcome == "ok"
            and gold is not None
            and results_match(gold.rows, execution.rows, gold_order_keys=gold.order_keys)
        ):
            failed.add(question.question_id)
    return {
        question.question_id: ran[question.question_id]._replace(ts=question.question_id not in failed)
        for question in runs
        if ran[question.question_id].ea
    }


def _prepare(
    prediction: str | None, dialect: str, schema: _Schema | None, limits: Limits
) -> str | tuple[str, str | None]:
    """The prediction as SQLite to run, or (outcome, error) when a check of its text alone says there is
    nothing to run. Whatever goes wrong here costs this prediction only, never the submission."""
    if prediction is None or not prediction.strip():
        return ("not_submitted", None)
    refused = refusal(prediction, limits)
    if refused is not None:
        return (refused.outcome, refused.error)
    try:
        sql = to_sqlite(
            prediction,
            source=dialect,
            schema=schema.types if schema else None,
            keys=schema.keys if schema else None,
            check_conformance=True,
        )
    except QueryTooComplex as exc:
        return ("resource_limit", str(exc)[:MAX_ERROR_CHARS])
    except ReadsNoTable as exc:
        return ("reads_no_table", str(exc))
    except TranspileError as exc:  # NotConformant too: not written in its dialect, or refused by MySQL
        return ("syntax_error", str(exc)[:MAX_ERROR_CHARS])
    refused = refusal(sql, limits)
    return sql if refused is None else (refused.outcome, refused.error)


def _verdict(
    question: GoldQuestion, execution: Execution, gold: GoldResult | None, *, ran_sql: str | None
) -> QuestionScore:
    """What running the prediction gave, compared with the gold's result; with `ran_sql` (explaining),
    its detail too."""
    qid = question.question_id
    if execution.outcome != "ok" or gold is None:
        detail = _detail(ran_sql, gold, execution=None) if ran_sql is not None else None
        return QuestionScore(
            qid, execution.outcome, False, False, execution.error, static=execution.static, detail=detail
        )
    ea = results_match(gold.rows, execution.rows, gold_order_keys=gold.order_keys)
    ea_strict = results_match_strict(gold.rows, execution.rows)
    detail = _detail(ran_sql, gold, execution=execution) if ran_sql is not None else None
    return QuestionScore(qid, "correct" if ea else "wrong_result", ea, ea_strict, None, detail=detail)


def _detail(sql_run: str | None, gold: GoldResult | None, *, execution: Execution | None) -> QuestionDetail:
    gold_rows = gold.rows if gold is not None else ()
    ran = execution is not None and execution.outcome == "ok"
    return QuestionDetail(
        sql_run=sql_run,
        columns=execution.columns if execution is not None else (),
        rows=execution.rows[:DETAIL_ROWS] if execution is not None else (),
        row_count=len(execution.rows) if execution is not None and ran else None,
        gold_rows=gold_rows[:DETAIL_ROWS],
        gold_row_count=len(gold_rows),
        difference=(
            difference(gold_rows, execution.rows, gold_order_keys=gold.order_keys)
            if execution is not None and ran and gold is not None
            else None
        ),
    )


def _score_question(
    question: GoldQuestion,
    prepared: Mapping[str, str | tuple[str, str | None]],
    golds: GoldResults,
    ran: Mapping[str, QuestionScore],
    *,
    explain: bool,
) -> QuestionScore:
    qid = question.question_id
    if not question.valid:
        return QuestionScore(qid, EXCLUDED, False, False, "the question is marked invalid")
    gold = golds[(qid, question.db_id)]
    if gold is None:
        logger.warning("the gold query of question %s failed at scoring time", qid)
        return QuestionScore(
            qid, EXCLUDED, False, False, f"the gold query of question {qid} failed at scoring time"
        )
    sql = prepared[qid]
    if isinstance(sql, tuple):
        outcome, error = sql
        detail = _detail(None, gold, execution=None) if explain else None
        return QuestionScore(qid, outcome, False, False, error, static=True, detail=detail)
    return ran[qid]


def _gold_results(
    targets: Sequence[tuple[GoldQuestion, str]],
    database_paths: Mapping[str, Path],
    sandbox: Sandbox,
    gold_cache: GoldCache | None,
    *,
    before_running: Callable[[], None],
) -> GoldResults:
    """The gold result of each (question, database key), from the cache or run (in one batch); None where
    it fails. `before_running` is called first when some must run: the work to do while the child boots."""
    digests = {key: sandbox.database_sha256(database_paths[key]) for key in {key for _, key in targets}}
    results: GoldResults = {}
    to_run: list[tuple[GoldQuestion, str, tuple[str, str, str]]] = []
    for question, db_key in targets:
        key = (
            digests[db_key],
            question.question_id,
            hashlib.sha256(question.sql_sqlite.encode()).hexdigest(),
        )
        if gold_cache is not None and key in gold_cache:
            results[(question.question_id, db_key)] = gold_cache[key]
        else:
            to_run.append((question, db_key, key))
    if to_run:
        before_running()
    executed = run_gold(
        sandbox, [(database_paths[db_key], question.sql_sqlite) for question, db_key, _ in to_run]
    )
    for (question, db_key, key), result in zip(to_run, executed, strict=True):
        results[(question.question_id, db_key)] = result
        if result is not None and gold_cache is not None:
            gold_cache[key] = result
    return results


def run_gold(sandbox: Sandbox, targets: Sequence[tuple[Path, str]]) -> list[GoldResult | None]:
    """The result of each gold query (SQLite) on its database, run in one batch: its rows as the engine
    gives them and, with an ORDER BY, its order keys; None where it fails."""
    plans: list[tuple[str, int] | ValueError | None] = []
    queries = []
    for path, sql in targets:
        try:
            keyed = order_key_query(sql)
        except ValueError as error:
            plans.append(error)
            continue
        plans.append(keyed)
        queries.append(Query(path, sql, budgeted=False))
        if keyed is not None:
            queries.append(Query(path, keyed[0], budgeted=False))
    executions = iter(sandbox.execute_many(queries))
    results: list[GoldResult | None] = []
    for plan in plans:
        if isinstance(plan, ValueError):
            results.append(None)
            continue
        plain = next(executions)
        with_keys = next(executions) if plan is not None else None
        results.append(_gold_result(plain, with_keys, plan))
    return results


def _gold_result(
    plain: Execution, with_keys: Execution | None, keyed: tuple[str, int] | None
) -> GoldResult | None:
    """The gold query's rows and, with an ORDER BY, the order keys from its keyed form; None if it fails.

    The rows come from the gold query itself, in the order the engine returns them, so that EA-strict
    compares with what the authors' rule would; the keyed form may order tied rows differently, but its
    keys, taken in order, are the same sequence.
    """
    if plain.outcome != "ok":
        return None
    order_keys = None
    if keyed is not None and with_keys is not None:
        if with_keys.outcome != "ok" or len(with_keys.rows) != len(plain.rows):
            return None
        order_keys = tuple(split_order_keys(with_keys.rows, keyed[1])[1])
    return GoldResult(plain.rows, order_keys)


class _Schema(NamedTuple):
    """What transpiling a MySQL prediction reads of its database."""

    types: FrozenSchema  # table -> column -> declared type
    keys: Keys  # what ONLY_FULL_GROUP_BY's functional dependence is derived from


@functools.lru_cache(maxsize=64)
def _schema(sha256: str, path: Path) -> _Schema:
    """The schema of the database at `path`, whose content has this sha256: read once per database by a
    process that scores many submissions (a worker), rather than once per submission."""
    uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as connection:
        types = freeze_schema(read_schema(connection))
    return _Schema(types, read_keys(path))
