"""Scores that stay true: rescoring a version's submissions, and carrying them to a derived version.

A rescoring is one job per submission on the scoring queue. Each job scores the stored predictions with
the current scorer and adds the result to the submission's history; a job whose submission already has a
scoring for this rescoring does nothing, so a rescoring started again after a crash only does what is
left, and two workers never write twice. The last job to finish records what moved on the public
leaderboard (rows whose EA or rank changed, and their ranks by the leaderboard's rank rule), for the
changelog.

Carrying: when staff publish a version derived from another and ask for it, each live scored submission
of the parent is copied (owner, model card, visibility, predictions of the questions the new version
still has) and scored on the new version; the copy links back to its origin and the owner is told.
"""

from __future__ import annotations

import logging
from typing import Any

from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _

from evaluation.database_cache import DatabaseUnavailable
from evaluation.grading import outcome_rows, score_version
from evaluation.models import BenchmarkVersion
from evaluation.scoring.score import SCORER_VERSION
from evaluation.scoring.significance import paired_ranks
from evaluation.selectors import question_ids_by_database
from leaderboard.feedback import public_ea_verdicts
from leaderboard.models import Rescoring, Scoring, Submission
from leaderboard.queue import enqueue_scoring
from leaderboard.services import leaderboard_changed, submission_enqueue
from termite_site.accounts.models import User

logger = logging.getLogger(__name__)

# The job by its dotted path, as RQ stores it (leaderboard/jobs.py calls this module).
RESCORE_JOB = "leaderboard.jobs.rescore_submission"
# Why staff may start a rescoring; a rebuild starts its own (`rescore_after_rebuild`).
REQUESTABLE_REASONS = [Rescoring.Reason.SCORER, Rescoring.Reason.ERRATA]


def rescoring_start(
    *, version: BenchmarkVersion, reason: str, requested_by: User | None = None
) -> Rescoring | None:
    """Rescore with the current scorer every scored, live submission of `version` that an older scorer
    scored (every one, for errata or a rebuild); resumes the unfinished rescoring of the version by the
    current scorer if there is one, enqueueing only what it has not done. None when there is nothing to
    rescore."""
    with transaction.atomic():
        rescoring = (
            Rescoring.objects.select_for_update()
            .filter(version=version, scorer_version=SCORER_VERSION, finished_at__isnull=True)
            .first()
        ) or _rescoring_create(version=version, reason=reason, requested_by=requested_by)
        if rescoring is None:
            return None
    done = set(rescoring.scorings.values_list("submission_id", flat=True))
    for submission_id in rescoring.submission_ids:
        if submission_id not in done:
            _enqueue(rescoring, submission_id)
    _finish_if_done(rescoring.pk)
    rescoring.refresh_from_db()
    return rescoring


def rescore_after_rebuild(sender: object, *, version: BenchmarkVersion, **kwargs: object) -> None:
    """Receiver of `version_rebuilt`: every scored submission of the version was scored on the copies just
    replaced. The rescoring is recorded in the rebuild's own transaction, so that a crash after the rebuild
    leaves it for `rescoring_start` to resume; its jobs go on the queue once the rebuild commits, so that
    none runs on the old copies."""
    if _rescoring_create(version=version, reason=Rescoring.Reason.REBUILD, requested_by=None) is not None:
        transaction.on_commit(lambda: rescoring_start(version=version, reason=Rescoring.Reason.REBUILD))


def _rescoring_create(
    *, version: BenchmarkVersion, reason: str, requested_by: User | None
) -> Rescoring | None:
    targets = version.submissions.filter(status=Submission.Status.SCORED, withdrawn_at__isnull=True)
    if reason == Rescoring.Reason.SCORER:
        targets = targets.exclude(scorer_version=SCORER_VERSION)
    if not targets.exists():
        return None
    return Rescoring.objects.create(
        version=version,
        scorer_version=SCORER_VERSION,
        reason=reason,
        requested_by=requested_by,
        submission_ids=sorted(targets.values_list("pk", flat=True)),
    )


def _enqueue(rescoring: Rescoring, submission_id: int) -> None:
    try:
        enqueue_scoring(
            RESCORE_JOB, submission_id, rescoring.pk, job_id=f"rescore-{rescoring.pk}-{submission_id}"
        )
    except Exception as error:  # starting the rescoring again enqueues what is left
        logger.warning(
            "rescoring %s: submission %s not enqueued (%s)", rescoring.pk, submission_id, type(error).__name__
        )


def submission_rescore(*, submission_id: int, rescoring_id: int) -> str:
    """One job of a rescoring: score the stored predictions again; idempotent."""
    rescoring = Rescoring.objects.select_related("version").get(pk=rescoring_id)
    if Scoring.objects.filter(submission_id=submission_id, rescoring=rescoring).exists():
        return "skipped: already rescored"
    submission = Submission.objects.select_related("version").get(pk=submission_id)
    started = timezone.now()
    try:
        report = score_version(
            version=submission.version, predictions=submission.predictions, dialect=submission.dialect
        )
    except DatabaseUnavailable as error:
        logger.error("rescoring %s, submission %s: %s", rescoring_id, submission_id, error)
        return "failed"
    with transaction.atomic():
        locked = Submission.objects.select_for_update().select_related("version").get(pk=submission_id)
        if Scoring.objects.filter(submission=locked, rescoring=rescoring).exists():
            return "skipped: already rescored"
        locked.mark_scored(
            scores=report.as_dict(),
            outcomes=outcome_rows(report),
            reason=rescoring.reason,
            rescoring=rescoring,
            started=started,
        )
    leaderboard_changed(version=submission.version)
    _finish_if_done(rescoring_id)
    return "rescored"


def _finish_if_done(rescoring_id: int) -> None:
    with transaction.atomic():
        rescoring = Rescoring.objects.select_for_update().get(pk=rescoring_id)
        if rescoring.finished_at is not None or rescoring.done < rescoring.total:
            return
        rescoring.moved = _moved(rescoring)
        rescoring.finished_at = timezone.now()
        rescoring.save(update_fields=["moved", "finished_at"])


def _moved(rescoring: Rescoring) -> list[dict[str, Any]]:
    """The public rows whose EA or rank this rescoring changed, with their ranks among the public rows it
    rescored, before and after, by the leaderboard's rank rule (`significance.paired_ranks`) on the verdicts
    of the scoring before and of this one."""
    before: dict[int, Scoring] = {}
    after: dict[int, Scoring] = {}
    names = {}
    for submission in Submission.objects.ranked(rescoring.version).filter(pk__in=rescoring.submission_ids):
        history = list(submission.scorings.all())
        new = next((s for s in history if s.rescoring_id == rescoring.pk), None)
        old = [s for s in history if new is not None and (s.scored_at, s.pk) < (new.scored_at, new.pk)]
        if new is None or not old:
            continue
        before[submission.pk], after[submission.pk] = old[-1], new
        names[submission.pk] = submission.model_name
    rank_before, rank_after = _ranks(before), _ranks(after)
    moved = [
        {
            "submission": pk,
            "model_name": names[pk],
            "ea_before": before[pk].scores["overall"]["ea"],
            "ea_after": after[pk].scores["overall"]["ea"],
            "rank_before": rank_before.get(pk),
            "rank_after": rank_after.get(pk),
        }
        for pk in after
    ]
    return sorted(
        (
            row
            for row in moved
            if row["ea_before"] != row["ea_after"] or row["rank_before"] != row["rank_after"]
        ),
        key=lambda row: (row["rank_after"] is None, row["rank_after"] or 0, -row["ea_after"]),
    )


def _ranks(scorings: dict[int, Scoring]) -> dict[int, int]:
    """The rank rule over these scorings' verdicts; a scoring stored without verdicts takes no rank."""
    verdicts = {
        pk: found for pk, scoring in scorings.items() if (found := public_ea_verdicts(scoring.outcomes))
    }
    return paired_ranks(verdicts).ranks


def carry_on_publish(
    sender: object, *, version: BenchmarkVersion, carry_submissions: bool, **kwargs: Any
) -> None:
    """`evaluation.signals.version_published`: carry the parent's submissions when staff asked for it."""
    if carry_submissions:
        version_carry_submissions(version=version)


def version_carry_submissions(*, version: BenchmarkVersion) -> list[Submission]:
    """Copy every scored, live submission of the version `version` derives from onto it, and score each
    from its stored predictions; the owners are told. Submissions already carried are not carried again."""
    parent = version.derived_from
    if parent is None:
        return []
    known = {qid for ids in question_ids_by_database(version=version).values() for qid in ids}
    already = set(version.submissions.exclude(carried_from=None).values_list("carried_from_id", flat=True))
    carried = []
    with transaction.atomic():
        for origin in parent.submissions.filter(status=Submission.Status.SCORED, withdrawn_at__isnull=True):
            if origin.pk in already:
                continue
            copy = Submission(
                user_id=origin.user_id,
                team_id=origin.team_id,
                version=version,
                carried_from=origin,
                predictions={qid: sql for qid, sql in origin.predictions.items() if qid in known},
                file_name=origin.file_name,
                file_sha256=origin.file_sha256,
                file_format=origin.file_format,
                scorer_version=SCORER_VERSION,
                is_hidden=origin.is_hidden,
                moderation_reason=origin.moderation_reason,
            )
            for field in Submission.MODEL_CARD_FIELDS:
                setattr(copy, field, getattr(origin, field))
            copy.missing_count = len(known - set(copy.predictions))
            copy.save()
            carried.append(copy)

        def score_and_tell() -> None:
            for submission in carried:
                _score_and_tell(submission)

        transaction.on_commit(score_and_tell)
    return carried


def _score_and_tell(submission: Submission) -> None:
    submission_enqueue(submission=submission)
    origin = submission.carried_from
    send_mail(
        _("Your submission was carried over to %(version)s") % {"version": submission.version},
        _(
            "Your submission #%(origin)s (%(model)s) on %(old)s has been carried over to %(new)s as #%(pk)s "
            "and scored there from the same predictions. Questions the new version removed no longer count; "
            "questions it added count as not submitted. Its page on the portal: %(url)s"
        )
        % {
            "origin": origin.pk if origin else "",
            "model": submission.model_name,
            "old": origin.version if origin else "",
            "new": submission.version,
            "pk": submission.pk,
            "url": reverse("leaderboard:submission_detail", args=[submission.pk]),
        },
        None,
        [submission.user.email],
        fail_silently=True,
    )
