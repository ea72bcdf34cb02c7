"""Contamination hints (leaderboard/contamination.py): a row's EA on the questions added to the benchmark
after its model's training cutoff, with how many they are; a column only once some row has such questions.

The demo benchmark's databases were added on 2024-03-01 (biblioteca, 12 questions) and 2025-03-01
(ciclismo, 11 questions); see evaluation.services.DEMO_ADDED_ON.
"""

from __future__ import annotations

import csv
import io
from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from evaluation.models import Question
from leaderboard.contamination import AfterCutoff, ea_after_cutoff
from leaderboard.models import Submission
from leaderboard.ranking import build_leaderboard, leaderboard_rows, sort_rows
from leaderboard.services import leaderboard_changed
from leaderboard.verdicts import ea_verdicts
from tests.factories import baseline_make
from tests.leaderboard.scored import QUESTION_IDS, outcome_lines, scored_fields

pytestmark = pytest.mark.django_db

BIBLIOTECA = range(0, 12)  # positions in QUESTION_IDS
CICLISMO = range(12, 23)


def test_it_is_the_ea_over_the_questions_added_strictly_after_the_cutoff():
    added_on = {
        "a-1": date(2024, 1, 1),
        "a-2": date(2024, 1, 1),
        "b-1": date(2024, 6, 1),
        "b-2": date(2024, 6, 1),
        "b-3": date(2024, 6, 1),
    }
    verdicts = {"a-1": True, "a-2": False, "b-1": True, "b-2": False, "b-3": True}
    assert ea_after_cutoff(cutoff=date(2024, 3, 31), verdicts=verdicts, added_on=added_on) == AfterCutoff(
        ea=round(2 / 3, 6), n=3
    )
    assert ea_after_cutoff(cutoff=date(2023, 12, 31), verdicts=verdicts, added_on=added_on) == AfterCutoff(
        ea=0.6, n=5
    )
    # Added on the cutoff day itself: the model may have seen it.
    assert ea_after_cutoff(cutoff=date(2024, 6, 1), verdicts=verdicts, added_on=added_on) is None
    assert ea_after_cutoff(cutoff=None, verdicts=verdicts, added_on=added_on) is None
    assert ea_after_cutoff(cutoff=date(2023, 1, 1), verdicts=None, added_on=added_on) is None


@pytest.fixture
def one_excluded(demo_version):
    """ciclismo-011 left out of scoring, as an accepted erratum would: 10 scored ciclismo questions."""
    Question.objects.filter(version=demo_version, public_id="ciclismo-011").update(status="excluded")
    return demo_version


def with_outcomes(make_submission, *, cutoff: str, name: str = "Sistema", **fields):
    """A public scored row: biblioteca half right; in ciclismo 6 of the 10 scored questions right, one
    not submitted (wrong), the last excluded."""
    right = [*BIBLIOTECA[:6], *CICLISMO[:5], CICLISMO[6]]
    lines = outcome_lines(right, not_submitted=[CICLISMO[5]], excluded=[CICLISMO[10]])
    return make_submission(
        **{"model_name": name, "training_cutoff": cutoff, **scored_fields(12, outcomes=lines), **fields}
    )


def row_of(version, name: str):
    return next(row for row in build_leaderboard(version=version).rows if row.model_name == name)


def test_a_row_whose_cutoff_falls_between_two_databases_gets_its_ea_on_the_later_one(
    make_submission, one_excluded
):
    with_outcomes(make_submission, cutoff="2024-09-30")
    row = row_of(one_excluded, "Sistema")
    # Not submitted counts as wrong; the excluded question is not counted at all.
    assert (row.ea_after_cutoff, row.questions_after_cutoff) == (0.6, 10)


def test_a_cutoff_before_every_database_counts_every_scored_question(make_submission, one_excluded):
    with_outcomes(make_submission, cutoff="2023-12-31")
    row = row_of(one_excluded, "Sistema")
    assert (row.ea_after_cutoff, row.questions_after_cutoff) == (round(12 / 22, 6), 22)


@pytest.mark.parametrize(
    ("cutoff", "outcomes"),
    [
        ("2025-06-30", True),  # after the newest database: nothing the model cannot have seen
        ("2025-03-01", True),  # the day the newest was added: it may have been seen
        ("unknown", True),
        ("", True),
        ("2024-09-30", False),  # scores stored without a verdict per question
    ],
)
def test_without_a_question_after_a_known_cutoff_a_row_has_none_and_the_column_stays_hidden(
    client, make_submission, demo_version, cutoff, outcomes
):
    fields = {"outcomes": None} if not outcomes else {}
    with_outcomes(make_submission, cutoff=cutoff, **fields)
    (row,) = build_leaderboard(version=demo_version).rows
    assert (row.ea_after_cutoff, row.questions_after_cutoff) == (None, None)
    assert not build_leaderboard(version=demo_version).shows_after_cutoff
    page = client.get(reverse("leaderboard:leaderboard")).content.decode()
    assert 'data-key="ea_after_cutoff"' not in page and 'id="after-cutoff-help"' not in page
    (exported,) = client.get(reverse("api:leaderboard")).json()["rows"]
    assert (exported["ea_after_cutoff"], exported["questions_after_cutoff"]) == (None, None)


def test_the_column_shows_once_a_row_has_questions_after_its_cutoff_with_their_number(
    client, make_submission, one_excluded
):
    with_outcomes(make_submission, cutoff="2024-09-30", name="Recente")
    with_outcomes(make_submission, cutoff="unknown", name="Chissà")
    page = client.get(reverse("leaderboard:leaderboard")).content.decode()
    assert 'data-key="ea_after_cutoff"' in page and 'id="after-cutoff-help"' in page
    assert '60.0 <span class="ci">of 10</span>' in page
    assert 'href="/metrics/#contamination"' in page
    rows = {row["model_name"]: row for row in client.get(reverse("api:leaderboard")).json()["rows"]}
    assert (rows["Recente"]["ea_after_cutoff"], rows["Recente"]["questions_after_cutoff"]) == (0.6, 10)
    assert (rows["Chissà"]["ea_after_cutoff"], rows["Chissà"]["questions_after_cutoff"]) == (None, None)
    csv_text = client.get(reverse("leaderboard:leaderboard_csv", args=["demo-1.0"])).content.decode()
    by_model = {row["model_name"]: row for row in csv.DictReader(io.StringIO(csv_text))}
    assert (by_model["Recente"]["ea_after_cutoff"], by_model["Recente"]["questions_after_cutoff"]) == (
        "0.6",
        "10",
    )
    assert (by_model["Chissà"]["ea_after_cutoff"], by_model["Chissà"]["questions_after_cutoff"]) == ("", "")


def test_every_cell_of_the_column_lines_up_with_its_header(client, make_submission, one_excluded):
    with_outcomes(make_submission, cutoff="2024-09-30", name="Recente")
    with_outcomes(make_submission, cutoff="", name="Senza")
    response = client.get(reverse("leaderboard:leaderboard"))
    keys = [header.column.key for header in response.context["headers"]]
    body = response.content.decode()
    rows = body.split("<tbody>")[1].split("</tbody>")[0].split("<tr")[1:]
    assert all(row.count("<td") == len(keys) for row in rows)


def test_a_baseline_never_has_it_and_never_shows_the_column(client, make_submission, demo_version):
    baseline_make(version=demo_version, training_cutoff="2021-09-30", source="Un articolo.")
    with_outcomes(make_submission, cutoff="")
    board = build_leaderboard(version=demo_version)
    baseline = next(row for row in board.rows if row.baseline)
    assert (baseline.training_cutoff, baseline.ea_after_cutoff) == ("2021-09-30", None)
    assert not board.shows_after_cutoff


def test_it_reads_the_questions_dates_in_one_more_query_and_the_verdicts_with_the_rows(
    make_submission, one_excluded, django_assert_num_queries
):
    for n in range(3):
        with_outcomes(make_submission, cutoff="2024-09-30", name=f"Con data {n}")
    with_outcomes(make_submission, cutoff="unknown", name="Senza data")
    with CaptureQueriesContext(connection) as queries, django_assert_num_queries(4):
        build_leaderboard(version=one_excluded)
    reads = [q["sql"] for q in queries if '"ea_verdicts"' in q["sql"]]
    assert len(reads) == 1 and '"predictions"' not in reads[0] and '"outcomes"' not in reads[0]


def test_it_is_cached_with_the_ranking_until_the_ranking_changes(make_submission, one_excluded):
    submission = with_outcomes(make_submission, cutoff="2024-09-30")
    assert leaderboard_rows(version=one_excluded)[0].ea_after_cutoff == 0.6
    # Written behind the services' back: the cached value stays until the ranking is dropped.
    every_right = outcome_lines(range(len(QUESTION_IDS)), excluded=[CICLISMO[10]])
    Submission.objects.filter(pk=submission.pk).update(
        outcomes=every_right, ea_verdicts=ea_verdicts(every_right)
    )
    assert leaderboard_rows(version=one_excluded)[0].ea_after_cutoff == 0.6
    leaderboard_changed(version=one_excluded)
    assert leaderboard_rows(version=one_excluded)[0].ea_after_cutoff == 1.0


def test_rows_sort_by_it_with_the_rows_without_it_last(make_submission, one_excluded):
    with_outcomes(make_submission, cutoff="2024-09-30", name="Recente")
    with_outcomes(make_submission, cutoff="2023-12-31", name="Vecchio")
    with_outcomes(make_submission, cutoff="", name="Senza")
    rows = build_leaderboard(version=one_excluded).rows
    ordered = sort_rows(rows, key="ea_after_cutoff", descending=True)
    assert [row.model_name for row in ordered] == ["Recente", "Vecchio", "Senza"]


def test_the_metrics_page_says_what_it_means_and_its_limits(client, db):
    body = client.get(reverse("metrics")).content.decode()
    section = body.split('id="contamination"')[1].split("<h2")[0]
    assert "The cutoff is self-reported" in section
    assert "does not mean that it did see the earlier ones" in section
