"""Judging generated predictions twice: by MariaDB, as MySQL would, and by the portal's scorer.

MariaDB: each dump is loaded once into a scratch database (`c12c_*`, dropped afterwards); the gold and
every prediction run there, on one connection per database, and the project's EA rule
(`compare.results_match`, with the gold's ORDER BY keys) says whether the prediction's rows are the gold's.
A prediction MariaDB refuses is wrong.

Portal: `score_predictions` on the SQLite copies, dialect mysql, in batches of at most one prediction per
question, with one gold cache; a prediction is right when its outcome is `correct`.

A `Judged` case agrees when both say the same; a false positive is right for the portal and wrong for
MariaDB, a false negative the reverse. Everything here names cases by question id and rule, never by SQL
or values.

ONLY_FULL_GROUP_BY: MariaDB's default sql_mode lacks it, MySQL 8.0's has it. A case that the portal's
check of it refuses with error 1055 or 1140 is run again on MariaDB with ONLY_FULL_GROUP_BY on (MariaDB's
rule, which has no detection of functional dependence, refuses everything MySQL 8.0's refuses and more):
the test reads that verdict beside the portal's.
"""

from __future__ import annotations

import re
import sqlite3
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from contextlib import ExitStack, closing, suppress
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.scoring.compare import Row, order_key_query, results_match, split_order_keys
from evaluation.scoring.dialect import TranspileError, read_schema, to_sqlite
from evaluation.scoring.full_group_by import Keys, full_group_by_refusal, read_keys
from evaluation.scoring.mysql_dump import build_sqlite
from evaluation.scoring.reference import ReferenceDatabase, ReferenceQueryError, connect
from evaluation.scoring.score import GoldCache, GoldQuestion, score_predictions
from evaluation.scoring.statements import parse_one, split_statements
from evaluation.sources import BenchmarkSource
from tests.differential.generator import Case, generate

AGREE = "agree"
FALSE_POSITIVE = "false_positive"
FALSE_NEGATIVE = "false_negative"

CORRECT = "correct"
WRONG = "wrong"
REFUSED = "refused"

SCRATCH_PREFIX = "c12c_"
STATEMENT_SECONDS = 5  # a near miss may join without its condition; MariaDB gives up as the sandbox does

# The dump's own database statements: the scratch database replaces them (as reference.load_dump does).
_SKIPPED = re.compile(r"(CREATE|DROP)\s+(DATABASE|SCHEMA)\b|USE\b", re.IGNORECASE)


@dataclass(frozen=True)
class Judged:
    case: Case
    portal: str  # the scorer's outcome: correct, wrong_result, syntax_error, ...
    mariadb: str  # CORRECT, WRONG or REFUSED
    portal_error: int | None = None  # the MySQL error number of the portal's refusal, when it gives one
    mariadb_full_group_by: str | None = None  # MariaDB's verdict with ONLY_FULL_GROUP_BY, where asked

    @property
    def classification(self) -> str:
        portal_right = self.portal == "correct"
        if portal_right == (self.mariadb == CORRECT):
            return AGREE
        return FALSE_POSITIVE if portal_right else FALSE_NEGATIVE


@dataclass
class Differential:
    judged: list[Judged]
    runnable: list[str]  # question ids whose gold runs on MariaDB and on the portal
    seconds: dict[str, float] = field(default_factory=dict)
    scratch_databases: tuple[str, ...] = ()  # the run's own, dropped when it ended

    def count(self, classification: str) -> int:
        return sum(1 for j in self.judged if j.classification == classification)

    @property
    def agreement(self) -> float:
        return self.count(AGREE) / len(self.judged) if self.judged else 1.0

    def by_rule(self) -> dict[str, Counter[str]]:
        rules: dict[str, Counter[str]] = defaultdict(Counter)
        for judged in self.judged:
            rules[judged.case.rule][judged.classification] += 1
        return dict(sorted(rules.items()))

    def disagreements(self) -> list[Judged]:
        return [j for j in self.judged if j.classification != AGREE]


@dataclass(frozen=True)
class PortalCopies:
    database_paths: dict[str, Path]
    questions: dict[str, GoldQuestion]  # question id -> the gold as the portal stores it


def build_portal_copies(source: BenchmarkSource, directory: Path) -> PortalCopies:
    """The SQLite copies and the transpiled gold, as an import stores them (see benchmarks/score_speed)."""
    paths, questions = {}, {}
    for database in source.databases:
        paths[database.slug] = directory / f"{database.slug}.sqlite"
        build_sqlite(database.dump, paths[database.slug], source=database.dialect)
    for database in source.databases:
        with closing(sqlite3.connect(paths[database.slug])) as connection:
            schema = read_schema(connection)
        for item in source.questions:
            if item.db_slug != database.slug:
                continue
            gold = ""
            with suppress(TranspileError):
                gold = to_sqlite(item.gold_sql, schema=schema)
            questions[item.public_id] = GoldQuestion(
                item.public_id, item.db_slug, "unknown", gold, valid=bool(gold)
            )
    return PortalCopies(paths, questions)


def load_scratch(url: str, dump: str) -> ReferenceDatabase:
    """The dump in a new scratch database named c12c_*, on its own connection (dropped with the object)."""
    conn = connect(url)
    database = ReferenceDatabase(conn, f"{SCRATCH_PREFIX}{uuid.uuid4().hex[:16]}")
    try:
        with conn.cursor() as cursor:
            cursor.execute(
                f"CREATE DATABASE `{database.name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
            )
            cursor.execute(f"USE `{database.name}`")
            for statement in split_statements(dump, source="mysql"):
                if not _SKIPPED.match(statement.text):
                    cursor.execute(statement.text)
            cursor.execute(f"SET SESSION max_statement_time = {STATEMENT_SECONDS}")
    except BaseException:
        database.drop()
        raise
    return database


@dataclass(frozen=True)
class _Gold:
    rows: list[Row]
    order_keys: list[Row] | None


def gold_on_mariadb(reference: ReferenceDatabase, gold_sql: str) -> _Gold | None:
    """The gold's rows and, when it orders, their keys from one run of the keyed query (compare.py)."""
    try:
        _, rows = reference.run(gold_sql)
        keyed = order_key_query(gold_sql, dialect="mysql")
        if keyed is None:
            return _Gold(rows, None)
        _, keyed_rows = reference.run(keyed[0])
    except ReferenceQueryError:
        return None
    except ValueError:
        return _Gold(*split_order_keys(rows, 0))
    return _Gold(*split_order_keys(keyed_rows, keyed[1]))


def mariadb_verdict(reference: ReferenceDatabase, gold: _Gold, sql: str) -> str:
    try:
        _, rows = reference.run(sql)
    except ReferenceQueryError:
        return REFUSED
    return CORRECT if results_match(gold.rows, rows, gold_order_keys=gold.order_keys) else WRONG


def one_per_question(question_ids: Sequence[str]) -> list[dict[str, int]]:
    """Batches of indices into `question_ids`, at most one per question each (question id -> index): one
    submission can hold a single prediction per question."""
    batches: list[dict[str, int]] = []
    seen: Counter[str] = Counter()
    for index, question_id in enumerate(question_ids):
        round_ = seen[question_id]
        seen[question_id] += 1
        if round_ == len(batches):
            batches.append({})
        batches[round_][question_id] = index
    return batches


# The portal's refusals in MySQL's words: "ERROR 1055 (42000): ..."
_MYSQL_ERROR = re.compile(r"ERROR (\d+) \(")
# ONLY_FULL_GROUP_BY's errors for a column neither grouped nor functionally dependent (MySQL's own and
# MariaDB's rule raise them).
FULL_GROUP_BY_ERRORS = (1055, 1140)


def judge_on_portal(copies: PortalCopies, cases: Sequence[Case]) -> list[tuple[str, int | None]]:
    """The scorer's outcome for every case, with the MySQL error number its refusal carries, scored in
    batches of at most one case per question."""
    batches = one_per_question([case.question_id for case in cases])
    outcomes: list[tuple[str, int | None]] = [("", None)] * len(cases)
    cache: GoldCache = {}
    for batch in batches:
        questions = [copies.questions[qid] for qid in batch]
        report = score_predictions(
            questions=questions,
            predictions={qid: cases[index].sql for qid, index in batch.items()},
            database_paths={q.db_id: copies.database_paths[q.db_id] for q in questions},
            dialect="mysql",
            gold_cache=cache,
        )
        for score in report.questions:
            error = _MYSQL_ERROR.match(score.error or "")
            outcomes[batch[score.question_id]] = (score.outcome, int(error.group(1)) if error else None)
    return outcomes


def full_group_by_error(sql: str, keys: Keys) -> int | None:
    """The MySQL error number of ONLY_FULL_GROUP_BY's refusal of `sql`, as the scorer decides it."""
    try:
        refusal = full_group_by_refusal(parse_one(sql, source="mysql")[0], keys)
    except TranspileError:
        return None
    return refusal.code if refusal is not None else None


def with_only_full_group_by(reference: ReferenceDatabase, gold: _Gold, sql: str) -> str:
    """MariaDB's verdict on `sql` with ONLY_FULL_GROUP_BY added to its sql_mode, for this statement only."""
    [(mode,)] = reference.run("SELECT @@SESSION.sql_mode")[1]
    statement = sql.strip().rstrip(";")
    return mariadb_verdict(
        reference, gold, f"SET STATEMENT sql_mode = '{mode},ONLY_FULL_GROUP_BY' FOR {statement}"
    )


def run_differential(source: BenchmarkSource, *, reference_url: str, directory: Path) -> Differential:
    """Generate the cases of every runnable gold query and judge each on MariaDB and on the portal."""
    seconds: dict[str, float] = {}
    started = time.perf_counter()
    copies = build_portal_copies(source, directory)
    seconds["sqlite copies"] = time.perf_counter() - started
    cases: list[Case] = []
    verdicts: list[tuple[str, str | None]] = []
    runnable: list[str] = []
    with ExitStack() as stack:
        started = time.perf_counter()
        references = {
            database.slug: stack.enter_context(load_scratch(reference_url, database.dump))
            for database in source.databases
            if database.dialect == "mysql"
        }
        seconds["mariadb load"] = time.perf_counter() - started
        started = time.perf_counter()
        keys = {slug: read_keys(path) for slug, path in copies.database_paths.items()}
        for item in source.questions:
            reference = references.get(item.db_slug)
            if reference is None or not copies.questions[item.public_id].valid:
                continue
            gold = gold_on_mariadb(reference, item.gold_sql)
            if gold is None:
                continue
            runnable.append(item.public_id)
            for case in generate(item.public_id, item.gold_sql):
                cases.append(case)
                refused = full_group_by_error(case.sql, keys[item.db_slug]) in FULL_GROUP_BY_ERRORS
                verdicts.append(
                    (
                        mariadb_verdict(reference, gold, case.sql),
                        with_only_full_group_by(reference, gold, case.sql) if refused else None,
                    )
                )
        seconds["mariadb judging"] = time.perf_counter() - started
    started = time.perf_counter()
    outcomes = judge_on_portal(copies, cases)
    seconds["portal scoring"] = time.perf_counter() - started
    judged = [
        Judged(case, outcome, verdict, error, strict)
        for case, (outcome, error), (verdict, strict) in zip(cases, outcomes, verdicts, strict=True)
    ]
    scratch = tuple(reference.name for reference in references.values())
    return Differential(judged, runnable, seconds, scratch)


def summary_lines(result: Differential, *, only: Iterable[Judged] | None = None) -> list[str]:
    """The figures and the disagreements as text: question ids, rules and outcomes, never SQL or values."""
    judged = result.judged
    lines = [
        f"runnable gold queries: {len(result.runnable)}; cases: {len(judged)}",
        f"agreement: {result.count(AGREE)}/{len(judged)} = {100 * result.agreement:.2f} %; "
        f"false positives {result.count(FALSE_POSITIVE)}, false negatives {result.count(FALSE_NEGATIVE)}",
        "",
        f"{'rule':<28} {'family':<12} {'cases':>6} {'agree %':>8} {'FP':>4} {'FN':>4}",
    ]
    families = {j.case.rule: j.case.family for j in judged}
    for rule, counts in result.by_rule().items():
        total = sum(counts.values())
        lines.append(
            f"{rule:<28} {families[rule]:<12} {total:>6} {100 * counts[AGREE] / total:>8.1f} "
            f"{counts[FALSE_POSITIVE]:>4} {counts[FALSE_NEGATIVE]:>4}"
        )
    listed = list(only) if only is not None else result.disagreements()
    lines += ["", f"disagreements ({len(listed)}): question id, rule, portal outcome, MariaDB verdict"]
    lines += [f"  {j.case.question_id}  {j.case.rule}  {j.portal}  {j.mariadb}" for j in listed]
    return lines
