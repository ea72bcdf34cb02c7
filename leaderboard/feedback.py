"""What a person may see of a submission: the one place that decides it.

The rule (the metrics page states it too): what a participant sees is a function of their own file and of
the scores, never of the hidden databases in any other way.

- Per question, a participant sees only what a static check of their own SQL decided, before anything ran
  on the data: not submitted, or a parse, dialect or size error with its message. Whatever running it
  told (a runtime error and its text, a timeout, a resource limit, right or wrong) is never shown per
  question, since each would be a bit of the hidden data (a crafted error message, the whole of it).
- A private submission's owner sees the overall EA, EA-strict and TS-EA, and the 95% CIs of EA and TS-EA
  (which depend on those counts alone): one count of right answers each, about log2(n + 1) bits apiece.
- The breakdowns (EA, EA-strict and TS-EA per database and per hardness level, outcome counts) are shown
  once a submission is public, where everyone, staff included, sees them; or to the owner when staff open
  them for a version.
- Staff see everything.
- A practice version (`BenchmarkVersion.is_practice`: public data, like the demo's) is the one exception:
  there its owner sees everything, per question: the outcome, the query as it ran, the first rows of its
  result beside the gold's, why they differ, and the gold query (`answers`); everyone sees the breakdowns.
- A submission the portal made by running a protocol shows, wherever it may be seen, that it did: the
  protocol, the endpoint's host, when, and the transcript's sha256 (`portal_run_mark`). The transcript
  itself (the questions, the schema, the model's answers) is its owner's and staff's alone
  (`transcript_run`), never on a public page or in an export.
- Two public submissions of one version may be compared with a paired test (`paired_comparison`): its
  counts of the questions each alone answers right, never which questions they are. Not two private ones:
  across many pairs of one's own files, those counts would add up to which answers are right.

Every page, API answer, export and chart takes a submission's scores and per-question lines from
`feedback_for` (or, for the public ranking, `public_scores` and `public_kept_verdicts`);
tests/leaderboard/test_feedback_policy.py fails when another module reads them directly.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Annotated, Any, Literal, cast

from django.utils import timezone
from django.utils.translation import gettext as _
from typing_extensions import TypedDict

from evaluation.scoring.scores_json import OverallJSON, Schema, ScoresJSON, VisibleScoresJSON
from evaluation.scoring.significance import (
    RANK_RULE,
    SIGNIFICANCE_LEVEL,
    PairedTestJSON,
    Pairs,
    paired_test,
)
from evaluation.scoring.vocabulary import DECIDED_BY_THE_FILE
from evaluation.selectors import practice_gold
from leaderboard.models import ProtocolRun, Submission
from leaderboard.verdicts import ea_verdicts

BREAKDOWNS = ("per_database", "per_hardness", "outcomes")


@dataclass(frozen=True)
class Disclosure:
    breakdowns: bool  # EA, EA-strict and TS-EA per database and per hardness level, outcome counts
    run_details: bool  # per question: outcome, verdict and error text of the run (staff only)
    own_queries: bool  # the predictions, and their static checks (owner and staff)
    # per question: the query as it ran, the first rows of its result and the gold's, why they differ, and
    # the gold query: a practice version's only, whose data is public
    answers: bool = False


PUBLIC = Disclosure(breakdowns=True, run_details=False, own_queries=False)
STAFF = Disclosure(breakdowns=True, run_details=True, own_queries=True)


def disclosure(submission: Submission, viewer: Any) -> Disclosure:
    practice = submission.version.is_practice
    if viewer.is_authenticated and viewer.is_staff:
        return replace(STAFF, answers=practice)
    is_owner = viewer.is_authenticated and submission.user_id == viewer.pk
    if practice:
        return Disclosure(breakdowns=True, run_details=True, own_queries=is_owner, answers=True)
    breakdowns = submission.is_public or submission.version.private_breakdowns
    return Disclosure(breakdowns=breakdowns, run_details=False, own_queries=is_owner)


@dataclass(frozen=True)
class Feedback:
    disclosure: Disclosure
    status: str  # as this viewer may see it: `running` until the result is released
    shown: VisibleScoresJSON | None  # the scores cut to what may be seen; None until scored and released
    questions: list[dict[str, Any]]  # one line per question for its owner and staff; empty for anyone else
    breakdowns_note: str  # why the breakdowns are not shown; empty when they are
    failure: str  # why scoring failed, once released
    history: list[ScoreHistoryEntry]  # every scoring, oldest first, overall scores only; once released

    @property
    def finished(self) -> bool:
        return self.status in (Submission.Status.SCORED, Submission.Status.FAILED)

    @property
    def status_label(self) -> str:
        return str(Submission.Status(self.status).label)


def feedback_for(submission: Submission, viewer: Any, *, now: datetime | None = None) -> Feedback:
    seen = disclosure(submission, viewer)
    status = visible_status(submission, viewer, now=now)
    # Scored: `scores` holds the ScoresJSON that `Submission.mark_scored` stored.
    scored = status == Submission.Status.SCORED and submission.scores
    return Feedback(
        disclosure=seen,
        status=status,
        shown=visible_scores(cast(ScoresJSON, submission.scores), seen) if scored else None,
        questions=question_lines(submission, seen) if seen.own_queries and scored else [],
        breakdowns_note="" if seen.breakdowns else breakdowns_hidden_note(),
        failure=submission.failure_reason if status == Submission.Status.FAILED else "",
        history=score_history(submission, viewer, now=now) if scored else [],
    )


class PortalRunJSON(TypedDict):
    """How the portal made a submission by running a protocol against the model's endpoint."""

    protocol: Annotated[str, Schema(description="The protocol run, e.g. termite-2turn-it/1")]
    endpoint_host: Annotated[str, Schema(description="The endpoint's host only: never its path or key")]
    run_at: Annotated[str, Schema(format="date-time", description="When the run ended")]
    transcript_sha256: Annotated[
        str, Schema(description="The sha256 of the run's transcript (canonical JSONL), which its owner holds")
    ]


def portal_run_mark(submission: Submission) -> PortalRunJSON | None:
    """The mark of a submission the portal ran, for anyone who may see the submission; None for an upload."""
    if not submission.is_portal_run or submission.portal_run_at is None:
        return None
    return {
        "protocol": submission.portal_protocol,
        "endpoint_host": submission.portal_endpoint_host,
        "run_at": submission.portal_run_at.isoformat(),
        "transcript_sha256": submission.transcript_sha256,
    }


def transcript_run(submission: Submission, viewer: Any) -> ProtocolRun | None:
    """The run that made the submission, whose transcript the viewer may read: its owner and staff only."""
    return ProtocolRun.objects.visible_to(viewer).filter(submission=submission).first()


class ScoreHistoryJSON(TypedDict):
    """One scoring of a submission: by which scorer and benchmark version, why (first, carried, scorer,
    errata), when (ISO 8601: its release time, `models.release_time`; staff see when it was really
    scored), and the overall scores it gave (never a breakdown)."""

    scorer_version: str
    benchmark_version: str
    reason: str
    scored_at: Annotated[
        str, Schema(format="date-time", description="When it was released (staff: when it was scored)")
    ]
    overall: OverallJSON


class ScoreHistoryEntry(ScoreHistoryJSON):
    reason_label: str  # the reason in words, for pages


def score_history(
    submission: Submission, viewer: Any, *, now: datetime | None = None
) -> list[ScoreHistoryEntry]:
    """Every scoring of the submission, oldest first, as far as released to this viewer, each at its
    release time; staff see all, at the time each was scored (how long it took is theirs to see)."""
    staff = viewer.is_authenticated and viewer.is_staff
    moment = now or timezone.now()
    return [
        {
            "scorer_version": scoring.scorer_version,
            "benchmark_version": scoring.benchmark_version,
            "reason": scoring.reason,
            "reason_label": str(scoring.get_reason_display()),
            "scored_at": (scoring.scored_at if staff else scoring.released_at).isoformat(),
            "overall": scoring.scores["overall"],
        }
        for scoring in submission.scorings.all()
        if staff or scoring.released_at <= moment
    ]


def visible_status(submission: Submission, viewer: Any, *, now: datetime | None = None) -> str:
    """The status, except that a finished submission stays `running` to participants until its release
    time: when a result appears must not tell how long its queries ran."""
    if viewer.is_authenticated and viewer.is_staff:
        return submission.status
    released = submission.released_at is None or submission.released_at <= (now or timezone.now())
    if submission.is_finished and not released:
        return Submission.Status.RUNNING
    return submission.status


def visible_scores(scores: ScoresJSON, seen: Disclosure) -> VisibleScoresJSON:
    """The scores JSON with the breakdowns set to None where they may not be seen (same keys, so every
    reader finds them). TS-EA goes where EA-strict goes: in `overall` always, in each breakdown's groups
    only with the breakdowns. Scores made before scorer 1.3.0 have no TS-EA keys, and none are made up:
    every reader shows TS-EA as unknown there."""
    # Casts: every ScoresJSON is a VisibleScoresJSON, but TypedDict keys are mutable, hence invariant.
    if seen.breakdowns:
        return cast(VisibleScoresJSON, scores)
    return cast(VisibleScoresJSON, {**scores, **dict.fromkeys(BREAKDOWNS)})


def operator_scores(submission: Submission) -> VisibleScoresJSON | None:
    """A scored submission's scores as a management command prints them to the operator, who sees what
    staff see: the object `manage.py score --json` prints. None until it is scored."""
    if submission.status != Submission.Status.SCORED or not submission.scores:
        return None
    return visible_scores(submission.scores, STAFF)


def public_scores(scores: ScoresJSON) -> VisibleScoresJSON:
    """The scores of a public submission, as the leaderboard and its exports show them to anyone."""
    return visible_scores(scores, PUBLIC)


def public_ea_verdicts(outcomes: Any) -> dict[str, bool] | None:
    """A public submission's EA verdict per scored question (`Submission.outcomes`), for the leaderboard
    to aggregate over whole databases (leaderboard/contamination.py): an aggregate of what the public
    breakdowns show already, never shown per question. None when the lines lack a verdict."""
    return ea_verdicts(outcomes)


def public_kept_verdicts(kept: Any) -> dict[str, bool] | None:
    """`public_ea_verdicts` of a public submission's outcome lines, as `Submission.ea_verdicts` keeps them
    (made of the lines when it was scored): what the ranking reads of a thousand rows."""
    return {question: bool(right) for question, right in kept.items()} if isinstance(kept, dict) else None


def question_lines(submission: Submission, seen: Disclosure) -> list[dict[str, Any]]:
    """Per question: the owner's SQL and what the static check said; for staff, what the run did too; on a
    practice version, everything (`answers`)."""
    gold = practice_gold(version=submission.version) if seen.answers else {}
    lines = []
    for item in submission.outcomes or []:
        outcome = item["outcome"]
        # Rows scored before the scorer said which verdicts were static count as run, except an outcome
        # the file alone decides.
        static = item.get("static", outcome in DECIDED_BY_THE_FILE)
        line = {
            "question_id": item["question_id"],
            "check": outcome if static else "submitted",
            "message": item.get("error") if static else None,
            "sql": submission.predictions.get(item["question_id"], ""),
        }
        if seen.run_details:
            line.update(outcome=outcome, error=item.get("error"), ea=item["ea"], ea_strict=item["ea_strict"])
        if seen.answers:
            detail = item.get("detail")
            line.update(
                gold_sql=gold.get(item["question_id"]),
                detail=detail,
                difference=difference_label(detail.get("difference")) if detail else "",
            )
        lines.append(line)
    return lines


def difference_label(difference: str | None) -> str:
    """Why a result differs from the gold's (`compare.difference`), in words; empty when it does not."""
    labels = {
        "columns": _("another number of columns"),
        "row_count": _("another number of rows"),
        "values": _("other values"),
        "order": _("the same rows in another order (the gold's ORDER BY fixes it)"),
        "strict_only": _("right by EA; rows or columns in another order for EA-strict"),
    }
    return labels.get(difference or "", "")


def breakdowns_hidden_note() -> str:
    return _(
        "EA per database and per hardness level and the outcome counts are shown once a submission is "
        "public: on a private one they would tell which of a few answers are right."
    )


# The paired test of two submissions: the compare page and GET /api/v1/compare.


class ComparisonJSON(PairedTestJSON):
    """Whether two submissions' EA differ by more than chance: McNemar's exact test and a paired bootstrap
    95% interval of the difference, over the questions scored for both (a prediction not submitted counts
    as wrong, as in EA). Counts only: never which questions differ."""

    a: Annotated[int, Schema(description="Submission A's id")]
    b: Annotated[int, Schema(description="Submission B's id")]
    version: Annotated[str, Schema(description="The benchmark version both were scored on")]
    significant: Annotated[
        bool,
        Schema(
            description="The leaderboard's rank rule: for two ranked rows, mcnemar_p below Holm's threshold over"
            " the leaderboard's pairs (the ranks say the same); for any other pair, mcnemar_p below 0.05"
        ),
    ]
    significantly_better: Annotated[
        Literal["a", "b"] | None, Schema(description="Which one is shown to be better; null when neither")
    ]
    comparisons: Annotated[
        int,
        Schema(
            description="The pairs of ranked rows Holm's correction counts; 0 when the two are not both ranked"
            " rows of the leaderboard (no correction)"
        ),
    ]
    threshold: Annotated[float, Schema(description="The p-value below which the difference is significant")]
    rule: Annotated[str, Schema(description="The rule's name, as the exports and citations give it")]


@dataclass(frozen=True)
class RankRule:
    """The leaderboard's rank rule as it judges a pair of its ranked rows (`ranking.rank_rule_for`): Holm's
    threshold over the pairs it compared."""

    threshold: float
    comparisons: int


# Why a pair gets no paired test.
Refusal = Literal["different_versions", "not_public", "not_computable"]


@dataclass(frozen=True)
class PairedComparison:
    shown: ComparisonJSON | None  # None when there is no test; `refusal` and `note` say why
    significant: bool  # by the rank rule (`ComparisonJSON.significant`)
    refusal: Refusal | None
    note: str


def paired_comparison(
    first: Submission, second: Submission, viewer: Any, *, rule: RankRule | None = None
) -> PairedComparison:
    """The paired test of two submissions the viewer may open, whose scores are released to them (the
    compare page's rule: `Submission.objects.visible_to` and `feedback_for(...).shown`).

    Both must be on the same version, and public (staff compare any two): the test's counts are a
    function of both files' verdicts together, so on private files, pair after pair, they would tell
    which answers are right. It reads both submissions' per-question verdicts and returns the aggregate
    only, never a question id. Scores whose per-question lines lack an EA verdict (or are missing) cannot
    be tested until they are rescored.
    """
    if first.version_id != second.version_id:
        return _refused(
            "different_versions",
            _("The paired test needs two submissions scored on the same benchmark version."),
        )
    staff = viewer.is_authenticated and viewer.is_staff
    if not staff and not all(s.is_public and not s.is_hidden for s in (first, second)):
        return _refused(
            "not_public",
            _(
                "The paired test is shown for two public submissions only: on private ones, many pairs "
                "together would tell which answers are right."
            ),
        )
    kept = dict(Submission.objects.filter(pk__in=[first.pk, second.pk]).values_list("pk", "ea_verdicts"))
    verdicts_a, verdicts_b = (
        public_kept_verdicts(kept.get(first.pk)),
        public_kept_verdicts(kept.get(second.pk)),
    )
    # The questions scored for both: on one version, all of them but a gold that failed at scoring time.
    common = sorted(verdicts_a.keys() & verdicts_b.keys()) if verdicts_a and verdicts_b else []
    if not verdicts_a or not verdicts_b or not common:
        return _refused(
            "not_computable",
            _(
                "The paired test cannot be computed: these scores were stored without a verdict per "
                "question. It can be once they are rescored."
            ),
        )
    test = paired_test(Pairs.of((verdicts_a[qid], verdicts_b[qid]) for qid in common))
    # Two ranked rows are judged as the leaderboard ranks them; any other pair on its own.
    threshold, comparisons = (rule.threshold, rule.comparisons) if rule else (SIGNIFICANCE_LEVEL, 0)
    significant = test.mcnemar_p < threshold
    better = "a" if test.pairs.only_a > test.pairs.only_b else "b"
    shown = cast(
        ComparisonJSON,
        {
            "a": first.pk,
            "b": second.pk,
            "version": first.version.label,
            **test.as_dict(),
            "significant": significant,
            "significantly_better": better if significant else None,
            "comparisons": comparisons,
            "threshold": threshold,
            "rule": RANK_RULE if rule else "McNemar's exact test, 5%",
        },
    )
    return PairedComparison(shown=shown, significant=significant, refusal=None, note="")


def _refused(refusal: Refusal, note: str) -> PairedComparison:
    return PairedComparison(shown=None, significant=False, refusal=refusal, note=note)
