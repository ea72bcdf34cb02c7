"""Building and checking a benchmark before it is stored: SQLite copies, hardness, gold validation.

Plain Python over `evaluation.sources` values and files in a work folder; the services store the result.
Findings name question ids, tables and causes, never gold SQL or gold values: the report is shown to
admins and printed by commands, and it must be safe to paste into an issue.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import sqlglot
from sqlglot import exp

from evaluation.distillation import ScorableGold, distil_suite, suite_seed_of
from evaluation.prepared import HIDDEN_SCHEMA, Finding, PreparedBenchmark, PreparedDatabase, PreparedQuestion
from evaluation.reference_check import check_against_reference
from evaluation.schemas import authors_schema, scored_schema
from evaluation.scoring import dialect, hardness, mysql_dump
from evaluation.scoring.engine_choice import order_dependence
from evaluation.scoring.full_group_by import full_group_by_refusal, read_keys
from evaluation.scoring.sandbox import Limits, Sandbox
from evaluation.scoring.schema_shape import column_names, differences
from evaluation.scoring.statements import TranspileError, parse_one
from evaluation.sources import BenchmarkSource, DatabaseSource, QuestionSource, SourceError

# Told how far a build got, as a percentage of the whole, and what it does now (a job shows it to staff).
Progress = Callable[[int, str], None]


def no_progress(percent: int, message: str) -> None:
    """Progress nobody watches."""


# How far into a build each of its steps begins; the test suite takes most of the time.
_BUILDING, _CHECKING, _REFERENCE, _SUITES, _SUITES_END = 0, 15, 30, 40, 90

# Gold is trusted more than predictions, but it is still run in the sandbox, with room to spare.
VALIDATION_LIMITS = Limits(query_seconds=10.0, total_seconds=3600.0)


def prepare_benchmark(
    source: BenchmarkSource,
    *,
    workdir: Path,
    reference_url: str | None = None,
    suite_candidates: int = 0,
    suite_seed: str = "",
    progress: Progress = no_progress,
) -> PreparedBenchmark:
    """Build every database, check every gold query, then distil each database's test suite from
    `suite_candidates` neighbours (none when 0), telling `progress` each step. Raises SourceError on
    unusable input."""
    known = {db.slug for db in source.databases}
    for given in source.questions:
        if given.db_slug not in known:
            raise SourceError(f"question {given.public_id}: no database {given.db_slug!r}")
    databases = []
    for number, given_database in enumerate(source.databases):
        progress(
            _share(_BUILDING, _CHECKING, number, len(source.databases)),
            f"building {given_database.slug} from its dump",
        )
        databases.append(build_database(given_database, workdir))
    by_slug = {db.source.slug: db for db in databases}
    progress(_CHECKING, f"checking {len(source.questions)} gold queries on SQLite")
    questions = [transpile_question(q, by_slug[q.db_slug]) for q in source.questions]
    with Sandbox(VALIDATION_LIMITS) as sandbox:
        for question in questions:
            if question.is_valid:
                _check_on_sqlite(question, by_slug[question.source.db_slug], sandbox)
    for db in databases:
        _check_schema_shown(db, [q for q in questions if q.source.db_slug == db.source.slug])
    _check_duplicates(questions)
    if reference_url:
        progress(_REFERENCE, "checking the tables and the gold queries against MariaDB")
        for db in databases:
            check_against_reference(
                db, [q for q in questions if q.source.db_slug == db.source.slug], reference_url=reference_url
            )
    for number, db in enumerate(databases):
        start = _share(_SUITES, _SUITES_END, number, len(databases))
        end = _share(_SUITES, _SUITES_END, number + 1, len(databases))
        if suite_candidates > 0:
            progress(start, f"building the test suite of {db.source.slug} from {suite_candidates} candidates")
        db.suite = distil_suite(
            slug=db.source.slug,
            dump=db.source.dump,
            dialect=db.source.dialect,
            sqlite_file=db.sqlite_file,
            column_types=db.column_types,
            golds=[
                ScorableGold(q.source.public_id, q.source.gold_sql, q.gold_sqlite)
                for q in questions
                if q.source.db_slug == db.source.slug and q.is_valid
            ],
            workdir=workdir,
            candidates=suite_candidates,
            seed=suite_seed_of(suite_seed, db.sqlite_sha256),
            reference_url=reference_url,
            on_candidate=_candidates_progress(progress, db.source.slug, start, end),
        )
    return PreparedBenchmark(databases=databases, questions=questions, reference_checked=bool(reference_url))


def _share(start: int, end: int, done: int, total: int) -> int:
    return start + (end - start) * done // max(total, 1)


def _candidates_progress(progress: Progress, slug: str, start: int, end: int) -> Callable[[int, int], None]:
    """Steps of a suite's build: its candidates built, by quarters (so that the steps stay few enough to
    read), over two thirds of its share; then every query run on each candidate, over the last third."""

    def built(done: int, total: int) -> None:
        if done == total:
            progress(
                _share(start, end, 2, 3),
                f"test suite of {slug}: the gold queries and their near misses run on each candidate",
            )
        elif done % max(1, total // 4) == 0:
            progress(
                _share(start, end, 2 * done, 3 * total),
                f"test suite of {slug}: {done} of {total} candidates built",
            )

    return built


def build_database(source: DatabaseSource, workdir: Path) -> PreparedDatabase:
    target = workdir / f"{source.slug}.sqlite3"
    try:
        built = mysql_dump.build_sqlite(source.dump, target, source=source.dialect)
    except mysql_dump.DumpError as error:
        raise SourceError(f"database {source.slug}: {error}") from None
    database = PreparedDatabase(
        source=source,
        sqlite_file=target,
        sqlite_sha256=hashlib.sha256(target.read_bytes()).hexdigest(),
        scored_schema=scored_schema(source, target),
        authors_schema=authors_schema(source),
        column_types=built.schema,
        keys=read_keys(target),
        tables={
            name: {"columns": [column.name for column in info.columns], "rows": info.row_count}
            for name, info in built.tables.items()
        },
    )
    database.findings.extend(_copy_findings(built))
    if source.schema_dump and database.authors_schema is None:
        database.findings.append(
            Finding(
                "authors_schema_unbuildable",
                "the authors' schema-only dump cannot be built; it is not offered",
            )
        )
    return database


def _copy_findings(built: mysql_dump.BuildReport) -> list[Finding]:
    """What the dump holds besides tables, named, and what the copy keeps otherwise than MySQL would."""
    findings = [
        Finding(
            "routine_left_out",
            f"{routine.kind.lower()} {routine.name}: left out of the copy (it changes nothing until called)",
        )
        for routine in built.routines
    ]
    findings.extend(
        Finding("view_translated", f"view {view.name}: a SQLite view with MySQL's meaning")
        for view in built.views
    )
    for trigger in built.triggers:
        what = f"trigger {trigger.name} ({trigger.timing} {trigger.event} ON {trigger.table})"
        why = built.unapplied_triggers.get(trigger.name.lower())
        findings.append(
            Finding("trigger_applied", f"{what}: a SQLite trigger of the same effect")
            if why is None
            else Finding(
                "trigger_not_applied", f"{what}: fires for no row of the dump, and cannot be applied ({why})"
            )
        )
    findings.extend(Finding("copy_note", note) for note in built.notes)
    return findings


def transpile_question(source: QuestionSource, database: PreparedDatabase) -> PreparedQuestion:
    try:
        level = hardness.hardness(source.gold_sql, source=database.source.dialect)
    except ValueError:
        level = "extra"
        findings = [Finding("gold_unparsable", "sqlglot cannot parse the gold; hardness set to extra")]
    else:
        findings = []
    try:
        gold_sqlite = dialect.to_sqlite(
            source.gold_sql, source=database.source.dialect, schema=database.column_types
        )
    except dialect.TranspileError as error:
        # The transpiler's message may quote the query; findings are shown and printed, so name the line only.
        findings.append(Finding("gold_untranspilable", f"cannot be translated to SQLite ({_where(error)})"))
        gold_sqlite = ""
    else:
        findings.extend(_full_group_by(source.gold_sql, database))
    return PreparedQuestion(source=source, hardness=level, gold_sqlite=gold_sqlite, findings=findings)


def _full_group_by(gold_sql: str, database: PreparedDatabase) -> list[Finding]:
    """MySQL 8.0 refuses gold that its default sql_mode's ONLY_FULL_GROUP_BY refuses: it cannot be scored.
    The finding names MySQL's error number and clause, not the column (a name the gold writes)."""
    if database.source.dialect != "mysql":
        return []  # SQLite's GROUP BY is loose by design: a SQLite gold means what SQLite does
    try:
        tree, _ = parse_one(gold_sql, source="mysql")
    except TranspileError:
        return []
    refusal = full_group_by_refusal(tree, database.keys)
    if refusal is None:
        return []
    return [
        Finding(
            "gold_loose_group_by",
            f"MySQL 8.0 refuses it (ERROR {refusal.code}: ONLY_FULL_GROUP_BY, {refusal.place}); excluded",
        )
    ]


def _check_on_sqlite(question: PreparedQuestion, database: PreparedDatabase, sandbox: Sandbox) -> None:
    execution = sandbox.execute(database.sqlite_file, question.gold_sqlite, budgeted=False)
    if execution.outcome != "ok":
        question.findings.append(
            Finding("gold_fails", f"fails on SQLite ({execution.outcome.replace('_', ' ')})")
        )
        return
    if not execution.rows:
        question.findings.append(Finding("gold_empty", "returns no rows, so any empty prediction scores"))
    problem = order_dependence(sandbox, database.sqlite_file, question.gold_sqlite)
    if problem:
        question.findings.append(Finding("gold_order_dependent", problem))
    question.findings.extend(_suspicious_expressions(question.source.gold_sql, database.source.dialect))


def _suspicious_expressions(gold_sql: str, source: str) -> list[Finding]:
    """Gold that runs but cannot mean what a question asks: constants compared, NULL compared with =."""
    try:
        tree = sqlglot.parse_one(gold_sql, read=source)
    except sqlglot.errors.SqlglotError:
        return []
    findings = []
    comparisons = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
    for node in tree.find_all(*comparisons):
        sides = (node.left, node.right)
        if any(isinstance(side, exp.Null) for side in sides):
            findings.append(
                Finding("gold_null_comparison", "compares with NULL using = or !=, which is never true")
            )
        elif all(isinstance(side, exp.Literal) for side in sides):
            findings.append(
                Finding(
                    "gold_constant_comparison",
                    "compares two constants (a quoted name where a column was meant?)",
                )
            )
    for aggregate in tree.find_all(exp.AggFunc):
        if isinstance(aggregate.this, exp.Literal) and aggregate.this.is_string:
            findings.append(Finding("gold_aggregates_a_string", "aggregates a quoted string, not a column"))
    return list(dict.fromkeys(findings))


def _where(error: Exception) -> str:
    first = str(error).split(":", 1)[0]
    return first if first.startswith("line ") else "the transpiler rejects it"


def _check_schema_shown(database: PreparedDatabase, questions: list[PreparedQuestion]) -> None:
    """Every name a gold query uses must be in the schema participants see (the scored database's, by
    default); the authors' schema-only dump is compared with it, and the gold it leaves unanswerable noted."""
    shown = column_names(database.scored_schema.shape)
    for question in questions:
        if not question.is_valid:
            continue  # gold that does not run is reported as such
        missing = _missing_names(question, shown, database.source.dialect)
        if missing:
            question.findings.append(
                Finding(HIDDEN_SCHEMA, f"uses what the participants' schema lacks: {', '.join(missing)}")
            )
    if database.authors_schema is None:
        return
    database.schema_differences = differences(database.authors_schema.shape, database.scored_schema.shape)
    if database.schema_differences:
        database.findings.append(
            Finding(
                "schema_mismatch",
                f"the authors' schema-only dump differs from the dump the gold runs on in "
                f"{len(database.schema_differences)} ways; participants see the scored database's schema",
            )
        )
    authors = column_names(database.authors_schema.shape)
    for question in questions:
        missing = _missing_names(question, authors, database.source.dialect)
        if missing:
            database.authors_schema_gaps[question.source.public_id] = missing


def _missing_names(question: PreparedQuestion, shown: dict[str, set[str]], dialect: str) -> list[str]:
    try:
        return mysql_dump.missing_identifiers(question.source.gold_sql, shown, source=dialect)
    except TranspileError:
        return []  # gold that cannot be read is reported as such (gold_unparsable, gold_untranspilable)


def _check_duplicates(questions: list[PreparedQuestion]) -> None:
    first_seen: dict[tuple[str, str], str] = {}
    for question in questions:
        if not question.gold_sqlite:
            continue
        key = (question.source.db_slug, " ".join(question.gold_sqlite.lower().split()))
        if key in first_seen:
            question.findings.append(Finding("gold_duplicate", f"same gold as {first_seen[key]}"))
        else:
            first_seen[key] = question.source.public_id
