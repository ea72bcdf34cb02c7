"""What building and checking a benchmark produces, before it is stored: the built databases, the
transpiled questions, their findings and the report (evaluation/validation.py builds them, and
evaluation/reference_check.py adds the reference engine's findings)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evaluation.schemas import SchemaForms
from evaluation.scoring.full_group_by import Keys
from evaluation.scoring.suites import BuiltSuite
from evaluation.sources import DatabaseSource, QuestionSource

# Findings that make a question unscorable; every other finding is a warning shown to admins.
INVALIDATING = {"gold_untranspilable", "gold_fails", "gold_fails_on_reference", "gold_loose_group_by"}
# The gold uses a table or column the schema shown to participants lacks: staff should exclude it.
HIDDEN_SCHEMA = "gold_uses_hidden_schema"


@dataclass(frozen=True)
class Finding:
    code: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


@dataclass
class PreparedDatabase:
    source: DatabaseSource
    sqlite_file: Path
    sqlite_sha256: str
    scored_schema: SchemaForms
    authors_schema: SchemaForms | None
    tables: dict[str, dict[str, Any]]  # table -> {"columns": [names], "rows": count}
    # table -> column -> declared type, which transpiling needs to keep MySQL's comparison rules
    column_types: dict[str, dict[str, str]]
    keys: Keys  # what MySQL's ONLY_FULL_GROUP_BY derives functional dependence from
    findings: list[Finding] = field(default_factory=list)
    # How the authors' schema-only dump differs from the scored database, and the gold it cannot answer.
    schema_differences: list[str] = field(default_factory=list)
    authors_schema_gaps: dict[str, list[str]] = field(default_factory=dict)
    suite: BuiltSuite | None = None  # the test suite, when one was distilled

    @property
    def column_count(self) -> int:
        return sum(len(table["columns"]) for table in self.tables.values())

    @property
    def row_count(self) -> int:
        return sum(table["rows"] for table in self.tables.values())


@dataclass
class PreparedQuestion:
    source: QuestionSource
    hardness: str
    gold_sqlite: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def is_valid(self) -> bool:
        return not any(finding.code in INVALIDATING for finding in self.findings)


@dataclass
class PreparedBenchmark:
    databases: list[PreparedDatabase]
    questions: list[PreparedQuestion]
    reference_checked: bool

    def report(self) -> dict[str, Any]:
        return {
            "reference_checked": self.reference_checked,
            "databases": [
                {
                    "slug": db.source.slug,
                    "tables": {name: info["rows"] for name, info in db.tables.items()},
                    "rows": db.row_count,
                    "findings": [f.as_dict() for f in db.findings],
                    "schema": schema_report(
                        shown="scored",
                        has_authors_dump=db.authors_schema is not None,
                        differences=db.schema_differences,
                        gaps=db.authors_schema_gaps,
                    ),
                    "suite": suite_report(db.suite),
                }
                for db in self.databases
            ],
            "questions": {
                "total": len(self.questions),
                "valid": sum(q.is_valid for q in self.questions),
                "by_hardness": dict(Counter(q.hardness for q in self.questions)),
                "findings": {
                    q.source.public_id: [f.as_dict() for f in q.findings]
                    for q in self.questions
                    if q.findings
                },
            },
        }


def report_text(report: dict[str, Any]) -> str:
    """The report as the import commands print it and the staff pages show it."""
    lines = []
    questions = report["questions"]
    for db in report["databases"]:
        tables = ", ".join(f"{name} {rows}" for name, rows in db["tables"].items())
        lines.append(f"{db['slug']}: {len(db['tables'])} tables, {db['rows']} rows ({tables})")
        lines.extend(f"  ! {f['code']}: {f['message']}" for f in db["findings"])
        lines.extend(f"  {line}" for line in schema_report_lines(db["schema"]))
        lines.extend(f"  {line}" for line in suite_report_lines(db["suite"]))
    by_hardness = ", ".join(f"{level} {n}" for level, n in sorted(questions["by_hardness"].items()))
    lines.append(f"questions: {questions['total']}, valid {questions['valid']} ({by_hardness})")
    if not report["reference_checked"]:
        lines.append("reference engine: not checked (TERMITE_REFERENCE_MYSQL_URL is not set)")
    for public_id, findings in questions["findings"].items():
        lines.extend(f"  {public_id}: {f['code']}: {f['message']}" for f in findings)
    return "\n".join(lines)


def schema_report(
    *, shown: str, has_authors_dump: bool, differences: list[str], gaps: dict[str, list[str]]
) -> dict[str, Any]:
    """Which schema participants see of a database, and what the other choice would change."""
    return {
        "shown": shown,
        "authors_dump": has_authors_dump,
        "differences": differences,
        "authors_schema_gaps": gaps,
    }


def schema_report_lines(schema: dict[str, Any]) -> list[str]:
    shown = "the authors' schema-only dump" if schema["shown"] == "authors" else "the scored database's"
    lines = [f"schema shown to participants: {shown}"]
    if not schema["authors_dump"]:
        return lines
    if not schema["differences"]:
        return [*lines, "the authors' schema-only dump agrees with the scored database"]
    lines.append(f"the authors' schema-only dump differs in {len(schema['differences'])} ways:")
    lines.extend(f"  {difference}" for difference in schema["differences"])
    gaps = schema["authors_schema_gaps"]
    verb = "leaves" if schema["shown"] == "authors" else "would leave"
    lines.append(f"the authors' dump {verb} {len(gaps)} questions unanswerable:")
    lines.extend(f"  {public_id}: lacks {', '.join(names)}" for public_id, names in gaps.items())
    return lines


def suite_report(suite: BuiltSuite | None) -> dict[str, Any] | None:
    """How a database's test suite was distilled, and what it tells apart, per question (counts only)."""
    if suite is None:
        return None
    return {
        "candidates": suite.candidates,
        "unbuildable": suite.unbuildable,
        "kept": len(suite.neighbours),
        "seconds": round(suite.seconds, 2),
        "questions": {
            question_id: {
                "near_misses": entry.near_misses,
                "told_apart_by_original": len(entry.told_apart_by_original),
                "told_apart_by_suite": entry.told_apart_by_suite,
                "suite": entry.neighbours,
                "dropped": [[position, why] for position, why in entry.dropped],
            }
            for question_id, entry in suite.questions.items()
        },
    }


def suite_report_lines(suite: dict[str, Any] | None) -> list[str]:
    if suite is None:
        return ["test suite: none (no scorable question, or suites switched off)"]
    questions = suite["questions"].values()
    generated = sum(q["near_misses"] for q in questions)
    by_original = sum(q["told_apart_by_original"] for q in questions)
    by_suite = sum(q["told_apart_by_suite"] for q in questions)
    lines = [
        f"test suite: {suite['kept']} neighbour databases kept of {suite['candidates']} candidates "
        f"({suite['unbuildable']} could not be built), in {suite['seconds']:.1f} s",
        f"near misses: {generated}; told apart by the original database {by_original}, "
        f"with the suite {by_suite}",
    ]
    for question_id, entry in suite["questions"].items():
        line = (
            f"  {question_id}: {entry['near_misses']} near misses, {entry['told_apart_by_original']} told apart "
            f"by the original, {entry['told_apart_by_suite']} with its suite of {len(entry['suite'])}"
        )
        dropped = "; ".join(f"#{position} dropped: {why}" for position, why in entry["dropped"])
        lines.append(f"{line} ({dropped})" if dropped else line)
    return lines
