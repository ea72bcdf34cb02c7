"""Watching for probing: the accounts of one version whose uploads look like attempts to learn the hidden
answers through many submissions rather than to measure a system, each finding with its evidence. Reads
only; staff act on it through `leaderboard.moderation` and `termite_site.accounts.services`.

Three detectors, plain functions over `Filed` records (one upload: who, when, its EA, its predictions and
their normal forms), so that they run without a database (`benchmarks/probing_speed.py` times them):

- `resubmissions`: a file that differs from one of the same account's earlier files in at most
  TERMITE_PROBING_MAX_CHANGED questions (at least one): change a prediction, watch whether EA moves.
- `trivial_files`: a file at least TERMITE_PROBING_TRIVIAL_SHARE of whose questions have a trivial
  prediction (none, one that reads no table, one that selects only constants, or one query repeated for
  many questions): a file that measures the few questions it really answers, not a system.
- `twin_files`: files of two accounts sharing at least TERMITE_PROBING_SIMILARITY of their predictions
  (Jaccard over their (question, normal form) pairs): one participant with several accounts has several
  quotas.

Predictions are compared by their normal form (`evaluation.scoring.normal_form`): a query rewritten with
other blanks, case or comments is the same query. `probing_report` reads a version's uploads, computes
each file's normal forms once (kept in one cache entry per version), runs the three and
groups the findings per account.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from itertools import combinations
from typing import Any, Literal, NamedTuple, TypeAlias, cast, get_args

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.utils.translation import gettext_lazy as _

from evaluation.models import BenchmarkVersion
from evaluation.scoring.normal_form import NORMAL_FORM_VERSION, normal_form
from evaluation.scoring.vocabulary import Dialect
from leaderboard import feedback
from leaderboard.models import Submission
from leaderboard.selectors import Quota, quota_for

logger = logging.getLogger(__name__)

# Why a prediction is trivial, in the order pages list them; a prediction counts under the first that fits.
TrivialKind: TypeAlias = Literal["not_submitted", "reads_no_table", "constant", "repeated"]
TRIVIAL_KINDS: tuple[TrivialKind, ...] = get_args(TrivialKind)
TRIVIAL_KIND_LABELS = {
    "not_submitted": _("no SQL"),
    "reads_no_table": _("reads no table"),
    "constant": _("selects only constants"),
    "repeated": _("the same query as other questions"),
}
# One query given for this many questions of a file is a filler, not an answer: two questions may share
# their gold, three rarely do (and a file with only a few such is far from the trivial share anyway).
REPEATED_AT_LEAST = 3
EXAMPLES_PER_KIND = 2
# Normal forms never change for a given text and NORMAL_FORM_VERSION: kept long, rebuilt when evicted.
FORMS_CACHE_SECONDS = 30 * 24 * 3600


@dataclass(frozen=True)
class Thresholds:
    max_changed: int  # a resubmission changing at most this many questions is an edit
    trivial_share: float  # a file with at least this share of trivial predictions is mostly trivial
    similarity: float  # two accounts' files sharing at least this share of predictions are twins
    common_share: float  # a prediction written by more than this share of the accounts is common

    @classmethod
    def from_settings(cls) -> Thresholds:
        return cls(
            max_changed=settings.TERMITE_PROBING_MAX_CHANGED,
            trivial_share=settings.TERMITE_PROBING_TRIVIAL_SHARE,
            similarity=settings.TERMITE_PROBING_SIMILARITY,
            common_share=settings.TERMITE_PROBING_COMMON_SHARE,
        )


class Form(NamedTuple):
    """One prediction as the detectors compare it: its normal form's digest, and what its text alone
    says (None: a real attempt at an answer)."""

    digest: int
    kind: TrivialKind | None


# (question id, digest of the normal form): one prediction, as two files can share it.
Entry: TypeAlias = tuple[str, int]


@dataclass(frozen=True)
class Filed:
    """One upload as the detectors read it."""

    id: int
    user_id: int
    created_at: datetime
    ea: float | None
    predictions: Mapping[str, str]  # question id -> SQL, as uploaded
    forms: Mapping[str, Form]  # question id -> its prediction's form, for every prediction
    missing: int  # the version's questions the file has no line for

    @cached_property
    def entries(self) -> frozenset[Entry]:
        """Its predictions with SQL: a blank one is no prediction, as a missing one is not."""
        return frozenset(
            (qid, form.digest) for qid, form in self.forms.items() if form.kind != "not_submitted"
        )


def forms_of(
    predictions: Mapping[str, str], *, source: Dialect, memo: dict[tuple[str, str], Form] | None = None
) -> dict[str, Form]:
    """The form of each prediction. `memo` keeps the forms of texts already seen: resubmissions repeat
    most of their texts, and sqlglot reads about two thousand queries a second."""
    memo = {} if memo is None else memo
    forms = {}
    for qid, sql in predictions.items():
        key = (source, sql)
        if key not in memo:
            found = normal_form(sql, source=source)
            kind: TrivialKind | None = (
                "not_submitted"
                if found.empty
                else "reads_no_table"
                if found.reads_no_table
                else "constant"
                if found.constant
                else None
            )
            memo[key] = Form(found.digest, kind)
        forms[qid] = memo[key]
    return forms


# Near-duplicate resubmissions.


@dataclass(frozen=True)
class Change:
    question_id: str
    before: str | None  # the earlier file's SQL; None where it had none
    after: str | None
    # What scoring said of each, once `probing_report` has read the outcomes (None: not scored).
    outcome_before: str | None = None
    outcome_after: str | None = None


@dataclass(frozen=True)
class Edit:
    """A file that changes at most `max_changed` predictions of one of the same account's earlier files."""

    user_id: int
    earlier: int
    later: int
    earlier_at: datetime
    later_at: datetime
    ea_before: float | None
    ea_after: float | None
    changes: tuple[Change, ...]
    # How many edits in a row end with this one: 1 when the earlier file was no edit itself.
    chain: int

    @property
    def changed(self) -> tuple[str, ...]:
        return tuple(change.question_id for change in self.changes)

    @property
    def ea_change(self) -> float | None:
        if self.ea_before is None or self.ea_after is None:
            return None
        return self.ea_after - self.ea_before


def resubmissions(filed: Iterable[Filed], *, max_changed: int) -> list[Edit]:
    """Each file whose predictions differ from one of the same account's earlier files in 1 to
    `max_changed` questions, against the earlier file it differs from least (the latest of those on a
    tie). A file identical to an earlier one is a re-upload: it teaches nothing new, and is no edit."""
    edits = []
    for files in _by_user(filed).values():
        chains: dict[int, int] = {}
        for position, later in enumerate(files):
            base: Filed | None = None
            fewest: set[str] = set()
            for earlier in reversed(files[:position]):
                # Each changed question changes the number of predictions by at most one, and puts at
                # most two entries in the symmetric difference: cheap bounds before the exact count.
                if abs(len(earlier.entries) - len(later.entries)) > max_changed:
                    continue
                differ = earlier.entries ^ later.entries
                if len(differ) > 2 * max_changed:
                    continue
                changed = {qid for qid, _digest in differ}
                if not changed:
                    base = None
                    break
                if len(changed) <= max_changed and (base is None or len(changed) < len(fewest)):
                    base, fewest = earlier, changed
            if base is None:
                continue
            chains[later.id] = chains.get(base.id, 0) + 1
            edits.append(
                Edit(
                    user_id=later.user_id,
                    earlier=base.id,
                    later=later.id,
                    earlier_at=base.created_at,
                    later_at=later.created_at,
                    ea_before=base.ea,
                    ea_after=later.ea,
                    changes=tuple(
                        Change(qid, base.predictions.get(qid), later.predictions.get(qid))
                        for qid in sorted(fewest)
                    ),
                    chain=chains[later.id],
                )
            )
    return edits


# Mostly-trivial files.


@dataclass(frozen=True)
class Example:
    question_id: str
    kind: TrivialKind
    sql: str


@dataclass(frozen=True)
class TrivialFile:
    user_id: int
    submission: int
    created_at: datetime
    ea: float | None
    questions: int  # its predictions and the questions it left out
    counts: Mapping[TrivialKind, int]  # every kind, in TRIVIAL_KINDS order
    examples: tuple[Example, ...]  # a few of each kind but a missing line, which has no SQL to show

    @property
    def trivial(self) -> int:
        return sum(self.counts.values())

    @property
    def share(self) -> float:
        return self.trivial / self.questions

    @property
    def counted(self) -> list[tuple[str, int]]:
        """(label, count) of the kinds found, for pages."""
        return [(str(TRIVIAL_KIND_LABELS[kind]), n) for kind, n in self.counts.items() if n]


def trivial_kinds(file: Filed, *, repeated_at_least: int = REPEATED_AT_LEAST) -> dict[str, TrivialKind]:
    """Question id -> why its prediction is trivial, for the file's trivial predictions."""
    kinds: dict[str, TrivialKind] = {qid: form.kind for qid, form in file.forms.items() if form.kind}
    uses = Counter(form.digest for qid, form in file.forms.items() if qid not in kinds)
    for qid, form in file.forms.items():
        if qid not in kinds and uses[form.digest] >= repeated_at_least:
            kinds[qid] = "repeated"
    return kinds


def trivial_files(
    filed: Iterable[Filed], *, min_share: float, repeated_at_least: int = REPEATED_AT_LEAST
) -> list[TrivialFile]:
    """Each file at least `min_share` of whose questions (its predictions and the questions it left out)
    have a trivial prediction or none."""
    found = []
    for file in filed:
        questions = len(file.forms) + file.missing
        if not questions:
            continue
        kinds = trivial_kinds(file, repeated_at_least=repeated_at_least)
        counts = Counter(kinds.values())
        counts["not_submitted"] += file.missing
        if sum(counts.values()) / questions < min_share:
            continue
        examples: list[Example] = []
        for kind in TRIVIAL_KINDS:
            shown: set[int] = set()  # one example per repeated query, not the same one twice
            for qid in sorted(qid for qid, found_kind in kinds.items() if found_kind == kind):
                digest = file.forms[qid].digest
                if len(shown) == EXAMPLES_PER_KIND or digest in shown:
                    continue
                shown.add(digest)
                examples.append(Example(qid, kind, file.predictions[qid]))
        found.append(
            TrivialFile(
                user_id=file.user_id,
                submission=file.id,
                created_at=file.created_at,
                ea=file.ea,
                questions=questions,
                counts={kind: counts[kind] for kind in TRIVIAL_KINDS},
                examples=tuple(examples),
            )
        )
    return found


# Near-identical files across accounts.


@dataclass(frozen=True)
class Twins:
    """The most similar pair of files of two accounts; `first` is the earlier of the two."""

    first_user: int
    second_user: int
    first: int
    second: int
    first_at: datetime
    second_at: datetime
    similarity: float  # shared / union of the two files' predictions
    shared: int
    union: int
    distinctive: int  # of the shared predictions, those few accounts wrote (see `twin_files`)
    pairs: int  # pairs of files of these two accounts at or above the similarity threshold


def common_limit(accounts: int, common_share: float) -> int:
    """A prediction written by more accounts than this is common. Never below two, so that any two
    accounts' shared predictions count where there are few accounts."""
    return max(2, int(common_share * accounts))


def twin_files(filed: Iterable[Filed], *, min_similarity: float, common_share: float) -> list[Twins]:
    """Pairs of accounts with files sharing at least `min_similarity` of their predictions, compared as
    Jaccard over (question, normal form): what staff can check by eye, "these two files give the same
    query for 92 % of their questions".

    Comparing every pair of files would cost files² x questions. Instead an inverted index from each
    prediction to the accounts that wrote it counts, per pair of accounts, the predictions they share.
    A prediction written by more than `common_limit` accounts (the easy question's obvious query) is
    left out of that count: it is evidence of nothing about two accounts, and it is what would make the
    count quadratic. Two accounts are then compared file by file only if their shared distinctive
    predictions, plus the most common ones any file of theirs holds, could reach the threshold: a bound,
    so no pair that shares a distinctive prediction and reaches the threshold is missed. The similarity
    reported counts every prediction, common ones too; `distinctive` says how many of the shared were not
    common. Pairs sharing only common predictions are not reported (a ring of more accounts than the
    limit, all uploading the same file, would go unseen here; the resubmission detector still sees each).
    """
    by_user: dict[int, list[Filed]] = {}
    for user, files in _by_user(filed).items():
        with_sql = [file for file in files if file.entries]
        if with_sql:
            by_user[user] = with_sql
    if len(by_user) < 2:
        return []
    holders: dict[Entry, list[int]] = defaultdict(list)
    for user, files in by_user.items():
        for entry in frozenset().union(*(file.entries for file in files)):
            holders[entry].append(user)
    limit = common_limit(len(by_user), common_share)
    common = frozenset(entry for entry, users in holders.items() if len(users) > limit)
    shared: Counter[tuple[int, int]] = Counter()
    for users in holders.values():
        if 2 <= len(users) <= limit:
            shared.update(combinations(users, 2))  # each list is in by_user's order: one key per pair
    smallest = {user: min(len(file.entries) for file in files) for user, files in by_user.items()}
    most_common = {user: max(len(file.entries & common) for file in files) for user, files in by_user.items()}
    found = []
    for (one, other), distinctive in shared.items():
        if distinctive + min(most_common[one], most_common[other]) < min_similarity * max(
            smallest[one], smallest[other]
        ):
            continue
        twins = _most_similar(by_user[one], by_user[other], min_similarity=min_similarity, common=common)
        if twins is not None:
            found.append(twins)
    found.sort(key=lambda twins: (-twins.similarity, twins.first, twins.second))
    return found


def _most_similar(
    files: Sequence[Filed], others: Sequence[Filed], *, min_similarity: float, common: frozenset[Entry]
) -> Twins | None:
    best: tuple[float, int, Filed, Filed] | None = None
    pairs = 0
    for file in files:
        for other in others:
            shared = len(file.entries & other.entries)
            similarity = shared / (len(file.entries) + len(other.entries) - shared)
            if similarity < min_similarity:
                continue
            pairs += 1
            if best is None or (similarity, shared) > best[:2]:
                best = (similarity, shared, file, other)
    if best is None:
        return None
    similarity, shared, first, second = best
    if (second.created_at, second.id) < (first.created_at, first.id):
        first, second = second, first
    return Twins(
        first_user=first.user_id,
        second_user=second.user_id,
        first=first.id,
        second=second.id,
        first_at=first.created_at,
        second_at=second.created_at,
        similarity=similarity,
        shared=shared,
        union=len(first.entries | second.entries),
        distinctive=len((first.entries & second.entries) - common),
        pairs=pairs,
    )


def _by_user(filed: Iterable[Filed]) -> dict[int, list[Filed]]:
    """Files per account, oldest first."""
    grouped: dict[int, list[Filed]] = defaultdict(list)
    for file in sorted(filed, key=lambda file: (file.created_at, file.id)):
        grouped[file.user_id].append(file)
    return dict(grouped)


# The report of one version, per account.


@dataclass(frozen=True)
class TwinOf:
    """A `Twins` finding as one of its two accounts sees it."""

    other: Any  # the other account (a User)
    mine: int
    theirs: int
    twins: Twins


@dataclass
class AccountFindings:
    user: Any  # a User
    uploads: int  # to this version, failed ones and carried-over ones aside
    quota: Quota
    edits: list[Edit] = field(default_factory=list)
    trivial: list[TrivialFile] = field(default_factory=list)
    twins: list[TwinOf] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)  # those the evidence names, newest first

    @property
    def longest_chain(self) -> int:
        return max((edit.chain for edit in self.edits), default=0)

    @property
    def findings(self) -> int:
        return len(self.edits) + len(self.trivial) + len(self.twins)


@dataclass(frozen=True)
class ProbingReport:
    version: BenchmarkVersion
    thresholds: Thresholds
    uploads: int
    accounts_seen: int
    accounts: list[AccountFindings]  # those with a finding, the most findings first


def probing_report(*, version: BenchmarkVersion, thresholds: Thresholds | None = None) -> ProbingReport:
    """The three detectors on every upload to `version`, grouped per account with what staff need to act.
    For staff only: the evidence holds the participants' SQL and what the run said of it.

    An upload is what counts towards the quota: a failed submission told its owner nothing, and one carried
    over from an earlier version was not uploaded to this one; a withdrawn or hidden one did tell.
    """
    thresholds = thresholds or Thresholds.from_settings()
    rows = list(
        Submission.objects.filter(version=version)
        .counting_towards_quota()
        .order_by("created_at", "pk")
        .values_list("pk", "user_id", "created_at", "ea", "dialect", "missing_count", "predictions")
    )
    # `dialect` is a Dialect: the field's choices are the dialects.
    forms = _cached_forms(
        version,
        {pk: (cast(Dialect, dialect), predictions) for pk, _u, _c, _e, dialect, _m, predictions in rows},
    )
    filed = [
        Filed(pk, user_id, created_at, ea, predictions, forms[pk], missing)
        for pk, user_id, created_at, ea, _dialect, missing, predictions in rows
    ]
    edits = _with_outcomes(resubmissions(filed, max_changed=thresholds.max_changed))
    trivial = trivial_files(filed, min_share=thresholds.trivial_share)
    twins = twin_files(filed, min_similarity=thresholds.similarity, common_share=thresholds.common_share)

    flagged = {edit.user_id for edit in edits} | {found.user_id for found in trivial}
    flagged |= {user for pair in twins for user in (pair.first_user, pair.second_user)}
    users = get_user_model().objects.in_bulk(flagged)
    uploads = Counter(file.user_id for file in filed)
    accounts = {
        pk: AccountFindings(user=user, uploads=uploads[pk], quota=quota_for(user=user, version=version))
        for pk, user in users.items()
    }
    for edit in edits:
        accounts[edit.user_id].edits.append(edit)
    for found in trivial:
        accounts[found.user_id].trivial.append(found)
    for pair in twins:
        accounts[pair.first_user].twins.append(TwinOf(users[pair.second_user], pair.first, pair.second, pair))
        accounts[pair.second_user].twins.append(TwinOf(users[pair.first_user], pair.second, pair.first, pair))
    named = {edit.earlier for edit in edits} | {edit.later for edit in edits}
    named |= {found.submission for found in trivial} | {p.first for p in twins} | {p.second for p in twins}
    for submission in Submission.objects.filter(pk__in=named).defer("predictions", "outcomes", "scores"):
        accounts[submission.user_id].submissions.append(submission)
    for account in accounts.values():
        account.edits.reverse()  # newest first, as the submissions
    ordered = sorted(accounts.values(), key=lambda account: (-account.findings, account.user.username))
    return ProbingReport(
        version=version,
        thresholds=thresholds,
        uploads=len(filed),
        accounts_seen=len(uploads),
        accounts=ordered,
    )


def _cached_forms(
    version: BenchmarkVersion, files: Mapping[int, tuple[Dialect, Mapping[str, str]]]
) -> dict[int, dict[str, Form]]:
    """The forms of each file of `version`, from the cache where it has them.

    One cache entry per version holds the forms of its files, each under a digest of its predictions
    (not the file's sha256: the forms are computed from the predictions, whatever the file held). One
    entry, not one per file: the embedded mode's file cache culls at random past 300 entries, and a
    thousand files would push out the rankings kept there.
    """
    keys = {pk: _file_key(dialect, predictions) for pk, (dialect, predictions) in files.items()}
    entry = f"probing-forms:{version.pk}:{NORMAL_FORM_VERSION}"
    try:
        stored = cache.get(entry) or {}
    except Exception as error:  # a cache outage makes the page slower, never unavailable
        logger.warning("probing cache unavailable (%s)", type(error).__name__)
        stored = {}
    memo: dict[tuple[str, str], Form] = {}
    packed: dict[str, _Packed] = {}
    found: dict[int, dict[str, Form]] = {}
    for pk, (dialect, predictions) in files.items():
        key = keys[pk]
        if key not in packed:
            packed[key] = stored.get(key) or _packed(forms_of(predictions, source=dialect, memo=memo))
        digests, kinds = packed[key]
        found[pk] = {qid: Form(digest, kinds.get(qid)) for qid, digest in digests.items()}
    if packed.keys() != stored.keys():  # files came, or went (the entry keeps only the version's own)
        try:
            cache.set(entry, packed, timeout=FORMS_CACHE_SECONDS)
        except Exception as error:
            logger.warning("probing cache unavailable (%s)", type(error).__name__)
    return found


# A file's forms as the cache keeps them: question id -> digest, and the kinds of the trivial ones.
_Packed: TypeAlias = tuple[dict[str, int], dict[str, TrivialKind]]


def _packed(forms: Mapping[str, Form]) -> _Packed:
    return (
        {qid: form.digest for qid, form in forms.items()},
        {qid: form.kind for qid, form in forms.items() if form.kind},
    )


def _file_key(dialect: str, predictions: Mapping[str, str]) -> str:
    text = json.dumps(predictions, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(f"{dialect}\n{text}".encode()).hexdigest()


def _with_outcomes(edits: list[Edit]) -> list[Edit]:
    """The edits with what scoring said of each changed prediction, before and after: run details, which
    only staff see (`feedback.STAFF`), as only staff see this report."""
    ids = {edit.earlier for edit in edits} | {edit.later for edit in edits}
    outcomes = {
        submission.pk: {
            line["question_id"]: line["outcome"]
            for line in feedback.question_lines(submission, feedback.STAFF)
        }
        for submission in Submission.objects.filter(pk__in=ids)
    }
    return [
        replace(
            edit,
            changes=tuple(
                replace(
                    change,
                    outcome_before=outcomes[edit.earlier].get(change.question_id),
                    outcome_after=outcomes[edit.later].get(change.question_id),
                )
                for change in edit.changes
            ),
        )
        for edit in edits
    ]


def report_as_json(report: ProbingReport) -> dict[str, Any]:
    """The report as `manage.py probing_report --json` prints it: plain JSON, dates in ISO 8601."""
    return {
        "version": report.version.label,
        "thresholds": {
            "max_changed": report.thresholds.max_changed,
            "trivial_share": report.thresholds.trivial_share,
            "similarity": report.thresholds.similarity,
            "common_share": report.thresholds.common_share,
        },
        "uploads": report.uploads,
        "accounts_seen": report.accounts_seen,
        "accounts": [
            {
                "user_id": account.user.pk,
                "username": account.user.username,
                "is_active": account.user.is_active,
                "uploads": account.uploads,
                "quota": {"per_day": account.quota.per_day, "per_version": account.quota.per_version},
                "longest_chain": account.longest_chain,
                "edits": [
                    {
                        "earlier": edit.earlier,
                        "later": edit.later,
                        "earlier_at": edit.earlier_at.isoformat(),
                        "later_at": edit.later_at.isoformat(),
                        "ea_before": edit.ea_before,
                        "ea_after": edit.ea_after,
                        "chain": edit.chain,
                        "changes": [
                            {
                                "question_id": change.question_id,
                                "before": change.before,
                                "after": change.after,
                                "outcome_before": change.outcome_before,
                                "outcome_after": change.outcome_after,
                            }
                            for change in edit.changes
                        ],
                    }
                    for edit in account.edits
                ],
                "trivial": [
                    {
                        "submission": found.submission,
                        "created_at": found.created_at.isoformat(),
                        "ea": found.ea,
                        "questions": found.questions,
                        "share": found.share,
                        "counts": dict(found.counts),
                        "examples": [
                            {"question_id": example.question_id, "kind": example.kind, "sql": example.sql}
                            for example in found.examples
                        ],
                    }
                    for found in account.trivial
                ],
                "twins": [
                    {
                        "other_user_id": twin.other.pk,
                        "other_username": twin.other.username,
                        "submission": twin.mine,
                        "other_submission": twin.theirs,
                        "similarity": twin.twins.similarity,
                        "shared": twin.twins.shared,
                        "union": twin.twins.union,
                        "distinctive": twin.twins.distinctive,
                        "pairs": twin.twins.pairs,
                    }
                    for twin in account.twins
                ],
            }
            for account in report.accounts
        ],
    }
