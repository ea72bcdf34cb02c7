"""The public ranking of one benchmark version: its rows, shared ranks, sorting, filtering and cache.

Only public, scored, live, unhidden submissions (`Submission.objects.ranked`) and admins' baselines are
read, through `.values()`: never predictions or anything of the gold, and of the outcomes only the EA
verdicts each row keeps (`feedback.public_kept_verdicts`), for the rank rule and the EA after a training
cutoff (leaderboard/contamination.py). Every accuracy here is a fraction in [0, 1], the self-reported
Spider EA too (it is entered in %).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import pickle
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import date, datetime
from typing import Any, TypedDict, TypeVar, cast

from django.core.cache import cache
from django.db.models import Count, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from evaluation.models import BenchmarkVersion, Hardness
from evaluation.scoring.score import SCORER_VERSION, scored_by_older_scorer
from evaluation.scoring.scores_json import AccuracyJSON, ScoresJSON, VisibleScoresJSON
from evaluation.scoring.significance import PairedRanks, paired_ranks
from evaluation.scoring.vocabulary import HARDNESS_LEVELS
from evaluation.selectors import question_dates
from leaderboard import feedback
from leaderboard.contamination import ea_after_cutoff
from leaderboard.model_card import (
    HOW_IT_RAN,
    UNKNOWN,
    Approach,
    InstructionLanguage,
    Sampling,
    SchemaFormat,
    Weights,
    cutoff_date,
)
from leaderboard.models import Submission
from termite_site.cached_page import CachedPage, WholePage

logger = logging.getLogger(__name__)

T = TypeVar("T")

# `Row` has a field named `date`, which hides the type inside its class body.
_Date = date

# The column groups a visitor can hide; the rank, model, team, date and EA columns always show.
COLUMN_GROUPS = {
    "databases": _("EA per database"),
    "hardness": _("EA per hardness level"),
    "spider": _("Spider dev EA, self-reported"),
    "tags": _("Model card"),
}
# Folded until a visitor unfolds them, so that the default columns fit a laptop's screen (1280 px; the
# model card is on each submission's page and in the exports too); `?hide=none` (NO_GROUP_HIDDEN) unfolds
# every group.
FOLDED_GROUPS = ("databases", "hardness", "tags")
NO_GROUP_HIDDEN = "none"


@dataclass(frozen=True)
class Row:
    """One line of the leaderboard: a public scored submission, or a baseline reported elsewhere."""

    submission_id: int | None
    model_name: str
    team: str  # a submission's team's name, a baseline's authors as its paper names them; "" for none
    date: date
    ea: float
    ea_strict: float | None
    ea_ci95: tuple[float, float] | None
    per_database: dict[str, float | None]
    per_hardness: dict[str, float | None]
    spider_ea: float | None
    # Test-suite EA and its interval: None for a baseline and for scores made before scorer 1.3.0.
    ts_ea: float | None = None
    ts_ea_ci95: tuple[float, float] | None = None
    model_size: str = ""
    weights: str = Weights.UNKNOWN
    approach: str = Approach.OTHER
    baseline: bool = False
    note: str = ""
    source: str = ""
    source_url: str = ""
    # The scorer that produced the scores (from the scores JSON); None for a baseline, not scored here.
    scorer_version: str | None = None
    # Staff reproduced the run (leaderboard/services.py, submission_verify): when, and how, publicly.
    # None for a self-reported run, and for a baseline.
    verified_at: _Date | None = None
    verified_note: str = ""
    # Made by the portal running a protocol against a model endpoint (leaderboard/run_services.py): which
    # protocol, the endpoint's host, and the day the run ended; empty for an upload and a baseline.
    portal_protocol: str = ""
    portal_endpoint_host: str = ""
    portal_run_at: _Date | None = None
    # The slug of a submission's team, for its page and the team filter; "" for none and for a baseline.
    team_slug: str = ""
    # How the predictions were made (leaderboard/model_card.py): empty, or None, where the card is silent.
    training_cutoff: str = ""  # "YYYY-MM-DD" or "unknown"
    shots: int | None = None
    schema_format: str = ""
    instruction_language: str = ""
    sampling: str = ""
    temperature: float | None = None
    decoding_note: str = ""
    run_date: _Date | None = None
    paper_url: str = ""
    code_url: str = ""
    model_url: str = ""
    # The sha256 of the uploaded file, so that a paper's number can be tied to one file; "" for a baseline.
    file_sha256: str = ""
    # EA on the scored questions added after the training cutoff, and how many they are: None when the
    # card gives no cutoff date or no question came after it (leaderboard/contamination.py).
    ea_after_cutoff: float | None = None
    questions_after_cutoff: int | None = None
    # The rank rule (`significance.paired_ranks`): 1 + how many rows are significantly better, and which
    # they are (their submission ids). None for a baseline, and for scores stored without a verdict per
    # question (made before scorer 1.1.0), until they are rescored.
    rank: int | None = None
    significantly_better: tuple[int, ...] = ()

    @property
    def spider_gap(self) -> float | None:
        """Self-reported Spider EA minus EA here: large gaps are the contamination signal."""
        if self.spider_ea is None:
            return None
        return round(self.spider_ea - self.ea, 6)

    @property
    def scored_by_older_scorer(self) -> bool:
        """Scores made by a scorer other than the current one, shown flagged until they are rescored."""
        return self.scorer_version is not None and scored_by_older_scorer(self.scorer_version)

    @property
    def verified(self) -> bool:
        return self.verified_at is not None

    @property
    def portal_run(self) -> bool:
        return bool(self.portal_protocol)

    @property
    def size(self) -> str:
        return normalise_size(self.model_size)

    @property
    def parameter_count(self) -> float | None:
        return parameters(self.model_size)

    @property
    def weights_label(self) -> str | Promise:
        return Weights(self.weights).label

    @property
    def approach_label(self) -> str | Promise:
        return Approach(self.approach).label

    @property
    def cutoff_unknown(self) -> bool:
        return self.training_cutoff == UNKNOWN

    # Read when a page is rendered, in its language (rows are cached in none).

    @property
    def prompt_summary(self) -> str:
        """ "3-shot · SQLite DDL · English": what the card says of the prompt; "" when it says nothing."""
        parts = [gettext("%(n)s-shot") % {"n": self.shots}] if self.shots is not None else []
        if self.schema_format:
            parts.append(str(SchemaFormat(self.schema_format).label))
        if self.instruction_language:
            parts.append(str(InstructionLanguage(self.instruction_language).label))
        return " · ".join(parts)

    @property
    def decoding_summary(self) -> str:
        """ "Decoding: sampling with top-p, T = 0.7 (top-p 0.95) · run on 2025-06-02"; "" when the card
        says nothing of either."""
        parts = []
        if self.sampling:
            decoding = gettext("Decoding: %(sampling)s") % {"sampling": Sampling(self.sampling).label}
            if self.temperature is not None:
                decoding += f", T = {self.temperature:g}"
            if self.decoding_note:
                decoding += f" ({self.decoding_note})"
            parts.append(decoding)
        if self.run_date:
            parts.append(gettext("run on %(date)s") % {"date": self.run_date.isoformat()})
        return " · ".join(parts)

    @property
    def search_text(self) -> str:
        return " ".join((self.model_name, self.team, self.model_size, self.note)).lower()

    def value(self, key: str) -> Any:
        """The value a column sorts by; None (missing) sorts last whichever the order."""
        if key.startswith("db_"):
            return self.per_database.get(key[3:])
        if key.startswith("hardness_"):
            return self.per_hardness.get(key[9:])
        return _VALUES[key](self)


_VALUES: dict[str, Callable[[Row], Any]] = {
    "model_name": lambda row: row.model_name.lower(),
    "team": lambda row: row.team.lower() or None,
    "date": lambda row: row.date,
    "ea": lambda row: row.ea,
    "ea_strict": lambda row: row.ea_strict,
    "ts_ea": lambda row: row.ts_ea,
    "spider_ea": lambda row: row.spider_ea,
    "spider_gap": lambda row: row.spider_gap,
    "model_size": lambda row: row.parameter_count,
    "weights": lambda row: row.weights,
    "approach": lambda row: row.approach,
    "training_cutoff": lambda row: cutoff_date(row.training_cutoff),
    "prompt": lambda row: row.shots,
    "ea_after_cutoff": lambda row: row.ea_after_cutoff,
}


@dataclass(frozen=True)
class Column:
    key: str
    label: str | Promise
    group: str | None = None
    numeric: bool = True
    help: str | Promise = ""
    about: str = ""  # the id of the section of the metrics page that explains the column, if any


@dataclass(frozen=True)
class Leaderboard:
    version: str
    databases: list[str]
    rows: list[Row]
    # The rank rule over the ranked rows: how many pairs were compared, and Holm's threshold (a pair is
    # significant when its McNemar p-value is below it), so that the compare page judges one pair alike.
    comparisons: int = 0
    rank_threshold: float = 0.0

    @property
    def hardness_levels(self) -> tuple[str, ...]:
        return HARDNESS_LEVELS

    def better_names(self) -> dict[int, list[str]]:
        """By submission id, the rows significantly better than that row, as "#id model": each rank's
        explanation, for every row at once (the names read once, not once per row)."""
        names = {row.submission_id: row.model_name for row in self.rows if row.submission_id is not None}
        return {
            pk: [f"#{better} {names[better]}" for better in row.significantly_better if better in names]
            for row in self.rows
            if (pk := row.submission_id) is not None
        }

    @property
    def shows_after_cutoff(self) -> bool:
        """Whether the EA after the training cutoff has a column: only once a ranked row has questions
        added after its cutoff, since until then it would be empty for every row."""
        return any(row.questions_after_cutoff for row in self.rows if not row.baseline)

    @property
    def columns(self) -> list[Column]:
        return [
            Column("rank", _("Rank")),
            Column("model_name", _("Model"), numeric=False),
            Column("team", _("Team"), numeric=False),
            Column("date", _("Date"), numeric=False),
            Column("ea", _("EA"), help=_("Execution accuracy (%) and its 95% confidence interval")),
            Column("ea_strict", _("EA-strict"), help=_("The authors' rule: same rows in the same order (%)")),
            Column(
                "ts_ea",
                _("TS-EA"),
                help=_(
                    "Test-suite execution accuracy (%) and its 95% confidence interval: right on every"
                    " neighbour database of the question's test suite too"
                ),
                about="ts-ea",
            ),
            *self._after_cutoff_columns(),
            *(Column(f"db_{slug}", slug, "databases") for slug in self.databases),
            *(Column(f"hardness_{level}", Hardness(level).label, "hardness") for level in HARDNESS_LEVELS),
            Column(
                "spider_ea", _("Spider EA"), "spider", help=_("Spider dev EA (%) as reported by the authors")
            ),
            Column("spider_gap", _("Gap"), "spider", help=_("Spider dev EA minus EA here, in points")),
            Column("model_size", _("Size"), "tags"),
            Column("weights", _("Weights"), "tags", numeric=False),
            Column("approach", _("Approach"), "tags", numeric=False),
            Column(
                "training_cutoff",
                _("Cutoff"),
                "tags",
                numeric=False,
                help=_("The model's training-data cutoff, as its authors report it"),
            ),
            Column(
                "prompt",
                _("Prompt"),
                "tags",
                numeric=False,
                help=_(
                    "Examples in the prompt, the schema's form and the instructions' language; hover for the decoding"
                ),
            ),
        ]

    def _after_cutoff_columns(self) -> list[Column]:
        if not self.shows_after_cutoff:
            return []
        return [
            Column(
                "ea_after_cutoff",
                _("EA after cutoff"),
                help=_(
                    "EA (%) on the questions added to the benchmark after the model's training-data cutoff,"
                    " and how many they are"
                ),
                about="contamination",
            )
        ]

    @property
    def column_groups(self) -> list[tuple[str | None, str | Promise, int]]:
        """(group, label, number of columns) in column order, for a header row above the columns."""
        spans: list[tuple[str | None, str | Promise, int]] = []
        for column in self.columns:
            if spans and spans[-1][0] == column.group:
                group, label, span = spans[-1]
                spans[-1] = (group, label, span + 1)
            else:
                label = COLUMN_GROUPS.get(column.group, "") if column.group is not None else ""
                spans.append((column.group, label, 1))
        return spans

    @property
    def teams(self) -> list[tuple[str, str]]:
        """(slug, name) of the teams with a row, by name, for the team filter."""
        teams = {row.team_slug: row.team for row in self.rows if row.team_slug}
        return sorted(teams.items(), key=lambda team: (team[1].lower(), team[0]))

    @property
    def sizes(self) -> list[str]:
        """The model sizes present, smallest first, for the size filter."""
        sizes = {row.size for row in self.rows if row.size}
        return sorted(sizes, key=lambda size: (parameters(size) is None, parameters(size) or 0, size))


def baseline_overall(per_database: dict[str, float], question_counts: dict[str, int]) -> float:
    """The overall EA of per-database numbers: their mean weighted by each database's questions.

    Every question of a database counts, those the portal excludes too: a paper scored them all.
    """
    if not per_database:
        return 0.0
    weights = {slug: question_counts.get(slug, 0) for slug in per_database}
    total = sum(weights.values())
    if total == 0:
        return round(sum(per_database.values()) / len(per_database), 6)
    return round(sum(ea * weights[slug] for slug, ea in per_database.items()) / total, 6)


def build_leaderboard(*, version: BenchmarkVersion) -> Leaderboard:
    """The ranking of `version` from the database, in three queries whatever the number of rows; one
    more when a row's training cutoff comes before a database was added (its EA after the cutoff)."""
    counted = version.databases.order_by("slug").annotate(n=Count("questions"))
    question_counts, added_on = {}, {}
    for slug, n, day in counted.values_list("slug", "n", "added_on"):
        question_counts[slug], added_on[slug] = n, day
    databases = list(question_counts)
    now = timezone.now()
    items = list(_submissions(version))
    # A row shows from its release time on (leaderboard/feedback.py); the cache lasts until the next one.
    pending = [item["released_at"] for item in items if item["released_at"] and item["released_at"] > now]
    if pending:
        _expire_at(version.label, min(pending))
    items = [item for item in items if item["released_at"] not in pending]
    # Each row's EA verdict per question, for the rank rule and the EA after a cutoff: aggregates of what
    # the public breakdowns show already (`feedback.public_kept_verdicts`). A row stored without them has
    # no rank.
    verdicts = {item["pk"]: found for item in items if (found := _verdicts_in(item.pop("verdicts_text")))}
    rule = paired_ranks(verdicts)
    rows = [_submission_row(item, databases, rule) for item in items]
    rows = _with_ea_after_cutoff(rows, verdicts, version=version, newest=max(added_on.values(), default=None))
    # Ordered by rank, and by EA within a rank (sorted() is stable, the query gives the best EA first); a
    # row without verdicts, unranked, after the ranked ones.
    rows.sort(key=lambda row: (row.rank is None, row.rank or 0))
    for item in version.baselines.values(*_BASELINE_FIELDS).order_by("model_name"):
        _insert_by_ea(rows, _baseline_row(item, databases, question_counts))
    return Leaderboard(
        version=version.label,
        databases=databases,
        rows=rows,
        comparisons=rule.comparisons,
        rank_threshold=rule.threshold,
    )


def _with_ea_after_cutoff(
    rows: list[Row],
    verdicts: Mapping[int, dict[str, bool]],
    *,
    version: BenchmarkVersion,
    newest: date | None,
) -> list[Row]:
    """`rows`, each with its EA on the questions added after its training cutoff where it has any.
    Only rows whose cutoff comes before the newest database can have some: for them alone, the
    questions' dates are read."""
    dated = {
        row.submission_id: day
        for row in rows
        if (day := cutoff_date(row.training_cutoff)) is not None and newest is not None and day < newest
    }
    if not dated:
        return rows
    added_on = question_dates(version=version)
    updated = []
    for row in rows:
        after = None
        if row.submission_id in dated:
            found = verdicts.get(row.submission_id) if row.submission_id is not None else None
            after = ea_after_cutoff(cutoff=dated[row.submission_id], verdicts=found, added_on=added_on)
        if after is not None:
            row = replace(row, ea_after_cutoff=after.ea, questions_after_cutoff=after.n)
        updated.append(row)
    return updated


# The model card's fields a row carries as they are, for submissions and baselines alike.
_CARD_FIELDS = (
    "model_name",
    "model_size",
    "weights",
    "approach",
    *HOW_IT_RAN,
)


def _card(item: dict[str, Any]) -> dict[str, Any]:
    return {name: item[name] for name in _CARD_FIELDS}


def _submissions(version: BenchmarkVersion) -> QuerySet[Submission, dict[str, Any]]:
    rows: QuerySet[Submission, dict[str, Any]] = Submission.objects.ranked(version).values(
        "pk",
        "team__name",
        "team__slug",
        *_CARD_FIELDS,
        "spider_dev_ea",
        "created_at",
        "ea",
        "ea_strict",
        "released_at",
        "verified_at",
        "verified_note",
        "portal_protocol",
        "portal_endpoint_host",
        "portal_run_at",
        "paper_url",
        "code_url",
        "model_url",
        "file_sha256",
        # As their JSON text: decoded once per text in a process (`_verdicts_in`, `_public_scores_in`), so
        # that a change of the ranking decodes the rows it changed, not a thousand.
        scores_text=Cast("scores", TextField()),
        verdicts_text=Cast("ea_verdicts", TextField()),
    )
    return rows


@functools.lru_cache(maxsize=4096)
def _verdicts_in(kept: str | None) -> dict[str, bool] | None:
    """`feedback.public_kept_verdicts` of verdicts stored as this JSON text. Read, never changed, by
    callers."""
    return feedback.public_kept_verdicts(json.loads(kept) if kept else None)


@functools.lru_cache(maxsize=4096)
def _public_scores_in(scores: str | None) -> VisibleScoresJSON:
    """`feedback.public_scores` of scores stored as this JSON text (`{}` for none). Read, never changed."""
    return feedback.public_scores(cast(ScoresJSON, (json.loads(scores) if scores else None) or {}))


def _submission_row(item: dict[str, Any], databases: list[str], rule: PairedRanks[int]) -> Row:
    # A ranked submission is scored: `or {}` only guards against a row stored without scores.
    scores = _public_scores_in(item["scores_text"])
    overall = scores.get("overall", {})
    # A public submission shows its breakdowns to anyone: none of them is None here.
    per_database = cast(dict[str, AccuracyJSON], scores.get("per_database", {}))
    per_hardness = cast(dict[str, AccuracyJSON], scores.get("per_hardness", {}))
    return Row(
        submission_id=item["pk"],
        team=item["team__name"] or "",
        team_slug=item["team__slug"] or "",
        **_card(item),
        date=item["created_at"].date(),
        ea=item["ea"] or 0.0,
        ea_strict=item["ea_strict"],
        ea_ci95=_interval(overall.get("ea_ci95")),
        per_database=_accuracies(per_database, databases),
        per_hardness=_accuracies(per_hardness, HARDNESS_LEVELS),
        spider_ea=_fraction(item["spider_dev_ea"]),
        # Absent from scores made before scorer 1.3.0: unknown, never 0 and never EA.
        ts_ea=overall.get("ts_ea"),
        ts_ea_ci95=_interval(overall.get("ts_ea_ci95")),
        scorer_version=scores.get("scorer_version"),
        verified_at=item["verified_at"],
        verified_note=item["verified_note"],
        portal_protocol=item["portal_protocol"],
        portal_endpoint_host=item["portal_endpoint_host"],
        portal_run_at=item["portal_run_at"].date() if item["portal_run_at"] else None,
        paper_url=item["paper_url"],
        code_url=item["code_url"],
        model_url=item["model_url"],
        file_sha256=item["file_sha256"],
        rank=rule.ranks.get(item["pk"]),
        significantly_better=rule.better.get(item["pk"], ()),
    )


def _interval(bounds: list[float] | None) -> tuple[float, float] | None:
    return (bounds[0], bounds[1]) if bounds else None


def _accuracies(groups: Mapping[str, AccuracyJSON], names: Iterable[str]) -> dict[str, float | None]:
    # A group with no scored question has no EA (the scorer writes 0.0 for it).
    return {name: groups[name]["ea"] if name in groups and groups[name].get("n") else None for name in names}


def _fraction(percent: float | None) -> float | None:
    return None if percent is None else round(percent / 100, 6)


_BASELINE_FIELDS = (
    *_CARD_FIELDS,
    "team",
    "spider_dev_ea",
    "date",
    "ea",
    "per_database",
    "note",
    "source",
    "source_url",
)


def _baseline_row(item: dict[str, Any], databases: list[str], question_counts: dict[str, int]) -> Row:
    per_database = item["per_database"]
    ea = item["ea"] if item["ea"] is not None else baseline_overall(per_database, question_counts)
    return Row(
        submission_id=None,
        **_card(item),
        team=item["team"],
        date=item["date"],
        ea=ea,
        ea_strict=None,
        ea_ci95=None,
        per_database={slug: per_database.get(slug) for slug in databases},
        per_hardness=dict.fromkeys(HARDNESS_LEVELS),
        spider_ea=_fraction(item["spider_dev_ea"]),
        baseline=True,
        note=item["note"],
        source=item["source"],
        source_url=item["source_url"],
        # The paper that reports it.
        paper_url=item["source_url"],
    )


def _insert_by_ea(rows: list[Row], baseline: Row) -> None:
    """Place a baseline below every row whose EA is at least its own."""
    index = next((i for i, row in enumerate(rows) if row.ea < baseline.ea), len(rows))
    rows.insert(index, baseline)


# Filtering and sorting: on the cached rows, in Python, so they cost no query. static/js/leaderboard.js
# does the same in the browser.


class RowFilters(TypedDict):
    """The filters of `filter_rows`, as a visitor's query sets them (forms.RankingView.filters)."""

    q: str
    weights: str
    approach: str
    size: str
    verified: bool
    portal_run: bool
    team: str


def filter_rows(
    rows: Iterable[Row],
    *,
    q: str = "",
    weights: str = "",
    approach: str = "",
    size: str = "",
    verified: bool = False,
    portal_run: bool = False,
    team: str = "",
) -> list[Row]:
    """Rows whose model, team, size or note contain `q` (ignoring case) and whose tags match; with
    `verified`, only the runs staff verified; with `portal_run`, only the submissions the portal made by
    running a protocol; with `team` (a slug), only that team's submissions."""
    words = q.lower().split()
    size = normalise_size(size)
    return [
        row
        for row in rows
        if all(word in row.search_text for word in words)
        and (not weights or row.weights == weights)
        and (not approach or row.approach == approach)
        and (not size or row.size == size)
        and (not verified or row.verified)
        and (not portal_run or row.portal_run)
        and (not team or row.team_slug == team)
    ]


def sort_rows(rows: Sequence[Row], *, key: str = "rank", descending: bool = False) -> list[Row]:
    """`rows` (in ranking order) sorted by a column; equal values keep the ranking order, and missing
    values come last in both directions."""
    if key == "rank":
        return list(reversed(rows)) if descending else list(rows)
    values = [(row.value(key), row) for row in rows]
    present = [(value, row) for value, row in values if value is not None]
    missing = [row for value, row in values if value is None]
    present.sort(key=lambda pair: pair[0], reverse=descending)
    return [row for _value, row in present] + missing


_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMBT])$")
_UNITS = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}


def normalise_size(size: str) -> str:
    size = re.sub(r"\s+", "", size)
    return UNKNOWN if size.lower() == UNKNOWN else size.upper()


def parameters(size: str) -> float | None:
    """ "7B" → 7e9, "350M" → 3.5e8; None for what does not read as a parameter count."""
    match = _SIZE.match(normalise_size(size))
    return float(match[1]) * _UNITS[match[2]] if match else None


# The cache. Everything cached for a version (its rows, the page's rows and charts per language, the
# CSV, the JSON) is stored under a key that holds the version label and a token; `forget` replaces the
# token, which drops them all at once. A value built while a change was being committed is stored under
# the old token, where nobody looks any more, so it cannot bring a stale ranking back. Each entry is
# built in one go from one reading of the rows, so that no entry mixes two states.

CACHE_SECONDS = 3600
_SCHEMA = 7  # bump when Row or Leaderboard change shape


def _token_key(label: str) -> str:
    return f"leaderboard:{label}:token"


def _expiry_key(label: str) -> str:
    return f"leaderboard:{label}:expires"


def _expire_at(label: str, when: datetime) -> None:
    """Drop the cached ranking at `when`, when a scored row is released."""
    cache.set(_expiry_key(label), when.timestamp(), timeout=CACHE_SECONDS)


def cache_key(label: str, kind: str) -> str:
    stored = cache.get_many([_token_key(label), _expiry_key(label)])
    token, expires = stored.get(_token_key(label)), stored.get(_expiry_key(label))
    if expires is not None and expires <= time.time():
        cache.delete(_expiry_key(label))
        forget(label)
        token = cache.get(_token_key(label))
    if token is None:
        cache.add(_token_key(label), uuid.uuid4().hex, timeout=None)
        token = cache.get(_token_key(label))
    # The scorer's version is in the key: after an upgrade, the rows' "older scorer" flags are recomputed.
    return f"leaderboard:v{_SCHEMA}:{SCORER_VERSION}:{label}:{token}:{kind}"


def forget(label: str) -> None:
    cache.set_many({_token_key(label): uuid.uuid4().hex, _PAGES_TOKEN_KEY: uuid.uuid4().hex}, timeout=None)


def cached(label: str, kind: str, build: Callable[[], T]) -> T:
    """`build()`, cached for the version `label` as `kind` ("rows", "csv", ...) until `forget(label)`.

    Stale while revalidating: after a change, one request builds the new value (it holds the key's build
    lock) while every other one is served the value built before the change, if there is one, rather than
    building it too: a burst of visitors right after a submission is scored waits for no render."""
    try:
        key = cache_key(label, kind)
        found = cache.get(key)
    except Exception as error:  # a cache outage makes the leaderboard slower, never unavailable
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)
        return build()
    if found is not None:
        return cast(T, pickle.loads(found))
    previous, lock = _previous_key(label, kind), f"{key}:building"
    try:
        building = not cache.add(lock, 1, timeout=_BUILD_LOCK_SECONDS)  # another request builds it
        stale = cache.get(previous) if building else None
    except Exception as error:
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)
        building, stale = True, None
    if stale is not None:
        _mark_stale()
        return cast(T, pickle.loads(stale))
    value: T | None = None
    try:
        with staleness() as used_stale:
            value = build()
        # Pickled once for both keys (the cache would pickle the value for each: a board of 1,000 rows
        # takes some 10 ms). A value made of another served stale is stale itself: kept as the previous
        # value only, so that the next request builds it again, from fresh parts.
        blob = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
        cache.set_many({previous: blob} if used_stale() else {key: blob, previous: blob}, CACHE_SECONDS)
    except Exception as error:
        if value is None:  # the build itself failed: that is no cache outage
            raise
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)
    finally:
        if not building:
            _forget_quietly(lock)
    return value


_served_stale: ContextVar[list[bool] | None] = ContextVar("leaderboard_served_stale", default=None)


@contextmanager
def staleness() -> Iterator[Callable[[], bool]]:
    """Within it, whether `cached` served a value built before the latest change (stale while
    revalidating): what is made of one must not be kept as current. Nested: an inner one tells the outer."""
    outer = _served_stale.get()
    served = [False]
    reset = _served_stale.set(served)
    try:
        yield lambda: served[0]
    finally:
        _served_stale.reset(reset)
        if outer is not None and served[0]:
            outer[0] = True


def _mark_stale() -> None:
    served = _served_stale.get()
    if served is not None:
        served[0] = True


# How long a builder may hold a key's build lock: past it (a builder that died), another request builds.
_BUILD_LOCK_SECONDS = 30


def _previous_key(label: str, kind: str) -> str:
    """Where the latest value built for (label, kind) stays whatever the token: what is served stale."""
    return f"leaderboard:v{_SCHEMA}:{SCORER_VERSION}:{label}:previous:{kind}"


def _forget_quietly(key: str) -> None:
    try:
        cache.delete(key)
    except Exception as error:
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)


# Pages kept per language and address: for anonymous visitors the whole answer (termite_site/cached_page.py,
# `WholePage`), for the others the page without its nav (`CachedPage`), so that neither needs a query or a
# render. An address without ?version= shows the latest published version, which a publication changes: so
# they are all kept under one token, which `forget` replaces with any version's (and so does a publication,
# which calls it), and each holds until its version's next release of a scored row.
_PAGES_TOKEN_KEY = "leaderboard:pages:token"

Kept = TypeVar("Kept", WholePage, CachedPage)


def _kept_page_key(address: str, kind: str) -> str:
    digest = hashlib.sha256(address.encode()).hexdigest()
    return f"leaderboard:v{_SCHEMA}:{SCORER_VERSION}:{kind}:{digest}"


def whole_page(address: str) -> tuple[WholePage | None, str]:
    """The answer kept for `address` if it still holds, and the token to keep a new one under: read before
    the page is built, so that a page built while the ranking changed is kept where nobody looks."""
    page, token, _also = _kept_page(_kept_page_key(address, "whole"))
    return page, token


def visitor_page(address: str, *, also: Sequence[str] = ()) -> tuple[CachedPage | None, str, dict[str, Any]]:
    """As `whole_page`, the page kept for `address` for visitors with a nav of their own; and the cache's
    values under the keys `also`, read in the same trip (what recognises the visitor)."""
    return _kept_page(_kept_page_key(address, "visitor"), also=also)


def _kept_page(key: str, *, also: Sequence[str] = ()) -> tuple[Any, str, dict[str, Any]]:
    try:
        stored = cache.get_many([_PAGES_TOKEN_KEY, key, *also])
        token = stored.get(_PAGES_TOKEN_KEY)
        if token is None:
            cache.add(_PAGES_TOKEN_KEY, uuid.uuid4().hex, timeout=None)
            token = cache.get(_PAGES_TOKEN_KEY)
    except Exception as error:  # a cache outage makes the leaderboard slower, never unavailable
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)
        return None, "", {}
    found = {name: stored[name] for name in also if name in stored}
    page = stored.get(key)
    if page is None:
        return None, token, found
    if page.token == token and (page.expires is None or page.expires > time.time()):
        return page, token, found
    # Stale while revalidating, as `cached`: after a change, while another request makes the page again,
    # or any value it is made of, the page kept before the change is served, with no token to keep
    # anything under.
    if page.token != token and page.made_from is not None and _being_made(*page.made_from):
        return page, "", found
    return None, token, found


def _being_made(label: str, *kinds: str) -> bool:
    """Whether a request is building any of the values `kinds` of version `label`."""
    try:
        return bool(cache.get_many([f"{cache_key(label, kind)}:building" for kind in kinds]))
    except Exception as error:
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)
        return False


def whole_page_keep(address: str, page: WholePage | None, *, label: str, kinds: tuple[str, ...]) -> None:
    """Keep `page` for `address` (made of the values `kinds` of version `label`: after a change, while any
    of them is being built, it is served stale), unless it is None or there is no token."""
    _keep_page(_kept_page_key(address, "whole"), page, label=label, kinds=kinds)


def visitor_page_keep(
    address: str, page: CachedPage, *, token: str, label: str, kinds: tuple[str, ...]
) -> None:
    """Keep `page` for `address` under `token` (read by `visitor_page` before it was built)."""
    _keep_page(_kept_page_key(address, "visitor"), replace(page, token=token), label=label, kinds=kinds)


def _keep_page(key: str, page: Kept | None, *, label: str, kinds: tuple[str, ...]) -> None:
    if page is None or not page.token:
        return
    try:
        expires = cache.get(_expiry_key(label))
        cache.set(key, replace(page, expires=expires, made_from=(label, *kinds)), CACHE_SECONDS)
    except Exception as error:
        logger.warning("leaderboard cache unavailable (%s)", type(error).__name__)


ROWS = "rows"  # the kind of `leaderboard_for`'s value


def leaderboard_for(*, version: BenchmarkVersion) -> Leaderboard:
    return cached(version.label, ROWS, lambda: build_leaderboard(version=version))


def rank_rule_for(first: Submission, second: Submission) -> feedback.RankRule | None:
    """The rank rule as the leaderboard applied it to these two, when both are ranked rows of one version's
    board: so that the compare page and its API judge the pair as the ranks do. None otherwise."""
    if first.version_id != second.version_id:
        return None
    board = leaderboard_for(version=first.version)
    ranked = {row.submission_id for row in board.rows if row.rank is not None}
    if not {first.pk, second.pk} <= ranked:
        return None
    return feedback.RankRule(threshold=board.rank_threshold, comparisons=board.comparisons)


def leaderboard_rows(*, version: BenchmarkVersion) -> list[Row]:
    return leaderboard_for(version=version).rows
