"""Building a database's test suite, at import or later for a version imported before suites existed (the
method is in evaluation/scoring/suites.py).

Per database: the near misses of every scorable gold query, transpiled like a prediction; neighbour
candidates seeded from the database's own rows and the gold's literals; the distilled suite; and, with a
reference engine, the check that MariaDB answers each gold on each kept neighbour as the SQLite copy does.
Reports hold counts and question ids, never a query or a value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from evaluation.scoring.dialect import TranspileError, to_sqlite
from evaluation.scoring.near_misses import near_misses
from evaluation.scoring.sandbox import Limits
from evaluation.scoring.suites import (
    BuiltSuite,
    SuiteQuestion,
    build_suite,
    check_on_reference,
    gold_literals,
)

# Near misses are trusted no more than predictions; one that runs out of time tells nothing apart.
DISTILLATION_LIMITS = Limits(query_seconds=2.0, total_seconds=3600.0)


@dataclass(frozen=True)
class ScorableGold:
    question_id: str
    gold: str  # as written, in the database's dialect
    gold_sqlite: str


def suite_seed_of(seed: str, sqlite_sha256: str) -> str:
    """A database's suite seed: the site's seed and the database's own content, so that the same archive
    and seed give the same neighbours, at import or later."""
    return f"{seed}:{sqlite_sha256}"


def distil_suite(
    *,
    slug: str,
    dump: str,
    dialect: str,
    sqlite_file: Path,
    column_types: Mapping[str, Mapping[str, str]],
    golds: Sequence[ScorableGold],
    workdir: Path,
    candidates: int,
    seed: str,
    reference_url: str | None,
    on_candidate: Callable[[int, int], None] | None = None,
) -> BuiltSuite | None:
    """The test suite of the database built at `sqlite_file` from `dump`; None without scorable gold or
    candidates. Its files are written under `workdir`; `on_candidate` is told each candidate built (how
    many so far, of how many)."""
    if not golds or candidates <= 0:
        return None
    questions = [
        SuiteQuestion(
            question_id=gold.question_id,
            gold=gold.gold,
            gold_sqlite=gold.gold_sqlite,
            near_misses=tuple(_transpiled_near_misses(gold.gold, dialect, column_types)),
        )
        for gold in golds
    ]
    folder = workdir / f"{slug}-suite"
    folder.mkdir(exist_ok=True)
    suite = build_suite(
        original=sqlite_file,
        dump=dump,
        questions=questions,
        literals=gold_literals([gold.gold for gold in golds], source=dialect),
        workdir=folder,
        seed=seed,
        source=dialect,
        candidates=candidates,
        limits=DISTILLATION_LIMITS,
        on_candidate=on_candidate,
    )
    if reference_url and dialect == "mysql":
        check_on_reference(suite, questions, reference_url=reference_url)
    return suite


def _transpiled_near_misses(
    gold: str, dialect: str, column_types: Mapping[str, Mapping[str, str]]
) -> list[str]:
    transpiled = []
    for near_miss in near_misses(gold, source=dialect, schema=column_types):
        try:
            transpiled.append(to_sqlite(near_miss.sql, source=dialect, schema=column_types))
        except TranspileError:
            continue  # a mutation MySQL would refuse is no near miss worth a database
    return transpiled
