"""Does TS-EA catch the wrong queries EA lets through, and never reject a right one? The figures.

    .venv/bin/python -m benchmarks.ts_proof [--archive PATH] [--reference-url URL]

On the Termite archive when it is present (TERMITE_ARCHIVE, else ../shared/termite/Termite.zip), else on
the project's demo benchmark. The benchmark is prepared as an import prepares it, test suites included
(40 candidates, seed "termite", checked on MariaDB). Predictions come from three sources:

- the near misses the distillation itself uses (evaluation/scoring/near_misses.py): the suites were chosen
  to tell these apart, so they show what the suites can do;
- held-out near misses, from another generator (tests/differential/generator.py, family near_miss: one
  mutation at the first site of its rule), never seen by the distillation;
- equivalent rewrites from that generator (family equivalent: aliases, IN as OR, BETWEEN as a range,
  joins as commas, ...).

MariaDB is the judge (TERMITE_REFERENCE_MYSQL_URL, else mysql://root@127.0.0.1:3306/; scratch databases
c12c_*, dropped at the end): each prediction runs on the original data and on every neighbour database of
its question's suite, against the gold on the same data, under the EA rule. A prediction is wrong when
MariaDB finds it wrong, or refuses it, on any of them; right when it returns the gold's rows on all. The
portal scores every prediction (EA and TS-EA, scorer as in production). Prints counts per source and per
rule: never SQL, never values.
"""

from __future__ import annotations

import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

from benchmarks.differential import archive_and_reference
from benchmarks.score_speed import load_source
from evaluation.prepared import PreparedBenchmark
from evaluation.scoring.dialect import to_sqlite
from evaluation.scoring.engine_choice import bare_columns_vary, order_dependence
from evaluation.scoring.near_misses import near_misses
from evaluation.scoring.sandbox import DEFAULT_LIMITS, Sandbox
from evaluation.scoring.score import GoldCache, GoldQuestion, score_predictions
from evaluation.validation import prepare_benchmark
from tests.differential.generator import EQUIVALENT, NEAR_MISS, generate
from tests.differential.harness import (
    CORRECT,
    gold_on_mariadb,
    load_scratch,
    mariadb_verdict,
    one_per_question,
)

SUITE_CANDIDATES = 40
SOURCES = ("distillation's near misses", "held-out near misses", "equivalent rewrites")


@dataclass(frozen=True)
class Prediction:
    question_id: str
    source: str
    rule: str
    sql: str


@dataclass(frozen=True)
class Verdicts:
    prediction: Prediction
    mariadb_right: bool  # the gold's rows on the original and on every neighbour of the suite
    mariadb_right_on_original: bool
    ea: bool
    ts: bool
    # For a right prediction TS-EA rejects: its rows are the engine's choice on some database of the suite
    # (a LIMIT over ties, a loose GROUP BY), so MariaDB's agreeing was luck.
    engine_chosen: bool = False


def main() -> None:
    args = archive_and_reference(__doc__.splitlines()[0])
    started = time.perf_counter()
    name, source = load_source(args.archive)
    with tempfile.TemporaryDirectory(prefix="ts-proof-") as directory:
        prepared = prepare_benchmark(
            source,
            workdir=Path(directory),
            reference_url=args.reference_url,
            suite_candidates=SUITE_CANDIDATES,
            suite_seed="termite",
        )
        prepared_seconds = time.perf_counter() - started
        verdicts = judge(prepared, args.reference_url)
    print(f"benchmark: {name}; prepared with test suites, checked on MariaDB, in {prepared_seconds:.1f} s")
    print("\n".join(summary_lines(verdicts)))
    print(f"\ntime: {time.perf_counter() - started:.1f} s")


def predictions_of(prepared: PreparedBenchmark) -> list[Prediction]:
    schemas = {db.source.slug: db.column_types for db in prepared.databases}
    found = []
    for question in prepared.questions:
        if not question.is_valid:
            continue
        qid, gold = question.source.public_id, question.source.gold_sql
        found += [
            Prediction(qid, SOURCES[0], miss.rule, miss.sql)
            for miss in near_misses(gold, schema=schemas[question.source.db_slug])
        ]
        for case in generate(qid, gold):
            if case.family in (NEAR_MISS, EQUIVALENT):
                held_out = SOURCES[1] if case.family == NEAR_MISS else SOURCES[2]
                found.append(Prediction(qid, held_out, case.rule, case.sql))
    return found


def judge(prepared: PreparedBenchmark, reference_url: str) -> list[Verdicts]:
    predictions = predictions_of(prepared)
    suites = {
        qid: entry.neighbours
        for db in prepared.databases
        if db.suite is not None
        for qid, entry in db.suite.questions.items()
    }
    questions = {q.source.public_id: q for q in prepared.questions if q.is_valid}
    mariadb: dict[int, tuple[bool, bool]] = {}
    with ExitStack() as stack:
        for db in prepared.databases:
            if db.source.dialect != "mysql":
                continue
            neighbours = db.suite.neighbours if db.suite is not None else []
            engines = [stack.enter_context(load_scratch(reference_url, db.source.dump))]
            engines += [stack.enter_context(load_scratch(reference_url, n.dump)) for n in neighbours]
            golds = {}  # (question id, engine) -> the gold on that engine
            for index, prediction in enumerate(predictions):
                question = questions[prediction.question_id]
                if question.source.db_slug != db.source.slug:
                    continue
                right = []
                for number in (0, *(position + 1 for position in suites.get(prediction.question_id, []))):
                    key = (prediction.question_id, number)
                    if key not in golds:
                        golds[key] = gold_on_mariadb(engines[number], question.source.gold_sql)
                    gold = golds[key]
                    verdict = mariadb_verdict(engines[number], gold, prediction.sql) if gold else None
                    right.append(verdict == CORRECT)
                mariadb[index] = (all(right), right[0])
    portal = portal_verdicts(prepared, predictions, suites)
    verdicts = [
        Verdicts(prediction, *mariadb[index], *portal[index])
        for index, prediction in enumerate(predictions)
        if index in mariadb
    ]
    return [
        replace(v, engine_chosen=engine_chosen(prepared, v.prediction, suites))
        if v.mariadb_right and v.ea and not v.ts
        else v
        for v in verdicts
    ]


def engine_chosen(prepared: PreparedBenchmark, prediction: Prediction, suites: dict[str, list[int]]) -> bool:
    """Whether the prediction's rows are the engine's choice on its database or a neighbour of its suite."""
    question = next(q for q in prepared.questions if q.source.public_id == prediction.question_id)
    db = next(db for db in prepared.databases if db.source.slug == question.source.db_slug)
    sql = to_sqlite(prediction.sql, schema=db.column_types)
    paths = [db.sqlite_file, *(db.suite.neighbours[p].path for p in suites[prediction.question_id])]
    with Sandbox(DEFAULT_LIMITS) as sandbox:
        return any(
            order_dependence(sandbox, path, sql) or bare_columns_vary(sandbox, path, sql) for path in paths
        )


def portal_verdicts(
    prepared: PreparedBenchmark, predictions: Sequence[Prediction], suites: dict[str, list[int]]
) -> list[tuple[bool, bool]]:
    """EA and TS-EA of every prediction, scored in batches of at most one prediction per question."""
    paths = {db.source.slug: db.sqlite_file for db in prepared.databases}
    for db in prepared.databases:
        for position, neighbour in enumerate(db.suite.neighbours if db.suite else []):
            paths[f"{db.source.slug}~{position}"] = neighbour.path
    golds = {
        q.source.public_id: GoldQuestion(
            q.source.public_id,
            q.source.db_slug,
            q.hardness,
            q.gold_sqlite,
            suite=tuple(f"{q.source.db_slug}~{p}" for p in suites.get(q.source.public_id, [])),
        )
        for q in prepared.questions
        if q.is_valid
    }
    batches = one_per_question([prediction.question_id for prediction in predictions])
    verdicts = [(False, False)] * len(predictions)
    cache: GoldCache = {}
    for batch in batches:
        report = score_predictions(
            questions=[golds[qid] for qid in batch],
            predictions={qid: predictions[index].sql for qid, index in batch.items()},
            database_paths=paths,
            gold_cache=cache,
        )
        for score in report.questions:
            verdicts[batch[score.question_id]] = (score.ea, score.ts)
    return verdicts


def summary_lines(verdicts: Sequence[Verdicts]) -> list[str]:
    lines = []
    for source in SOURCES:
        judged = [v for v in verdicts if v.prediction.source == source]
        wrong = [v for v in judged if not v.mariadb_right]
        let_through = [v for v in wrong if v.ea]
        caught = [v for v in let_through if not v.ts]
        right = [v for v in judged if v.mariadb_right]
        rejected = [v for v in right if v.ea and not v.ts]
        lines += [
            "",
            f"{source}: {len(judged)} predictions; MariaDB: {len(right)} right on the original and every "
            f"neighbour, {len(wrong)} wrong somewhere",
            f"  wrong ones EA accepts: {len(let_through)}; of these TS-EA rejects {len(caught)}"
            + (f" ({100 * len(caught) / len(let_through):.1f} %)" if let_through else ""),
            f"  right ones (checked equivalent on every database) that EA accepts and TS-EA rejects: "
            f"{len(rejected)}",
        ]
        by_rule: dict[str, Counter[str]] = {}
        for v in let_through:
            by_rule.setdefault(v.prediction.rule, Counter())["caught" if not v.ts else "missed"] += 1
        if by_rule:
            lines.append("  by rule, wrong ones EA accepts: caught by TS-EA / missed")
            lines += [
                f"    {rule:<24} {counts['caught']:>4} / {counts['missed']:<4}"
                for rule, counts in sorted(by_rule.items())
            ]
        lines += [
            f"  rejected although MariaDB found it right: {v.prediction.question_id} {v.prediction.rule}"
            + (
                " (its rows are the engine's choice: LIMIT over ties or loose GROUP BY)"
                if v.engine_chosen
                else ""
            )
            for v in rejected
        ]
    return lines


if __name__ == "__main__":
    main()
