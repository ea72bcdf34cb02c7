"""Scoring predictions against a stored benchmark version: the bridge from the store to `scoring.score`."""

from __future__ import annotations

import logging
import math
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings

from evaluation.database_cache import local_copy
from evaluation.models import BenchmarkVersion, Question
from evaluation.scoring.compare import Row, Value
from evaluation.scoring.sandbox import Limits
from evaluation.scoring.score import GoldQuestion, GoldResult, QuestionDetail, ScoreReport, score_predictions
from evaluation.scoring.scores_json import QuestionDetailJSON

logger = logging.getLogger(__name__)


class _BoundedCache(OrderedDict[tuple[str, str, str], GoldResult]):
    """Gold results kept between submissions in one worker; the oldest go first beyond `limit` entries."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def __setitem__(self, key: tuple[str, str, str], value: GoldResult) -> None:
        super().__setitem__(key, value)
        if len(self) > self.limit:
            self.popitem(last=False)


# Keyed by database sha256, question id and gold sha256, so a changed file or gold never hits a stale entry.
_GOLD_RESULTS: _BoundedCache = _BoundedCache(limit=20_000)
_GOLD_QUESTIONS: dict[tuple[int, str], list[GoldQuestion]] = {}


def gold_questions(version: BenchmarkVersion) -> list[GoldQuestion]:
    """Every question of the version with its transpiled gold; cached for published (frozen) versions."""
    key = (version.pk, version.published_at.isoformat() if version.published_at else "")
    if version.is_published and key in _GOLD_QUESTIONS:
        return _GOLD_QUESTIONS[key]
    questions = [
        GoldQuestion(
            question_id=question.public_id,
            db_id=question.database.slug,
            hardness=question.hardness,
            sql_sqlite=question.decrypt_gold_sqlite() if question.is_scored else "",
            valid=question.is_scored,
            suite=tuple(f"{question.database.slug}~{position}" for position in question.suite),
        )
        for question in Question.objects.filter(version=version)
        .select_related("database")
        .order_by("database__slug", "position")
    ]
    if version.is_published:
        _GOLD_QUESTIONS[key] = questions
    return questions


def database_paths(version: BenchmarkVersion) -> dict[str, Path]:
    """This host's checked copy of every database and of its neighbours (by `NeighbourDatabase.key`),
    fetched from the platform where this host lacks one (`database_cache`)."""
    paths = {}
    for database in version.databases.prefetch_related("neighbours"):
        paths[database.slug] = local_copy(database.sqlite_sha256, name=database.slug)
        for neighbour in database.neighbours.all():
            paths[neighbour.key] = local_copy(neighbour.sqlite_sha256, name=neighbour.key)
    return paths


def scoring_limits() -> Limits:
    """The sandbox's limits for a submission, as the settings say (memory: `Limits`' own)."""
    return Limits(
        query_seconds=settings.TERMITE_QUERY_TIMEOUT,
        total_seconds=settings.TERMITE_SUBMISSION_BUDGET,
        # The same seconds bound the predictions' wall time: the release time counts on it (leaderboard).
        wall_seconds=settings.TERMITE_SUBMISSION_BUDGET,
        max_rows=settings.TERMITE_MAX_RESULT_ROWS,
        max_result_bytes=settings.TERMITE_MAX_RESULT_BYTES,
        max_total_result_bytes=settings.TERMITE_SUBMISSION_RESULT_BYTES,
    )


def score_version(
    *, version: BenchmarkVersion, predictions: Mapping[str, str], dialect: str = "mysql"
) -> ScoreReport:
    return score_predictions(
        questions=gold_questions(version),
        predictions=predictions,
        database_paths=database_paths(version),
        dialect=dialect,
        limits=scoring_limits(),
        gold_cache=_GOLD_RESULTS,
        benchmark_version=str(version),
        explain=version.is_practice,
    )


def warm_gold_cache() -> list[str]:
    """Run the gold of every published version once, so that this process holds its results, and read
    its databases' schemas.

    The worker calls it before it starts: each job runs in a work-horse forked from it, which inherits the
    caches and so runs no gold query and reads no schema. A version that cannot be scored is skipped (logged by the type of
    its error only, which can say nothing of a gold query); the names of the versions warmed are returned.
    """
    warmed = []
    for version in BenchmarkVersion.objects.published():
        try:
            # No predictions: only the gold runs, and the schemas MySQL predictions are transpiled with
            # are read.
            score_version(version=version, predictions={}, dialect="mysql")
        except Exception as error:  # one broken version must not keep the others cold
            logger.warning("gold cache of version %s not warmed: %s", version.pk, type(error).__name__)
        else:
            warmed.append(str(version))
    return warmed


def outcome_rows(report: ScoreReport) -> list[dict[str, Any]]:
    """One line per question, as a submission stores its outcomes; a practice version's lines carry their
    detail (`QuestionDetail`) under "detail"."""
    return [
        {
            "question_id": q.question_id,
            "outcome": q.outcome,
            "ea": q.ea,
            "ea_strict": q.ea_strict,
            "ts_ea": q.ts,
            "error": q.error,
            "static": q.static,
            **({"detail": _detail_json(q.detail)} if q.detail is not None else {}),
        }
        for q in report.questions
    ]


# A long text or blob in a result is cut to this many characters: the detail shows rows, not documents.
_CELL_CHARS = 200


def _detail_json(detail: QuestionDetail) -> QuestionDetailJSON:
    return {
        "sql_run": detail.sql_run,
        "columns": list(detail.columns),
        "rows": _rows_json(detail.rows),
        "row_count": detail.row_count,
        "gold_rows": _rows_json(detail.gold_rows),
        "gold_row_count": detail.gold_row_count,
        "difference": detail.difference,
    }


def _rows_json(rows: tuple[Row, ...]) -> list[list[Value]]:
    return [[_cell_json(value) for value in row] for row in rows]


def _cell_json(value: Value) -> Value:
    """A value as JSON keeps it (PostgreSQL's JSON takes no NaN or infinity, and no bytes)."""
    if isinstance(value, bytes):
        return "0x" + value[: _CELL_CHARS // 2].hex()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str) and len(value) > _CELL_CHARS:
        return value[:_CELL_CHARS] + "…"
    return value
