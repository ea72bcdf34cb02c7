"""Watching for probing: each detector on hand-made files (found and not found, its threshold at the edge,
its evidence), then the report of a stored version, per account."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from itertools import combinations

import pytest

from evaluation.services import version_create_draft
from leaderboard import probing
from leaderboard.models import Submission, SubmissionQuota
from leaderboard.probing import (
    Filed,
    Thresholds,
    common_limit,
    forms_of,
    probing_report,
    report_as_json,
    resubmissions,
    trivial_files,
    twin_files,
)
from tests.leaderboard.scored import QUESTION_IDS, outcome_lines, scored_fields

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def answers(count: int = 10, *, prefix: str = "q") -> dict[str, str]:
    """`count` real-looking predictions, one per question, each reading its own table."""
    return {f"{prefix}{n:02d}": f"SELECT nome FROM tabella_{n} WHERE anno > {1990 + n}" for n in range(count)}


def changed(predictions: dict[str, str], *questions: str) -> dict[str, str]:
    return {**predictions, **{qid: f"SELECT altro FROM tabella_x WHERE id = '{qid}'" for qid in questions}}


def filed(pk: int, predictions: dict[str, str], *, user: int = 1, ea=None, missing: int = 0) -> Filed:
    return Filed(
        id=pk,
        user_id=user,
        created_at=START + timedelta(hours=pk),
        ea=ea,
        predictions=predictions,
        forms=forms_of(predictions, source="mysql"),
        missing=missing,
    )


# Near-duplicate resubmissions.


def test_a_file_changing_a_few_predictions_of_an_earlier_one_is_an_edit_with_the_evidence():
    first = answers()
    second = changed(first, "q03", "q07")
    [edit] = resubmissions([filed(1, first, ea=0.4), filed(2, second, ea=0.5)], max_changed=5)
    assert (edit.user_id, edit.earlier, edit.later) == (1, 1, 2)
    assert (edit.earlier_at, edit.later_at) == (START + timedelta(hours=1), START + timedelta(hours=2))
    assert edit.changed == ("q03", "q07")
    assert [(c.before, c.after) for c in edit.changes] == [(first[q], second[q]) for q in ("q03", "q07")]
    assert (edit.ea_before, edit.ea_after) == (0.4, 0.5)
    assert edit.ea_change == pytest.approx(0.1)
    assert edit.chain == 1


@pytest.mark.parametrize(("changes", "is_edit"), [(1, True), (5, True), (6, False)])
def test_an_edit_changes_at_least_one_and_at_most_max_changed_predictions(changes, is_edit):
    first = answers(20)
    second = changed(first, *list(first)[:changes])
    found = resubmissions([filed(1, first), filed(2, second)], max_changed=5)
    assert bool(found) is is_edit


def test_a_file_identical_to_an_earlier_one_is_a_re_upload_not_an_edit():
    first = answers()
    rewritten = {qid: sql.lower().replace(" ", "\n  ") + " -- di nuovo" for qid, sql in first.items()}
    assert resubmissions([filed(1, first), filed(2, rewritten)], max_changed=5) == []


def test_a_prediction_added_or_dropped_is_a_change_and_a_blank_one_is_no_prediction():
    first = answers()
    dropped = {qid: sql for qid, sql in first.items() if qid != "q04"}
    [edit] = resubmissions([filed(1, first), filed(2, dropped)], max_changed=5)
    assert edit.changed == ("q04",) and edit.changes[0].after is None
    blank = {**dropped, "q04": "  "}
    assert resubmissions([filed(1, dropped), filed(2, blank)], max_changed=5) == []


def test_files_of_different_accounts_are_never_edits_of_each_other():
    first = answers()
    assert (
        resubmissions([filed(1, first, user=1), filed(2, changed(first, "q01"), user=2)], max_changed=5) == []
    )


def test_an_edit_is_measured_against_the_earlier_file_it_differs_from_least():
    first = answers(20)
    second = changed(first, *list(first)[:4])
    third = changed(second, "q10")
    edits = resubmissions([filed(1, first), filed(2, second), filed(3, third)], max_changed=5)
    assert [(edit.earlier, edit.later, len(edit.changes)) for edit in edits] == [(1, 2, 4), (2, 3, 1)]


def test_edits_in_a_row_make_a_chain_counted_per_account():
    files = [filed(1, answers(20))]
    for pk, question in enumerate(["q01", "q02", "q03"], start=2):
        files.append(filed(pk, changed(files[-1].predictions, question)))
    files.append(filed(9, answers(20, prefix="z")))  # another system: starts no chain
    assert [edit.chain for edit in resubmissions(files, max_changed=5)] == [1, 2, 3]


# Mostly-trivial files.


def test_a_mostly_trivial_file_is_found_with_its_share_counts_per_kind_and_examples():
    predictions = {
        **answers(4),
        "r1": "SELECT 'Roma'",
        "r2": "SELECT 1",
        "c1": "SELECT 1 FROM libri",
        "b1": "",
        **{f"s{n}": "SELECT * FROM libri" for n in range(3)},
    }
    [found] = trivial_files([filed(1, predictions, ea=0.1, missing=2)], min_share=0.5)
    assert (found.submission, found.user_id, found.ea, found.questions) == (1, 1, 0.1, 13)
    assert dict(found.counts) == {"not_submitted": 3, "reads_no_table": 2, "constant": 1, "repeated": 3}
    assert (found.trivial, found.share) == (9, 9 / 13)
    assert [(e.question_id, e.kind, e.sql) for e in found.examples] == [
        ("b1", "not_submitted", ""),
        ("r1", "reads_no_table", "SELECT 'Roma'"),
        ("r2", "reads_no_table", "SELECT 1"),
        ("c1", "constant", "SELECT 1 FROM libri"),
        ("s0", "repeated", "SELECT * FROM libri"),  # one example of a repeated query, not three
    ]


@pytest.mark.parametrize(("trivial", "found"), [(5, True), (4, False)])
def test_a_file_is_mostly_trivial_from_the_threshold_share_on(trivial, found):
    predictions = {**answers(10 - trivial), **{f"r{n}": f"SELECT {n}" for n in range(trivial)}}
    assert bool(trivial_files([filed(1, predictions)], min_share=0.5)) is found


def test_questions_left_out_of_the_file_count_as_not_submitted():
    [found] = trivial_files([filed(1, answers(2), missing=8)], min_share=0.5)
    assert found.counts["not_submitted"] == 8 and found.share == 0.8


def test_one_query_is_repeated_from_three_questions_on():
    two = {**answers(2), "a": "SELECT * FROM t", "b": "SELECT * FROM t"}
    three = {**answers(2), "a": "SELECT * FROM t", "b": "select *  from T", "c": "SELECT * FROM `t`"}
    assert trivial_files([filed(1, two)], min_share=0.5) == []
    assert trivial_files([filed(1, three)], min_share=0.5)[0].counts["repeated"] == 3


def test_a_real_file_is_not_trivial():
    assert trivial_files([filed(1, answers(20))], min_share=0.5) == []


# Near-identical files across accounts.


def test_files_of_two_accounts_with_the_same_queries_are_twins_with_the_evidence():
    mine = answers(20)
    theirs = {qid: f"  {sql.lower()}  /* copiato */" for qid, sql in mine.items()}
    [twins] = twin_files(
        [filed(1, answers(20, prefix="z"), user=1), filed(2, mine, user=1), filed(3, theirs, user=2)],
        min_similarity=0.9,
        common_share=0.1,
    )
    assert (twins.first_user, twins.second_user, twins.first, twins.second) == (1, 2, 2, 3)
    assert (twins.first_at, twins.second_at) == (START + timedelta(hours=2), START + timedelta(hours=3))
    assert (twins.similarity, twins.shared, twins.union, twins.distinctive, twins.pairs) == (
        1.0,
        20,
        20,
        20,
        1,
    )


@pytest.mark.parametrize(("threshold", "found"), [(0.9, True), (0.91, False)])
def test_accounts_are_twins_from_the_threshold_similarity_on(threshold, found):
    ten = answers(10)
    nine = {qid: sql for qid, sql in ten.items() if qid != "q09"}  # 9 shared of 10: 0.9
    pairs = twin_files(
        [filed(1, ten, user=1), filed(2, nine, user=2)], min_similarity=threshold, common_share=0.1
    )
    assert bool(pairs) is found


def test_files_of_one_account_are_never_twins():
    assert (
        twin_files(
            [filed(1, answers(), user=1), filed(2, answers(), user=1)], min_similarity=0.9, common_share=0.1
        )
        == []
    )


def test_predictions_many_accounts_wrote_count_in_the_similarity_but_not_as_distinctive():
    everyone = answers(16)  # what every account writes
    files = [
        filed(1, {**everyone, **answers(4, prefix="x")}, user=1),
        filed(2, {**everyone, **answers(4, prefix="x")}, user=2),
        *(filed(pk, {**everyone, **answers(4, prefix=f"u{pk}")}, user=pk) for pk in range(3, 8)),
    ]
    assert common_limit(7, 0.1) == 2
    [twins] = twin_files(files, min_similarity=0.9, common_share=0.1)
    assert (twins.first_user, twins.second_user) == (1, 2)
    assert (twins.similarity, twins.shared, twins.distinctive) == (1.0, 20, 4)
    # Accounts 3 to 7 share their 16 common predictions of 24 only: 0.67, and nothing distinctive.


def test_accounts_sharing_only_predictions_many_accounts_wrote_are_not_twins():
    everyone = answers(20)
    files = [filed(pk, everyone, user=pk) for pk in range(1, 6)]
    assert twin_files(files, min_similarity=0.9, common_share=0.1) == []


def test_the_inverted_index_finds_every_pair_the_full_comparison_finds():
    """Against files² comparisons: every pair of accounts with files at or above the threshold that
    share a distinctive prediction is found, and each pair found has its best similarity."""
    rng = random.Random(0)
    questions = [f"q{n:02d}" for n in range(30)]
    systems = [{qid: f"SELECT c{rng.randrange(40)} FROM t_{qid}" for qid in questions} for _ in range(20)]
    files = []
    for pk in range(1, 81):
        predictions = dict(rng.choice(systems))
        for qid in rng.sample(questions, rng.randrange(4)):
            predictions[qid] = f"SELECT v{rng.randrange(3)} FROM t_{qid}"
        files.append(filed(pk, predictions, user=rng.randrange(1, 31)))
    found = {
        frozenset((twins.first_user, twins.second_user)): twins.similarity
        for twins in twin_files(files, min_similarity=0.9, common_share=0.1)
    }
    holders: dict = {}
    for file in files:
        for entry in file.entries:
            holders.setdefault(entry, set()).add(file.user_id)
    limit = common_limit(len({file.user_id for file in files}), 0.1)
    best: dict = {}
    with_distinctive = set()
    for one, other in combinations(files, 2):
        if one.user_id == other.user_id:
            continue
        shared = one.entries & other.entries
        similarity = len(shared) / len(one.entries | other.entries)
        accounts = frozenset((one.user_id, other.user_id))
        best[accounts] = max(best.get(accounts, 0), similarity)
        if similarity >= 0.9 and any(len(holders[entry]) <= limit for entry in shared):
            with_distinctive.add(accounts)
    assert len(with_distinctive) > 3  # the data make some
    assert with_distinctive <= set(found)
    assert found == {accounts: best[accounts] for accounts in found}


# The report of a stored version.


def upload(make_submission, *, user, predictions, correct: int, outcomes=None, **fields) -> Submission:
    return make_submission(
        user=user,
        predictions=predictions,
        **scored_fields(correct, outcomes=outcomes),
        **fields,
    )


def real_file() -> dict[str, str]:
    return {qid: f"SELECT titolo FROM libri WHERE id = {n}" for n, qid in enumerate(QUESTION_IDS)}


@pytest.mark.django_db
def test_the_report_groups_every_finding_per_account_with_what_staff_need(
    make_submission, owner, other_user, django_user_model, demo_version
):
    first = upload(make_submission, user=owner, predictions=real_file(), correct=10)
    edited = changed(real_file(), "ciclismo-005")
    second = upload(
        make_submission,
        user=owner,
        predictions=edited,
        correct=11,
        outcomes=outcome_lines([*range(10), QUESTION_IDS.index("ciclismo-005")]),
    )
    copy = upload(make_submission, user=other_user, predictions=real_file(), correct=10)
    trivial = upload(
        make_submission, user=other_user, predictions={q: "SELECT 1" for q in QUESTION_IDS}, correct=0
    )
    honest = django_user_model.objects.create_user(username="dora", email="dora@example.org", password="x")
    upload(make_submission, user=honest, predictions=answers(23), correct=5)
    SubmissionQuota.objects.create(user=other_user, per_day=3, per_version=30)

    report = probing_report(version=demo_version)

    assert (report.uploads, report.accounts_seen) == (5, 3)
    assert [account.user for account in report.accounts] == [owner, other_user]  # by findings, then by name
    mine, theirs = report.accounts
    [edit] = mine.edits
    assert (edit.earlier, edit.later, edit.changed) == (first.pk, second.pk, ("ciclismo-005",))
    [change] = edit.changes
    assert (change.outcome_before, change.outcome_after) == ("wrong_result", "correct")
    assert edit.ea_change == pytest.approx(1 / 23)
    assert [(twin.other, twin.mine, twin.theirs) for twin in mine.twins] == [(other_user, first.pk, copy.pk)]
    assert [(twin.other, twin.mine, twin.theirs) for twin in theirs.twins] == [(owner, copy.pk, first.pk)]
    assert [found.submission for found in theirs.trivial] == [trivial.pk]
    assert (theirs.quota.per_day, theirs.quota.per_version, theirs.uploads) == (3, 30, 2)
    assert {s.pk for s in mine.submissions} == {first.pk, second.pk}
    assert {s.pk for s in theirs.submissions} == {copy.pk, trivial.pk}


@pytest.mark.django_db
def test_failed_uploads_and_submissions_carried_over_are_left_out(make_submission, owner, demo_version):
    first = upload(make_submission, user=owner, predictions=real_file(), correct=10)
    make_submission(predictions=changed(real_file(), "biblioteca-001"), status="failed")
    assert probing_report(version=demo_version).accounts == []
    derived = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    make_submission(version=derived, predictions=real_file(), carried_from=first)
    make_submission(version=derived, predictions=changed(real_file(), "biblioteca-001"), carried_from=first)
    assert probing_report(version=derived).uploads == 0
    # Uploaded to the derived version, an edit of what was carried there is not one of an upload there.
    upload(
        make_submission,
        user=owner,
        predictions=changed(real_file(), "biblioteca-002"),
        correct=9,
        version=derived,
    )
    assert probing_report(version=derived).accounts == []


@pytest.mark.django_db
def test_thresholds_come_from_the_settings(settings, make_submission, owner, demo_version):
    settings.TERMITE_PROBING_MAX_CHANGED = 1
    upload(make_submission, user=owner, predictions=real_file(), correct=10)
    upload(
        make_submission,
        user=owner,
        predictions=changed(real_file(), "biblioteca-001", "biblioteca-002"),
        correct=10,
    )
    assert probing_report(version=demo_version).accounts == []
    assert Thresholds.from_settings().max_changed == 1


@pytest.mark.django_db
def test_normal_forms_are_computed_once_per_file_and_kept_in_the_cache(
    monkeypatch, make_submission, owner, demo_version
):
    upload(make_submission, user=owner, predictions=real_file(), correct=10)
    upload(make_submission, user=owner, predictions=changed(real_file(), "ciclismo-001"), correct=10)
    first = probing_report(version=demo_version)

    def unread(sql, *, source):
        raise AssertionError("read again")

    monkeypatch.setattr(probing, "normal_form", unread)
    again = probing_report(version=demo_version)
    assert [edit.changed for edit in again.accounts[0].edits] == [
        edit.changed for edit in first.accounts[0].edits
    ]


@pytest.mark.django_db
def test_without_the_cache_the_report_is_computed_all_the_same(
    settings, make_submission, owner, demo_version
):
    # Nothing listens on the discard port: every cache call fails.
    redis = "django.core.cache.backends.redis.RedisCache"
    settings.CACHES = {"default": {"BACKEND": redis, "LOCATION": "redis://127.0.0.1:9/0"}}
    upload(make_submission, user=owner, predictions=real_file(), correct=10)
    upload(make_submission, user=owner, predictions=changed(real_file(), "ciclismo-001"), correct=10)
    assert len(probing_report(version=demo_version).accounts[0].edits) == 1


@pytest.mark.django_db
def test_the_report_as_json_holds_the_same_evidence(make_submission, owner, demo_version):
    first = upload(make_submission, user=owner, predictions=real_file(), correct=10)
    second = upload(make_submission, user=owner, predictions=changed(real_file(), "ciclismo-003"), correct=10)
    found = report_as_json(probing_report(version=demo_version))
    assert found["version"] == demo_version.label and found["uploads"] == 2
    [account] = found["accounts"]
    assert (account["username"], account["longest_chain"]) == (owner.username, 1)
    [edit] = account["edits"]
    assert (edit["earlier"], edit["later"]) == (first.pk, second.pk)
    assert edit["changes"][0]["question_id"] == "ciclismo-003"
    assert edit["changes"][0]["before"] == real_file()["ciclismo-003"]
