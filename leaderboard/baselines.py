"""Baselines: results reported elsewhere (a paper), shown on the leaderboard unranked and marked as such.

The paper's GPT-3.5 run is data, kept in leaderboard/reference/paper_baseline.toml and read here.
"""

from __future__ import annotations

import statistics
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.db import transaction

from evaluation.models import BenchmarkVersion
from leaderboard.model_card import (
    Approach,
    InstructionLanguage,
    Sampling,
    SchemaFormat,
    Weights,
    parse_cutoff,
)
from leaderboard.models import Baseline
from leaderboard.services import leaderboard_changed

PAPER_BASELINE_FILE = Path(__file__).resolve().parent / "reference" / "paper_baseline.toml"


class BaselineError(Exception):
    """A baseline does not fit the version it is meant for; the message says why."""


@dataclass(frozen=True)
class PaperBaseline:
    """A run as a paper reports it: the databases it covers, EA per database in %, and the baseline's
    model card and citation (fields of `Baseline`)."""

    databases: tuple[str, ...]
    ea_percent: dict[str, float]
    fields: dict[str, Any]

    @property
    def mean_ea(self) -> float:
        """The plain mean of the per-database EA, as a fraction: a figure the published numbers give by
        themselves, for where the databases' question counts are not at hand to weight them."""
        return round(statistics.fmean(self.ea_percent.values()) / 100, 6)


# The model card's choices, which a value of the file must be one of.
_CHOICES = {
    "weights": Weights,
    "approach": Approach,
    "schema_format": SchemaFormat,
    "instruction_language": InstructionLanguage,
    "sampling": Sampling,
}


def paper_baseline_read(path: Path = PAPER_BASELINE_FILE) -> PaperBaseline:
    """The reference file, checked: EA for exactly the databases it names, and choices the model card knows."""
    with path.open("rb") as file:
        data = tomllib.load(file)
    databases, ea_percent = tuple(data["databases"]), dict(data["ea_percent"])
    if set(ea_percent) != set(databases):
        raise ValueError(f"{path.name}: EA is given for {sorted(ea_percent)}, not for {sorted(databases)}")
    fields = dict(data["baseline"])
    for name, choices in _CHOICES.items():
        if name in fields:
            fields[name] = choices(fields[name])
    if "training_cutoff" in fields:
        fields["training_cutoff"] = parse_cutoff(fields["training_cutoff"])
    return PaperBaseline(databases=databases, ea_percent=ea_percent, fields=fields)


# The GPT-3.5 run of the paper that introduced Termite, on the ten Termite databases.
PAPER_GPT35 = paper_baseline_read()
TERMITE_DATABASES = PAPER_GPT35.databases
PAPER_GPT35_EA = PAPER_GPT35.ea_percent


def baseline_save(*, baseline: Baseline) -> Baseline:
    baseline.full_clean()
    baseline.save()
    leaderboard_changed(version=baseline.version)
    return baseline


def baseline_delete(*, baseline: Baseline) -> None:
    version = baseline.version
    baseline.delete()
    leaderboard_changed(version=version)


def baseline_put(
    *, version: BenchmarkVersion, fields: dict[str, Any], dry_run: bool = False
) -> tuple[Baseline, bool]:
    """Add the baseline `fields` describe to `version`, or bring the one of its model name up to date.
    Returns the baseline and whether it is new; with `dry_run`, stores nothing."""
    with transaction.atomic():
        baseline = Baseline.objects.filter(version=version, model_name=fields["model_name"]).first()
        created = baseline is None
        baseline = baseline or Baseline(version=version)
        for name, value in fields.items():
            setattr(baseline, name, value)
        if not dry_run:
            baseline_save(baseline=baseline)
    return baseline, created


def paper_baseline_load(*, version: BenchmarkVersion, dry_run: bool = False) -> tuple[Baseline, bool]:
    """Add (or bring up to date) the paper's GPT-3.5 row on `version`, whose databases must be exactly
    the ten Termite ones. Its overall EA is left blank: the leaderboard weights the per-database EA by
    the version's questions. Returns the baseline and whether it is new; with `dry_run`, stores nothing.
    """
    slugs = set(version.databases.values_list("slug", flat=True))
    if slugs != set(TERMITE_DATABASES):
        missing, extra = sorted(set(TERMITE_DATABASES) - slugs), sorted(slugs - set(TERMITE_DATABASES))
        found = ", ".join(sorted(slugs)) or "none"
        raise BaselineError(
            f"{version} does not hold the ten Termite databases the paper reports on "
            f"(missing: {', '.join(missing) or 'none'}; not in the paper: {', '.join(extra) or 'none'}; "
            f"its databases: {found})."
        )
    fields = {
        **PAPER_GPT35.fields,
        "per_database": {db: round(ea / 100, 6) for db, ea in PAPER_GPT35_EA.items()},
        "ea": None,
    }
    return baseline_put(version=version, fields=fields, dry_run=dry_run)
