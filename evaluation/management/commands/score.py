from __future__ import annotations

import io
import json as _json
import zipfile
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from evaluation.database_cache import DatabaseUnavailable
from evaluation.grading import score_version
from evaluation.management.commands._base import BenchmarkCommand
from evaluation.models import BenchmarkVersion
from evaluation.predictions import PredictionFileError, parse_predictions
from evaluation.scoring.scores_json import AccuracyJSON, OverallJSON, ScoresJSON
from evaluation.scoring.vocabulary import DIALECTS, HARDNESS_LEVELS
from evaluation.selectors import question_ids_by_database


class Command(BenchmarkCommand):
    help = (
        "Score a file of predictions offline: JSONL ({question_id, sql} per line), or the authors' layout "
        "(a folder or zip of <db>/predict.txt, one SQL<TAB>db per line in question order). Prints EA per "
        "database and overall, or with --json one JSON object. Exit 0 whenever scoring ran."
    )
    # It only reads the store. Django's checks would import the whole site to check its URLs (every view,
    # the API, the charts): a third of a run's time, for nothing scoring uses. `manage.py check` and the
    # other commands still run them.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("predictions", type=Path)
        parser.add_argument(
            "--version", dest="label", help="Benchmark version (default: the latest published)"
        )
        parser.add_argument("--dialect", choices=DIALECTS, default="mysql")
        parser.add_argument("--json", action="store_true", help="Print one JSON object")
        parser.add_argument(
            "--questions",
            action="store_true",
            help="With --json, add a `questions` list: each question's outcome, EA, EA-strict and whether a "
            "check of the text alone decided it (an admin's view; never part of the stored scores)",
        )

    def handle(
        self,
        *args: Any,
        predictions: Path,
        label: str | None,
        dialect: str,
        json: bool,
        questions: bool,
        **options: Any,
    ) -> None:
        if questions and not json:
            raise CommandError("--questions needs --json")
        version = self._version(label)
        data, name = _read(predictions)
        try:
            parsed = parse_predictions(
                data, filename=name, questions_by_database=question_ids_by_database(version=version)
            )
            report = score_version(version=version, predictions=parsed.sql, dialect=dialect)
        except PredictionFileError as error:
            raise CommandError(
                error.errors[0] + (f" (and {len(error.errors) - 1} more)" if len(error.errors) > 1 else "")
            ) from None
        except DatabaseUnavailable as error:
            raise CommandError(str(error)) from None
        scores = report.as_dict()
        if json:
            output: dict[str, object] = dict(scores)
            if questions:
                output["questions"] = [
                    {
                        "question_id": score.question_id,
                        "outcome": score.outcome,
                        "ea": score.ea,
                        "ea_strict": score.ea_strict,
                        "ts_ea": score.ts,
                        "static": score.static,
                    }
                    for score in report.questions
                ]
            self.stdout.write(_json.dumps(output, indent=2))
        else:
            self.stdout.write(_table(scores))

    def _version(self, label: str | None) -> BenchmarkVersion:
        version = (
            BenchmarkVersion.objects.filter(label=label).first()
            if label
            else BenchmarkVersion.objects.latest_published()
        )
        if version is None:
            raise CommandError(
                f"No benchmark version {label!r}." if label else "No benchmark version is published."
            )
        return version


def _read(path: Path) -> tuple[bytes, str]:
    """The file's bytes; a folder in the authors' layout is zipped in memory so one parser reads both."""
    if path.is_dir():
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w") as archive:
            for file in sorted(path.rglob("predict.txt")):
                archive.write(file, file.relative_to(path).as_posix())
        return buffer.getvalue(), path.name
    try:
        return path.read_bytes(), path.name
    except OSError as error:
        raise CommandError(f"{path}: {error.strerror}") from None


def _table(scores: ScoresJSON) -> str:
    def row(name: str, values: AccuracyJSON | OverallJSON) -> str:
        ts = values.get("ts_ea")
        return f"{name:<16}{values['n']:>5}{100 * values['ea']:>9.2f}{100 * values['ea_strict']:>12.2f}" + (
            f"{100 * ts:>9.2f}" if ts is not None else f"{'-':>9}"
        )

    lines = [
        f"{scores['version']} (scorer {scores['scorer_version']})",
        f"{'database':<16}{'n':>5}{'EA %':>9}{'EA-strict %':>12}{'TS-EA %':>9}",
    ]
    lines += [row(db, values) for db, values in sorted(scores["per_database"].items())]
    lines += [
        row(level, scores["per_hardness"][level])
        for level in HARDNESS_LEVELS
        if level in scores["per_hardness"]
    ]
    overall = scores["overall"]
    lo, hi = overall["ea_ci95"]
    lines.append(
        row("overall", overall) + f"   95% CI {100 * lo:.2f}-{100 * hi:.2f}, {overall['excluded']} excluded"
    )
    if "ts_ea_ci95" in overall:
        ts_lo, ts_hi = overall["ts_ea_ci95"]
        lines.append(
            f"TS-EA 95% CI {100 * ts_lo:.2f}-{100 * ts_hi:.2f}; "
            f"{overall.get('ts_questions', 0)} of {overall['n']} questions have a test suite"
        )
    lines.append("outcomes: " + ", ".join(f"{name} {n}" for name, n in scores["outcomes"].items()))
    return "\n".join(lines)
