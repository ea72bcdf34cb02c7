"""Test suites: the few neighbour databases of a database that tell each gold query from its near misses.

Execution accuracy on one database accepts a query that returns the gold's rows on that data only (a `>=`
turned `>` passes when no row holds the boundary value). Test-suite accuracy (Zhong, Yu and Klein,
"Semantic Evaluation for Text-to-SQL with Distilled Test Suites", EMNLP 2020) asks for the gold's rows on
a suite of neighbour databases too. `build_suite` makes the suite of one database, as the paper distils
its own:

1. generate `candidates` neighbours (`neighbours.NeighbourSource`: the database read once, from a sample of
   each large table sized to whether a gold reads it; seeded, so the same inputs give the same bytes) and
   build each through the dump converter, like the original copy;
2. run every question's gold and its near misses (`near_misses.near_misses`, transpiled to SQLite by the
   caller) on the original and on every candidate; a near miss is told apart where its rows differ from
   the gold's under the EA rule (or it fails);
3. keep at most `keep` candidates, greedily: each adds the most (question, near miss) pairs that neither
   the original nor the candidates kept before tell apart; ties go to the earlier candidate;
4. a question's suite is the kept neighbours on which its gold runs and returns rows (a gold with no rows
   on a neighbour would accept any empty prediction there). `check_on_reference` then drops a neighbour
   from a question's suite where MariaDB answers the gold otherwise than the SQLite copy.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path

import pymysql
from sqlglot import exp

from evaluation.scoring import fidelity
from evaluation.scoring.compare import results_match
from evaluation.scoring.engine_choice import bare_columns_vary, order_dependence
from evaluation.scoring.mysql_dump import DumpError, build_sqlite, schema_text
from evaluation.scoring.neighbours import NeighbourSource
from evaluation.scoring.reference import load_dump
from evaluation.scoring.sandbox import Execution, Limits, Query, Sandbox
from evaluation.scoring.score import GoldResult, run_gold
from evaluation.scoring.statements import TranspileError, parse_one

MAX_SUITE = 8
CANDIDATES = 40


@dataclass(frozen=True)
class SuiteQuestion:
    question_id: str
    gold: str  # as written, in the database's dialect (for the reference engine)
    gold_sqlite: str
    near_misses: tuple[str, ...]  # transpiled to SQLite


@dataclass(frozen=True)
class Neighbour:
    seed: str
    dump: str  # a MySQL dump: the original's schema text and generated rows
    path: Path  # its SQLite copy
    sha256: str


@dataclass
class QuestionSuite:
    near_misses: int
    told_apart_by_original: set[int]  # indices of the near misses the original database tells apart
    told_apart_by: dict[int, set[int]]  # neighbour position -> the near misses it tells apart
    dropped: list[tuple[int, str]] = field(default_factory=list)  # (position, why)

    @property
    def neighbours(self) -> list[int]:
        """Positions in BuiltSuite.neighbours of the databases of this question's suite."""
        return sorted(self.told_apart_by)

    @property
    def told_apart_by_suite(self) -> int:
        """How many near misses the original and the suite together tell apart."""
        return len(self.told_apart_by_original.union(*self.told_apart_by.values()))


@dataclass
class BuiltSuite:
    neighbours: list[Neighbour]
    questions: dict[str, QuestionSuite]
    candidates: int
    unbuildable: int
    seconds: float


def build_suite(
    *,
    original: Path,
    dump: str,
    questions: Sequence[SuiteQuestion],
    literals: Mapping[str, Collection[object]],
    workdir: Path,
    seed: str,
    source: str = "mysql",
    candidates: int = CANDIDATES,
    keep: int = MAX_SUITE,
    limits: Limits,
    on_candidate: Callable[[int, int], None] | None = None,
) -> BuiltSuite:
    """The suite of the database built at `original` from `dump`; its files are written into `workdir`.
    `on_candidate` is told after each candidate how many are done, of how many."""
    started = time.perf_counter()
    try:
        drawn_from = NeighbourSource(
            original=original,
            schema_text=schema_text(dump, source=source),
            literals=literals,
            source=source,
            read_tables=_tables_read([question.gold for question in questions], source),
            sample_seed=seed,
        )
    except ValueError:
        built = []  # a schema text the generator cannot read: no candidate builds
    else:
        built = _build_candidates(drawn_from, seed, candidates, workdir, source, on_candidate)
    with Sandbox(limits) as sandbox:
        on_original = _told_apart(sandbox, original, questions)
        verdicts = [_told_apart(sandbox, candidate.path, questions) for candidate in built]
    chosen = _distil(questions, on_original, verdicts, keep)
    suites = {}
    for question in questions:
        qid = question.question_id
        usable = {p: verdicts[c][qid] for p, c in enumerate(chosen)}
        suites[qid] = QuestionSuite(
            near_misses=len(question.near_misses),
            told_apart_by_original=on_original.get(qid) or set(),
            told_apart_by={p: told for p, told in usable.items() if told is not None},
            dropped=[(p, _UNUSABLE) for p, told in usable.items() if told is None],
        )
    return BuiltSuite(
        neighbours=[built[c] for c in chosen],
        questions=suites,
        candidates=candidates,
        unbuildable=candidates - len(built),
        seconds=time.perf_counter() - started,
    )


def _tables_read(golds: Sequence[str], source: str) -> set[str]:
    """The tables the gold queries name, in lower case (a gold that cannot be read names none)."""
    names = set()
    for gold in golds:
        try:
            tree, _ = parse_one(gold, source=source)
        except TranspileError:
            continue
        names |= {table.name.lower() for table in tree.find_all(exp.Table)}
    return names


def _build_candidates(
    drawn_from: NeighbourSource,
    seed: str,
    candidates: int,
    workdir: Path,
    source: str,
    on_candidate: Callable[[int, int], None] | None,
) -> list[Neighbour]:
    built = []
    for number in range(candidates):
        candidate_seed = f"{seed}:{number}"
        path = workdir / f"candidate-{hashlib.sha256(candidate_seed.encode()).hexdigest()[:16]}.sqlite3"
        try:
            generated = drawn_from.neighbour(candidate_seed)
            build_sqlite(generated, path, source=source)
        except (DumpError, ValueError):
            pass  # a generator slip costs one candidate, never the import
        else:
            built.append(
                Neighbour(candidate_seed, generated, path, hashlib.sha256(path.read_bytes()).hexdigest())
            )
        if on_candidate is not None:
            on_candidate(number + 1, candidates)
    return built


# question id -> the near misses (indices) the database tells apart; None where the gold cannot judge there
Verdicts = dict[str, set[int] | None]
_UNUSABLE = "the gold fails there, returns no rows, or returns rows the engine chooses (LIMIT over ties, loose GROUP BY)"


def _told_apart(sandbox: Sandbox, path: Path, questions: Sequence[SuiteQuestion]) -> Verdicts:
    golds = [
        gold
        if gold is not None and gold.rows and not _engine_chooses(sandbox, path, question.gold_sqlite)
        else None
        for question, gold in zip(
            questions,
            run_gold(sandbox, [(path, question.gold_sqlite) for question in questions]),
            strict=True,
        )
    ]
    runs = [
        (question, index)
        for question, gold in zip(questions, golds, strict=True)
        if gold is not None
        for index in range(len(question.near_misses))
    ]
    executions = sandbox.execute_many(
        [Query(path, question.near_misses[index], budgeted=False) for question, index in runs]
    )
    verdicts: Verdicts = {
        question.question_id: set() if gold is not None else None
        for question, gold in zip(questions, golds, strict=True)
    }
    gold_of = {question.question_id: gold for question, gold in zip(questions, golds, strict=True)}
    for (question, index), execution in zip(runs, executions, strict=True):
        told = verdicts[question.question_id]
        gold = gold_of[question.question_id]
        if told is not None and gold is not None and _tells_apart(gold, execution):
            told.add(index)
    return verdicts


def _engine_chooses(sandbox: Sandbox, path: Path, gold_sqlite: str) -> bool:
    return bool(order_dependence(sandbox, path, gold_sqlite)) or bare_columns_vary(sandbox, path, gold_sqlite)


def _tells_apart(gold: GoldResult, execution: Execution) -> bool:
    """Whether a near miss's execution differs from the gold's rows; running out of time or memory is a
    matter of the machine, not of the data, so it tells nothing (and would make the suite vary by load)."""
    if execution.outcome in ("timeout", "resource_limit"):
        return False
    return execution.outcome != "ok" or not results_match(
        gold.rows, execution.rows, gold_order_keys=gold.order_keys
    )


def _distil(
    questions: Sequence[SuiteQuestion], on_original: Verdicts, candidates: Sequence[Verdicts], keep: int
) -> list[int]:
    """Indices of at most `keep` candidates: first each chosen for the most pairs not told apart before it;
    then, while room is left, for the most questions that have no neighbour where their gold can judge."""
    told = {(q.question_id, i) for q in questions for i in on_original.get(q.question_id) or ()}
    chosen: list[int] = []
    while len(chosen) < keep:
        best, gain = -1, set[tuple[str, int]]()
        for number, verdicts in enumerate(candidates):
            if number in chosen:
                continue
            pairs = {(qid, i) for qid, indices in verdicts.items() for i in indices or ()} - told
            if len(pairs) > len(gain):
                best, gain = number, pairs
        if best < 0:
            break
        chosen.append(best)
        told |= gain
    while len(chosen) < keep:
        uncovered = {
            q.question_id
            for q in questions
            if all(candidates[number][q.question_id] is None for number in chosen)
        }
        best, covered = -1, 0
        for number, verdicts in enumerate(candidates):
            count = sum(verdicts[qid] is not None for qid in uncovered)
            if number not in chosen and count > covered:
                best, covered = number, count
        if best < 0:
            break
        chosen.append(best)
    return sorted(chosen)


_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Like, exp.In, exp.Between)


def gold_literals(gold_queries: Sequence[str], *, source: str = "mysql") -> dict[str, set[object]]:
    """The literals of the gold queries, by the lower-case name of the column each is compared with ("" when
    it is compared with none): neighbour databases that hold them tell boundaries and filters apart.

    A LIKE pattern gives its text without the wildcards at its ends; a gold that cannot be read gives none.
    """
    found: dict[str, set[object]] = {}
    for sql in gold_queries:
        try:
            tree, _ = parse_one(sql, source=source)
        except TranspileError:
            continue
        for literal in tree.find_all(exp.Literal):
            comparison = literal.find_ancestor(*_COMPARISONS)
            column = next(iter(comparison.find_all(exp.Column)), None) if comparison else None
            name = column.name.lower() if column is not None else ""
            found.setdefault(name, set()).add(_value(literal, like=isinstance(comparison, exp.Like)))
    return found


def _value(literal: exp.Literal, *, like: bool) -> object:
    if not literal.is_string:
        try:
            return Decimal(literal.this)
        except InvalidOperation:
            return literal.this
    return literal.this.strip("%") if like else literal.this


def check_on_reference(suite: BuiltSuite, questions: Sequence[SuiteQuestion], *, reference_url: str) -> None:
    """Load each kept neighbour into the reference engine and drop it from the suite of every question
    whose gold MariaDB answers otherwise there (the SQLite copy must hold what MySQL would return)."""
    for position, neighbour in enumerate(suite.neighbours):
        try:
            reference = load_dump(reference_url, neighbour.dump)
        except (DumpError, pymysql.MySQLError) as error:
            why = f"the reference engine cannot load it ({type(error).__name__})"
            for question in questions:
                _drop(suite.questions[question.question_id], position, why)
            continue
        with reference:
            for question in questions:
                entry = suite.questions[question.question_id]
                if position not in entry.told_apart_by:
                    continue
                outcome = fidelity.compare_engines(neighbour.path, reference, question.gold)
                if not outcome.agrees:
                    _drop(
                        entry,
                        position,
                        f"SQLite and MariaDB differ there ({outcome.status}: {outcome.cause})",
                    )


def _drop(entry: QuestionSuite, position: int, why: str) -> None:
    if entry.told_apart_by.pop(position, None) is not None:
        entry.dropped.append((position, why))
