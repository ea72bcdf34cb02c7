"""The practice round: a practice version (the demo a new portal loads) holds public data, so its
participants see everything, per question, while a sealed version keeps the sealed-feedback rule unchanged.
"""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.urls import reverse
from django.utils.html import escape

from evaluation.models import BenchmarkVersion, VersionKind
from evaluation.services import VersionStateError, version_create_draft, version_publish
from leaderboard import selectors
from leaderboard.feedback import difference_label
from leaderboard.models import Submission
from leaderboard.services import Upload, submission_create, submission_score
from termite_site.accounts.services import api_token_create
from tests.demo import EXPECTED_DIFFERENCES, practice_file, predictions_jsonl
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts

pytestmark = pytest.mark.django_db


def scored_upload(*, user, version, predictions: dict[str, str], public: bool = False) -> Submission:
    """An upload through the service, as the form and the API make it, scored at once."""

    submission = submission_create(
        user=user,
        version=version,
        upload=Upload(name="practice.jsonl", data=predictions_jsonl(predictions)),
        model_card={"model_name": "Prova", "is_public": public},
    )
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission


def api_answer(client, user, submission: Submission) -> dict:
    token = api_token_create(user=user, name=f"practice-{submission.pk}")[1]
    response = client.get(
        reverse("api:submission_detail", args=[submission.pk]), HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert response.status_code == 200
    return response.json()


def everything_the_owner_reads(client, user, submission: Submission) -> str:
    """Every page, bundle and API answer of the submission's version its owner can open, as one text."""
    version = submission.version
    token = api_token_create(user=user, name=f"reads-{submission.pk}")[1]
    bearer = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    client.force_login(user)
    texts = [
        client.get(url).content.decode()
        for url in (
            submission.get_absolute_url(),
            reverse("leaderboard:submission_list"),
            version.get_absolute_url(),
            *(database.get_absolute_url() for database in version.databases.all()),
            reverse("leaderboard:leaderboard") + f"?version={version.label}",
        )
    ]
    texts += [
        client.get(url, **bearer).content.decode()
        for url in (
            reverse("api:submission_detail", args=[submission.pk]),
            reverse("api:submissions"),
            reverse("api:version_questions", args=[version.label]),
            reverse("api:versions"),
        )
    ]
    bundle = client.get(reverse("evaluation:task_bundle", args=[version.label])).content
    with zipfile.ZipFile(io.BytesIO(bundle)) as archive:
        texts += [archive.read(name).decode() for name in archive.namelist()]
    return "\n".join(texts)


# What only the practice rule shows: the markers of a question shown in full.
PRACTICE_MARKERS = ("sql_run", "gold_rows", "gold_sql", 'id="practice-questions"', "As it ran (SQLite)")


def test_the_owner_of_a_practice_submission_sees_each_question_in_full(client, owner, gold, practice_demo):
    submission = scored_upload(user=owner, version=practice_demo, predictions=practice_file(gold))
    answers = {answer["question_id"]: answer for answer in api_answer(client, owner, submission)["answers"]}

    assert answers["biblioteca-001"]["outcome"] == "correct"
    assert answers["biblioteca-001"]["detail"]["difference"] is None
    assert answers["biblioteca-001"]["detail"]["rows"] == answers["biblioteca-001"]["detail"]["gold_rows"]
    assert {qid: answers[qid]["detail"]["difference"] for qid in EXPECTED_DIFFERENCES} == EXPECTED_DIFFERENCES
    for qid in EXPECTED_DIFFERENCES:
        assert answers[qid]["outcome"] == "wrong_result" and answers[qid]["gold_sql"] == gold[qid]
        assert answers[qid]["detail"]["sql_run"].upper().startswith("SELECT")
    # The order: the same rows, reversed
    order = answers["biblioteca-007"]["detail"]
    assert order["rows"] == order["gold_rows"][::-1] and order["row_count"] == order["gold_row_count"] == 3
    assert (
        answers["biblioteca-008"]["detail"]["row_count"]
        > answers["biblioteca-008"]["detail"]["gold_row_count"]
    )
    # Refused before it ran: the static error, nothing ran, the gold's rows still shown.
    refused = answers["biblioteca-003"]
    assert refused["outcome"] == "syntax_error" and refused["error"]
    assert refused["detail"]["sql_run"] is None and refused["detail"]["row_count"] is None
    assert refused["detail"]["gold_rows"] and refused["gold_sql"] == gold["biblioteca-003"]
    # Not submitted: the gold only.
    assert answers["ciclismo-001"]["outcome"] == "not_submitted"

    client.force_login(owner)
    page = client.get(submission.get_absolute_url()).content.decode()
    assert 'id="practice-questions"' in page
    for qid, difference in EXPECTED_DIFFERENCES.items():
        assert f'id="q-{qid}"' in page and escape(difference_label(difference)) in page
    assert "SELECT COUNT(*) FROM libri" in page


def test_a_practice_version_gives_every_participant_its_gold_and_data(
    client, other_user, gold, practice_demo
):
    client.force_login(other_user)
    token = api_token_create(user=other_user, name="questions")[1]
    questions = client.get(
        reverse("api:version_questions", args=[practice_demo.label]), HTTP_AUTHORIZATION=f"Bearer {token}"
    ).json()["questions"]
    assert {q["question_id"]: q["gold_sql"] for q in questions} == gold

    bundle = zipfile.ZipFile(
        io.BytesIO(client.get(reverse("evaluation:task_bundle", args=[practice_demo.label])).content)
    )
    lines = [json.loads(line) for line in bundle.read("questions.jsonl").decode().splitlines()]
    assert {line["question_id"]: line["gold_sql"] for line in lines} == gold
    assert "gold_sql" in bundle.read("README.txt").decode()
    assert any(name.startswith("dumps/mysql/") for name in bundle.namelist())

    database = practice_demo.databases.get(slug="biblioteca")
    page = client.get(database.get_absolute_url()).content.decode()
    assert gold["biblioteca-005"].replace("'", "&#x27;") in page
    version_page = client.get(practice_demo.get_absolute_url()).content.decode()
    assert "This is a practice version" in version_page and 'class="badge kind practice"' in version_page


def test_a_practice_result_shows_as_soon_as_it_is_scored(owner, gold, practice_demo, settings):
    settings.TERMITE_RESULT_DELAY_SECONDS = 120.0
    submission = scored_upload(user=owner, version=practice_demo, predictions=gold)
    assert submission.released_at == submission.scored_at


def test_a_practice_version_has_no_quota_only_the_rate_limit(owner, gold, practice_demo, settings):
    settings.TERMITE_DAILY_QUOTA = settings.TERMITE_VERSION_QUOTA = 2
    settings.TERMITE_PUBLIC_PER_VERSION = 1
    for _ in range(4):
        scored_upload(user=owner, version=practice_demo, predictions=gold, public=True)
    assert Submission.objects.filter(user=owner, version=practice_demo).count() == 4
    quota = selectors.quota_for(user=owner, version=practice_demo)
    assert quota.used_today == quota.used_for_version == 0


def test_a_sealed_version_shows_nothing_the_practice_rule_allows(client, owner, gold, demo_version):
    """The same file on the sealed demo: no page, bundle or API answer its owner can open shows a gold
    query, a query as it ran, a result's rows or why it differs, public or private."""
    assert demo_version.kind == VersionKind.SEALED
    private = scored_upload(user=owner, version=demo_version, predictions=practice_file(gold))
    public = scored_upload(user=owner, version=demo_version, predictions=practice_file(gold), public=True)
    Submission.objects.filter(pk__in=[private.pk, public.pk]).update(released_at=private.scored_at)
    # The owner's own file holds one gold query (biblioteca-001's, copied): theirs to see.
    own = {" ".join(sql.split()) for sql in practice_file(gold).values()}
    golds = [text for text in gold_texts() if text not in own]
    for submission in (private, public):
        submission.refresh_from_db()
        seen = everything_the_owner_reads(client, owner, submission)
        assert_no_gold(seen, golds, where=f"the sealed demo, submission #{submission.pk}")
        shown = [marker for marker in PRACTICE_MARKERS if marker in seen]
        assert shown == [], shown
        assert all(escape(difference_label(code)) not in seen for code in EXPECTED_DIFFERENCES.values())


def test_the_practice_markers_are_what_a_practice_owner_reads(client, owner, gold, practice_demo):
    """The check above would pass on pages that show nothing: the same reads of a practice submission show
    every marker it looks for."""
    submission = scored_upload(user=owner, version=practice_demo, predictions=practice_file(gold))
    seen = everything_the_owner_reads(client, owner, submission)
    assert [marker for marker in PRACTICE_MARKERS if marker not in seen] == []
    assert all(escape(difference_label(code)) in seen for code in EXPECTED_DIFFERENCES.values())


def test_a_version_never_changes_kind(demo_version):
    demo_version.kind = VersionKind.PRACTICE
    with pytest.raises(ValueError, match="never changes kind"):
        demo_version.save()
    demo_version.refresh_from_db()
    assert demo_version.kind == VersionKind.SEALED


def test_a_practice_draft_may_not_copy_a_sealed_version(demo_version):
    with pytest.raises(VersionStateError, match="cannot share with a sealed one: database biblioteca"):
        version_create_draft(
            label="prova", name="Prova", derived_from=demo_version, kind=VersionKind.PRACTICE
        )
    assert not BenchmarkVersion.objects.filter(label="prova").exists()


def test_a_draft_copies_the_kind_of_the_version_it_derives_from(practice_demo):
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=practice_demo)
    assert draft.kind == VersionKind.PRACTICE and draft.shows_data


def test_a_sealed_version_sharing_a_question_with_a_practice_one_is_never_published(practice_demo):
    """A sealed draft made empty and given a practice version's question cannot be published: the question
    is public already."""
    draft = version_create_draft(label="sealed-2", name="Termite")
    question = practice_demo.questions.first()
    database = question.database
    database.pk, database.version, database.sqlite_sha256 = None, draft, "0" * 64
    database.save()
    question.pk, question.version, question.database = None, draft, database
    question.save()
    with pytest.raises(VersionStateError, match=f"question {question.public_id}"):
        version_publish(version=draft)
    draft.refresh_from_db()
    assert not draft.is_published


def test_the_leaderboard_and_the_upload_form_open_on_a_sealed_version_before_a_practice_one(practice_demo):
    assert BenchmarkVersion.objects.latest_published() == practice_demo
    sealed = version_create_draft(label="2.0", name="Termite")
    BenchmarkVersion.objects.filter(pk=sealed.pk).update(status=BenchmarkVersion.Status.PUBLISHED)
    assert BenchmarkVersion.objects.latest_published() == sealed


@pytest.mark.parametrize("kind", ["practice", "sealed"])
def test_every_page_of_a_version_says_which_kind_it_is(client, owner, kind, request):
    version = request.getfixturevalue("practice_demo" if kind == "practice" else "demo_version")
    client.force_login(owner)
    badge = f'class="badge kind {kind}"'
    for url in (
        reverse("leaderboard:leaderboard") + f"?version={version.label}",
        reverse("evaluation:version_list"),
        version.get_absolute_url(),
    ):
        assert badge in client.get(url).content.decode(), url
