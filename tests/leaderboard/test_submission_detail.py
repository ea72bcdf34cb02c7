"""The results page and its status endpoint: who sees what, and never the gold."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from evaluation.scoring.significance import RANK_RULE
from leaderboard.services import submission_score
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(make_submission, gold):
    predictions = dict(gold)
    predictions["biblioteca-001"] = "SELECT 42 FROM sedi"  # runs, and is wrong
    predictions["biblioteca-003"] = "SELECT 'Roma'"  # a hard-coded answer: reads no table
    predictions["ciclismo-001"] = "SELEC broken"
    submission = make_submission(predictions=predictions, is_public=False)
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    return submission


def test_the_owner_sees_overall_scores_receipt_and_own_queries_with_their_static_errors(
    client, owner, scored
):
    client.force_login(owner)
    response = client.get(scored.get_absolute_url())
    body = response.content.decode()
    assert response.status_code == 200
    assert 'id="ea"' in body and 'id="breakdowns-hidden"' in body and "vendor/plotly" in body
    assert 'id="receipt"' in body and scored.file_sha256 in body
    assert "SELECT 42 FROM sedi" in body and "syntax_error" in body
    assert response["X-Robots-Tag"].startswith("noindex")


def test_which_answers_were_right_is_never_shown_to_the_owner(client, owner, scored):
    client.force_login(owner)
    rows = client.get(scored.get_absolute_url()).context["feedback"].questions
    checks = {row["question_id"]: row["check"] for row in rows}
    assert checks["biblioteca-001"] == checks["biblioteca-002"] == "submitted"
    assert checks["ciclismo-001"] == "syntax_error"
    assert checks["biblioteca-003"] == "reads_no_table"  # decided from the text: the owner is told
    assert all("outcome" not in row and "ea" not in row for row in rows)


def test_the_owner_is_told_per_question_that_a_query_reads_no_table_with_the_reason(client, owner, scored):
    client.force_login(owner)
    response = client.get(scored.get_absolute_url())
    [row] = [row for row in response.context["feedback"].questions if row["question_id"] == "biblioteca-003"]
    assert (row["check"], row["sql"]) == ("reads_no_table", "SELECT 'Roma'")
    assert "reads no table" in row["message"]
    assert "reads_no_table" in response.content.decode()


def test_staff_see_which_answers_were_right(client, staff, scored):
    client.force_login(staff)
    rows = client.get(scored.get_absolute_url()).context["feedback"].questions
    outcomes = {row["question_id"]: row["outcome"] for row in rows}
    assert (outcomes["biblioteca-001"], outcomes["biblioteca-002"]) == ("wrong_result", "correct")


def test_the_page_never_shows_gold(client, owner, make_submission, gold):
    # Predictions unlike the gold, so that anything gold-like on the page can only come from the gold.
    submission = make_submission(predictions={qid: "SELECT 1" for qid in gold})
    submission_score(submission_id=submission.pk)
    client.force_login(owner)
    golds = gold_texts()
    for url in (
        submission.get_absolute_url(),
        reverse("leaderboard:submission_status", args=[submission.pk]),
    ):
        assert_no_gold(client.get(url).content, golds, where=url)


def test_a_private_submission_is_invisible_to_others_and_to_visitors(client, other_user, scored):
    urls = [scored.get_absolute_url(), reverse("leaderboard:submission_status", args=[scored.pk])]
    for url in urls:
        assert client.get(url).status_code == 404
    client.force_login(other_user)
    for url in urls:
        assert client.get(url).status_code == 404


def test_staff_see_a_private_submission(client, staff, scored):
    client.force_login(staff)
    assert client.get(scored.get_absolute_url()).status_code == 200


def test_a_public_scored_submission_is_open_to_everyone_without_the_owners_details(client, scored):
    scored.is_public = True
    scored.save()
    body = client.get(scored.get_absolute_url()).content.decode()
    assert "EA" in body
    assert 'id="receipt"' not in body and "SELECT 42" not in body


def test_the_status_endpoint_reports_progress_for_the_page_to_poll(client, owner, make_submission):
    submission = make_submission()
    client.force_login(owner)
    status = client.get(reverse("leaderboard:submission_status", args=[submission.pk])).json()
    assert status == {
        "id": submission.pk,
        "status": "queued",
        "status_label": "queued",
        "finished": False,
        "error": None,
    }
    submission_score(submission_id=submission.pk)
    status = client.get(reverse("leaderboard:submission_status", args=[submission.pk])).json()
    assert status["status"] == "scored" and status["finished"]


def test_an_unfinished_submission_page_says_it_updates_itself(client, owner, make_submission):
    submission = make_submission()
    client.force_login(owner)
    body = client.get(submission.get_absolute_url()).content.decode()
    assert 'data-finished="0"' in body and 'id="status-help"' in body


def test_the_owner_withdraws_a_submission_and_it_disappears(client, owner, other_user, scored):
    url = reverse("leaderboard:submission_withdraw", args=[scored.pk])
    client.force_login(other_user)
    assert client.post(url).status_code == 404
    client.force_login(owner)
    assert client.get(url).status_code == 405
    assert client.post(url).status_code == 302
    assert client.get(scored.get_absolute_url()).status_code == 404
    assert scored.pk not in [
        s.pk for s in client.get(reverse("leaderboard:submission_list")).context["submissions"]
    ]


def test_the_list_shows_only_the_users_own_submissions(client, owner, other_user, make_submission):
    mine = make_submission(model_name="Mio")
    make_submission(user=other_user, model_name="Altrui")
    client.force_login(owner)
    listed = list(client.get(reverse("leaderboard:submission_list")).context["submissions"])
    assert listed == [mine]


def test_the_list_rounds_ea_as_every_page_does_to_one_decimal(client, owner, make_submission):
    submission = make_submission(**scored_fields(16))  # 16 of 23: 69.565…%
    client.force_login(owner)
    listed = client.get(reverse("leaderboard:submission_list")).content.decode()
    assert '<td class="num">69.6</td>' in listed
    assert '<strong id="ea">69.6</strong>' in client.get(submission.get_absolute_url()).content.decode()


def test_scores_from_the_current_scorer_carry_no_warning(client, owner, scored):
    client.force_login(owner)
    assert 'id="older-scorer"' not in client.get(scored.get_absolute_url()).content.decode()


def test_scores_from_an_older_scorer_say_they_will_be_rescored(client, make_submission):
    submission = make_submission(**scored_fields(10, scorer_version="1.1.0"))
    body = client.get(submission.get_absolute_url()).content.decode()
    assert 'id="older-scorer"' in body
    assert "Scored by an older scorer (1.1.0): these scores will be rescored." in body


def test_the_results_show_ts_ea_with_its_interval_beside_ea_and_per_group(client, make_submission):
    submission = make_submission(**scored_fields(20, strict=18, ts=16))
    response = client.get(submission.get_absolute_url())
    body = response.content.decode()
    low, high = submission.scores["overall"]["ts_ea_ci95"]
    metrics = reverse("metrics")
    assert (
        f'<a href="{metrics}#ts-ea">TS-EA</a> <strong id="ts-ea">69.6</strong>'
        f' <small id="ts-ea-ci95">(95% CI {100 * low:.1f}\u2013{100 * high:.1f})</small>'
    ) in body
    assert "23 of the 23 questions scored have a test suite" in body
    per_database = body.split('id="per-database"')[1].split("</table>")[0]
    assert f'<a href="{metrics}#ts-ea">TS-EA</a></th>' in per_database
    # ciclismo: 4 of its 11 questions right on every database of their suites.
    assert '<td class="num">36.4</td>' in per_database
    hardness = dict(response.context["tables"]["per_hardness"])
    assert hardness["extra"]["ts_ea"] == 0.0 and hardness["easy"]["ts_ea"] == 1.0
    bars = response.context["chart"]["data"]
    assert [trace["name"] for trace in bars] == ["EA", "EA-strict", "TS-EA"]


def test_the_page_opens_with_the_status_and_the_scores_with_their_intervals_before_the_model_card(
    client, make_submission
):
    body = client.get(
        make_submission(**scored_fields(20, strict=18, ts=16)).get_absolute_url()
    ).content.decode()
    headline = ['id="status"', 'id="ea"', 'id="ea-ci95"', 'id="ea-strict"', 'id="ts-ea"', 'id="ts-ea-ci95"']
    positions = [body.index(mark) for mark in [*headline, 'id="model-card"']]
    assert positions == sorted(positions)
    assert body.index("<section") == body.index('<section class="card" id="status-card"')


def test_scores_made_before_ts_ea_show_it_as_unknown_never_as_zero_or_ea(client, make_submission):
    submission = make_submission(**scored_fields(20))
    response = client.get(submission.get_absolute_url())
    body = response.content.decode()
    assert '<strong id="ts-ea">—</strong>\n' in body and 'id="ts-unknown"' in body
    tables = response.context["tables"]
    assert tables["overall"]["ts_ea"] is None
    assert all(group["ts_ea"] is None for _name, group in tables["per_database"] + tables["per_hardness"])
    per_database = body.split('id="per-database"')[1].split("</table>")[0]
    assert per_database.count('<td class="num">—</td>') == 2  # one per database
    assert [trace["name"] for trace in response.context["chart"]["data"]] == ["EA", "EA-strict"]


def test_the_page_says_how_many_questions_have_a_test_suite(client, owner, scored):
    client.force_login(owner)
    body = client.get(scored.get_absolute_url()).content.decode()
    # The demo benchmark has none: its TS-EA is its EA.
    assert 'id="ts-questions"' in body
    assert "0 of the 23 questions scored have a test suite; the TS-EA of the others is their EA." in body


# Cite this result.


def test_a_public_result_on_the_leaderboard_offers_its_citation_with_rank_and_rule(
    client, make_submission, make_team
):
    submission = make_submission(
        model_name="R&D_bot #2", team=make_team("Gruppo {Torino}"), **scored_fields(16, ts=14)
    )
    response = client.get(submission.get_absolute_url())
    body = response.content.decode()
    cited = response.context["citation"]
    assert cited["permalink"] == f"http://testserver{submission.get_absolute_url()}"
    assert (cited["rank"], cited["rank_rule"]) == (1, RANK_RULE)
    assert cited["ea_ci95"] == submission.scores["overall"]["ea_ci95"]
    card = body.split('id="cite"')[1].split("</section>")[0]
    assert f"Rank 1 on the leaderboard, by its rule: {RANK_RULE}." in card
    # Both forms, each with its copy button; the names escaped for LaTeX, and for HTML on the page.
    assert 'data-copy="citation-bibtex"' in card and 'data-copy="citation-text"' in card
    assert f"@misc{{termite-demo-1.0-{submission.pk}," in card
    assert r"author       = {{Gruppo \{Torino\}}}" in card
    version = submission.version  # "Termite demo demo-1.0": its name, then its label
    assert rf"R\&amp;D\_bot \#2 on {version}}}," in card
    assert f"Gruppo {{Torino}}. R&amp;D_bot #2 on {version}: EA 69.6% (95% CI" in card
    assert submission.file_sha256 in cited["bibtex"] and submission.file_sha256 in cited["text"]


def test_a_private_result_is_never_cited_even_to_its_owner(client, owner, make_submission):
    submission = make_submission(**{**scored_fields(16), "is_public": False})
    client.force_login(owner)
    response = client.get(submission.get_absolute_url())
    assert response.context["tables"] is not None and response.context["citation"] is None
    assert 'id="cite"' not in response.content.decode()


@pytest.mark.parametrize(
    "fields",
    [
        {"is_hidden": True},
        {"released_at": timezone.now() + timedelta(hours=1)},
    ],
    ids=["hidden", "not released"],
)
def test_a_public_result_off_the_leaderboard_is_not_cited_even_to_staff(
    client, staff, make_submission, fields
):
    submission = make_submission(**scored_fields(16), **fields)
    client.force_login(staff)
    response = client.get(submission.get_absolute_url())
    assert response.context["tables"] is not None and response.context["citation"] is None


def test_an_unranked_row_is_cited_with_no_rank(client, make_submission):
    # Scores stored without a verdict per question: the rule cannot rank them until they are rescored.
    submission = make_submission(**{**scored_fields(16), "outcomes": None})
    response = client.get(submission.get_absolute_url())
    cited = response.context["citation"]
    assert cited["rank"] is None
    assert f"unranked ({RANK_RULE})" in cited["text"]
    assert 'id="citation-rank">Rank: —' in response.content.decode()


def test_an_italian_reader_gets_the_card_in_italian_and_the_citation_in_english(client, make_submission):
    submission = make_submission(**scored_fields(16))
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    response = client.get(submission.get_absolute_url())
    card = response.content.decode().split('id="cite"')[1].split("</section>")[0]
    assert "Cita questo risultato" in card and "Posizione 1 in classifica" in card
    assert f"rank 1 ({RANK_RULE})" in response.context["citation"]["text"]
