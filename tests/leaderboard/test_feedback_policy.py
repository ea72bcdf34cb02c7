"""Sealed feedback: what a participant sees is a function of their own file and of the scores, never of
the hidden databases in any other way (leaderboard/feedback.py is the one place that decides it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

from evaluation.models import BenchmarkVersion
from leaderboard.models import Submission
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create
from tests.demo import PUBLIC_CARD
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)
# The error text of this prediction quotes a table of the hidden database (found on an earlier main).
READS_A_TABLE = "SELECT json_extract('{}', 'x' || (SELECT group_concat(nome || ' ' || telefono) FROM sedi))"
HIDDEN_VALUE = "0612340001"  # a phone number in that table: in no question and no page


def oracle(predicate: str) -> str:
    """One bit of the hidden data: a runtime error when the predicate holds, a plain result otherwise."""
    return f"SELECT CASE WHEN ({predicate}) THEN json_extract('{{}}', 'x') ELSE 1 END"


@pytest.fixture
def scored(make_submission):
    def make(predictions: dict[str, str], **fields) -> Submission:
        submission = make_submission(predictions=predictions, dialect="sqlite", **fields)
        submission_score(submission_id=submission.pk)
        submission.refresh_from_db()
        return submission

    return make


def api_get(client, user, submission: Submission) -> dict:
    _token, raw = api_token_create(user=user, name=f"t{submission.pk}")
    url = reverse("api:submission_detail", args=[submission.pk])
    return client.get(url, HTTP_AUTHORIZATION=f"Bearer {raw}").json()


def without_ids(text: str, *submissions: Submission) -> str:
    """A page or an answer with what differs between two submissions of one file removed: their ids,
    file hashes and dates (what the owner uploaded and when, not what the data said)."""
    for submission in submissions:
        text = text.replace(f"#{submission.pk}", "#ID").replace(f"/{submission.pk}", "/ID")
        text = text.replace(submission.file_sha256, "SHA").replace(f"<code>{submission.pk}</code>", "ID")
    text = re.sub(r'"(id|submission_id)": \d+', r'"\1": 0', text)
    text = re.sub(r"\d{4}-\d\d-\d\d[T ][\d:.+]+", "DATE", text)
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", text)


def test_an_error_message_never_shows_the_hidden_data_to_the_owner(client, owner, scored):
    submission = scored({"biblioteca-001": READS_A_TABLE})
    assert HIDDEN_VALUE in json.dumps(submission.outcomes)  # the attack works: the text holds the data
    client.force_login(owner)
    page = client.get(submission.get_absolute_url()).content.decode()
    answer = json.dumps(api_get(client, owner, submission))
    assert HIDDEN_VALUE not in page and HIDDEN_VALUE not in answer
    line = next(
        q for q in api_get(client, owner, submission)["checks"] if q["question_id"] == "biblioteca-001"
    )
    assert line == {"question_id": "biblioteca-001", "check": "submitted", "message": None}


def test_a_predicate_on_the_hidden_data_changes_nothing_the_owner_sees(client, owner, scored):
    # Same file but for a condition on the data: true makes a runtime error, false a wrong result. Both
    # score 0, so the owner must see the same page and the same API answer.
    true = scored({"biblioteca-001": oracle("SELECT COUNT(*) > 0 FROM sedi")})
    false = scored({"biblioteca-001": oracle("SELECT COUNT(*) > 1000 FROM sedi")})
    assert {q["outcome"] for q in true.outcomes if q["question_id"] == "biblioteca-001"} == {"runtime_error"}
    assert true.ea == false.ea == 0
    client.force_login(owner)
    pages = [client.get(s.get_absolute_url()).content.decode() for s in (true, false)]
    answers = [json.dumps(api_get(client, owner, s), sort_keys=True) for s in (true, false)]
    strip = [without_ids(text, true, false) for text in pages]
    strip[0], strip[1] = strip[0].replace("&gt; 0 ", "&gt; N "), strip[1].replace("&gt; 1000 ", "&gt; N ")
    assert strip[0] == strip[1]
    assert json.loads(without_ids(answers[0], true, false)) == json.loads(
        without_ids(answers[1], true, false)
    )


def test_a_private_submission_shows_its_owner_overall_scores_only(client, owner, scored):
    # One candidate per database: per-database EA would say which candidate is right.
    submission = scored(
        {"biblioteca-001": "SELECT COUNT(*) FROM soci WHERE citta = 'Roma'", "ciclismo-001": "SELECT 1"}
    )
    client.force_login(owner)
    response = client.get(submission.get_absolute_url())
    body = response.content.decode()
    assert 'id="ea"' in body and 'id="breakdowns-hidden"' in body
    assert 'id="results-chart"' not in body and 'id="outcomes"' not in body
    answer = api_get(client, owner, submission)
    assert answer["scores"]["overall"]["ea"] == submission.ea
    assert answer["scores"]["per_database"] is None
    assert answer["scores"]["per_hardness"] is None and answer["scores"]["outcomes"] is None
    assert answer["breakdowns_hidden"]


def test_a_public_submission_shows_its_breakdowns_to_everyone(client, owner, other_user, scored):
    submission = scored({"biblioteca-001": "SELECT 1"}, is_public=True)
    body = client.get(submission.get_absolute_url()).content.decode()
    assert 'id="results-chart"' in body and 'id="outcomes"' in body
    answer = api_get(client, other_user, submission)
    assert set(answer["scores"]["per_database"]) == {"biblioteca", "ciclismo"}
    assert "checks" not in answer and answer["receipt"] is None


def test_staff_open_the_breakdowns_of_private_submissions_for_a_version(client, owner, staff, scored):
    submission = scored({"biblioteca-001": "SELECT 1"})
    client.force_login(staff)
    url = reverse("staff:version_feedback", args=[submission.version.label])
    assert client.get(url).status_code == 405
    assert client.post(url, {"private_breakdowns": "on"}).status_code == 302
    client.force_login(owner)
    assert api_get(client, owner, submission)["scores"]["per_database"] is not None
    page = client.get(reverse("evaluation:version_detail", args=[submission.version.label])).content.decode()
    assert 'id="feedback-policy"' in page and "per database" in page
    client.force_login(staff)
    client.post(url, {})
    assert api_get(client, owner, submission)["scores"]["per_database"] is None


def test_ts_ea_goes_where_ea_strict_goes_overall_to_a_private_owner_per_group_with_the_breakdowns(
    client, owner, make_submission
):
    submission = make_submission(**{**scored_fields(20, strict=18, ts=16), "is_public": False})
    client.force_login(owner)
    scores = api_get(client, owner, submission)["scores"]
    assert scores["overall"]["ts_ea"] == pytest.approx(16 / 23) and scores["overall"]["ts_questions"] == 23
    assert scores["overall"]["ts_ea_ci95"] == submission.scores["overall"]["ts_ea_ci95"]
    assert scores["per_database"] is None and scores["per_hardness"] is None
    page = client.get(submission.get_absolute_url()).content.decode()
    assert 'id="ts-ea">69.6</strong>' in page and 'id="breakdowns-hidden"' in page
    assert 'id="per-database"' not in page
    # Staff open the breakdowns of private submissions for the version: TS-EA per group comes with them.
    BenchmarkVersion.objects.filter(pk=submission.version_id).update(private_breakdowns=True)
    scores = api_get(client, owner, submission)["scores"]
    assert {db: group["ts_ea"] for db, group in scores["per_database"].items()} == {
        "biblioteca": 1.0,
        "ciclismo": pytest.approx(4 / 11),
    }
    assert all("ts_ea" in group for group in scores["per_hardness"].values())


def test_scores_made_before_ts_ea_existed_get_no_ts_ea_made_up(client, owner, make_submission):
    submission = make_submission(**{**scored_fields(20), "is_public": True})
    scores = api_get(client, owner, submission)["scores"]
    assert not {"ts_ea", "ts_ea_ci95", "ts_questions"} & set(scores["overall"])
    assert all("ts_ea" not in group for group in scores["per_database"].values())


def test_participants_cannot_change_the_feedback_rule(client, owner, demo_version):
    client.force_login(owner)
    url = reverse("staff:version_feedback", args=[demo_version.label])
    client.post(url, {"private_breakdowns": "on"})
    demo_version.refresh_from_db()
    assert demo_version.private_breakdowns is False


def test_staff_see_every_outcome_and_error_text(client, staff, scored):
    submission = scored({"biblioteca-001": READS_A_TABLE})
    client.force_login(staff)
    response = client.get(submission.get_absolute_url())
    lines = {line["question_id"]: line for line in response.context["feedback"].questions}
    assert lines["biblioteca-001"]["outcome"] == "runtime_error"
    assert HIDDEN_VALUE in lines["biblioteca-001"]["error"]
    assert "Outcome (staff)" in response.content.decode()


def test_the_owner_sees_their_static_errors_with_the_message(client, owner, scored):
    submission = scored(
        {
            "biblioteca-001": "SELEC broken",
            "biblioteca-002": "SELECT COUNT(*) FROM sedi",
            "biblioteca-004": "SELECT 42",
        }
    )
    client.force_login(owner)
    checks = {q["question_id"]: q for q in api_get(client, owner, submission)["checks"]}
    assert checks["biblioteca-001"]["check"] == "syntax_error" and checks["biblioteca-001"]["message"]
    assert checks["biblioteca-002"] == {
        "question_id": "biblioteca-002",
        "check": "submitted",
        "message": None,
    }
    assert checks["biblioteca-003"]["check"] == "not_submitted"
    # A hard-coded answer is told from the text alone, like a syntax error: it says nothing of the data.
    assert checks["biblioteca-004"]["check"] == "reads_no_table" and checks["biblioteca-004"]["message"]


def test_the_compare_page_hides_breakdowns_a_private_side_does_not_show(client, owner, scored):
    private = scored({"biblioteca-001": "SELECT 1"})
    public = scored({"biblioteca-001": "SELECT 1"}, is_public=True)
    client.force_login(owner)
    body = client.get(reverse("leaderboard:compare"), {"a": private.pk, "b": public.pk}).content.decode()
    assert 'id="breakdowns-hidden"' in body and '<tr data-group="databases"' not in body
    both_public = scored({"biblioteca-001": "SELECT 2"}, is_public=True)
    body = client.get(reverse("leaderboard:compare"), {"a": both_public.pk, "b": public.pk}).content.decode()
    assert '<tr data-group="databases"' in body


def test_the_upload_page_says_what_will_be_shown_before_anyone_uploads(client, owner, demo_version):
    client.force_login(owner)
    body = client.get(reverse("leaderboard:submission_new")).content.decode()
    assert 'id="what-you-see"' in body and "Never what running it did" in body
    assert "A private submission: overall EA, EA-strict and TS-EA" in body
    assert "3 public submissions per version (0 used)" in body


def test_the_metrics_page_states_the_rule_and_its_bound_in_bits(client, demo_version):
    body = client.get(reverse("metrics")).content.decode()
    assert 'id="feedback"' in body and 'id="information-bound"' in body
    assert "A private submission: overall EA, EA-strict and TS-EA" in body
    # 23 demo questions: log2(24) = 4.6 bits for the overall EA alone; EA, EA-strict and TS-EA are counts
    # k >= j, k >= t, sum over k of (k + 1)^2 = 24 * 25 * 49 / 6 = 4900 triples: 12.3 bits.
    assert '<td class="num">4.6</td>' in body
    assert '<td class="num">12.3</td>' in body


@pytest.mark.parametrize("channel", ["form", "api"])
def test_a_user_holds_at_most_three_public_submissions_per_version(
    client, owner, demo_version, make_submission, channel, in_process
):
    for _ in range(3):
        make_submission(is_public=True)
    make_submission(is_public=True, user_id=owner.pk, withdrawn_at="2026-01-01T00:00:00Z")  # counts too
    upload = b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}\n'
    fields = {
        "model_name": "Quarto",
        "version": demo_version.pk,
        "is_public": "on",
        "dialect": "mysql",
        **PUBLIC_CARD,
    }
    from django.core.files.uploadedfile import SimpleUploadedFile

    if channel == "form":
        client.force_login(owner)
        fields["predictions"] = SimpleUploadedFile("p.jsonl", upload)
        response = client.post(reverse("leaderboard:submission_new"), fields)
        text = response.content.decode()
    else:
        _token, raw = api_token_create(user=owner, name="api")
        fields.update(
            version=demo_version.label, public="true", predictions=SimpleUploadedFile("p.jsonl", upload)
        )
        del fields["is_public"]
        response = client.post(reverse("api:submissions"), fields, HTTP_AUTHORIZATION=f"Bearer {raw}")
        text = response.json()["error"]["message"]
    assert response.status_code == 429
    assert "public submissions" in text
    assert Submission.objects.filter(user=owner).count() == 4


def test_every_view_reads_scores_and_outcomes_through_the_feedback_module():
    """A new page cannot forget the rule: only the modules that write scores, the policy itself and the
    staff's admin read a submission's `scores`, `outcomes` or `ea_verdicts`; no template reads them at
    all."""
    allowed = {
        "leaderboard/feedback.py",
        "leaderboard/models.py",  # mark_scored writes them
        "leaderboard/verdicts.py",  # makes the verdicts mark_scored keeps, of the lines it is given
        "leaderboard/services.py",  # scoring writes them
        "leaderboard/rescoring.py",  # rescoring writes them; what moved is read of public rows only
        "leaderboard/admin.py",  # staff only
        "leaderboard/ranking.py",  # public rows, through feedback.public_scores
    }
    readers = []
    for path in [
        *ROOT.glob("leaderboard/**/*.py"),
        *ROOT.glob("evaluation/*.py"),
        *ROOT.glob("termite_site/**/*.py"),
    ]:
        relative = str(path.relative_to(ROOT))
        if relative in allowed or "/migrations/" in relative:
            continue
        # An attribute of a Submission, or a column in .values(...) / .only(...).
        if re.search(
            r"\.(scores|outcomes|ea_verdicts)\b|\.(values|values_list|only)\([^)]*\"(scores|outcomes|ea_verdicts)\"",
            path.read_text(),
        ):
            readers.append(relative)
    templates = [
        str(path.relative_to(ROOT))
        for path in ROOT.glob("templates/**/*.html")
        if re.search(
            r"(?<!tables)\.(scores|outcomes|ea_verdicts)\b", path.read_text()
        )  # tables: the presenter's
    ]
    assert readers == [] and templates == []
