"""The ranking exported: GET /api/v1/leaderboard?version= (JSON) and /leaderboard/<version>.csv, public,
with stable names, the same rows as the page, and nothing that is not public."""

from __future__ import annotations

import csv
import io
from datetime import date, timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.scoring.score import SCORER_VERSION
from evaluation.services import version_create_draft
from leaderboard.services import submission_score, submission_verify
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.factories import baseline_make, version_make
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db

JSON = reverse("api:leaderboard")


def csv_url(label: str = "demo-1.0") -> str:
    return reverse("leaderboard:leaderboard_csv", args=[label])


# The last fields of a row, in the JSON and the CSV alike: verification, team, how it ran, the file.
PROVENANCE = [
    "verified",
    "verified_at",
    "verified_note",
    "team_slug",
    "training_cutoff",
    "shots",
    "schema_format",
    "instruction_language",
    "sampling",
    "temperature",
    "decoding_note",
    "run_date",
    "paper_url",
    "code_url",
    "model_url",
    "file_sha256",
    "ea_after_cutoff",
    "questions_after_cutoff",
    "portal_run",
    "portal_protocol",
    "portal_endpoint_host",
    "portal_run_at",
    "significantly_better",
]
ROW_KEYS = {
    "rank",
    "submission_id",
    "model_name",
    "team",
    "date",
    "ea",
    "ea_strict",
    "ea_ci95",
    "ts_ea",
    "ts_ea_ci95",
    "per_database",
    "per_hardness",
    "spider_ea",
    "spider_gap",
    "model_size",
    "weights",
    "approach",
    "baseline",
    "source",
    "scorer_version",
    *PROVENANCE,
}
CSV_COLUMNS = [
    "rank",
    "submission_id",
    "model_name",
    "team",
    "date",
    "ea",
    "ea_strict",
    "ea_ci95_low",
    "ea_ci95_high",
    "db_biblioteca",
    "db_ciclismo",
    "hardness_easy",
    "hardness_medium",
    "hardness_hard",
    "hardness_extra",
    "spider_ea",
    "spider_gap",
    "model_size",
    "weights",
    "approach",
    "baseline",
    "source",
    "scorer_version",
    "ts_ea",
    "ts_ea_ci95_low",
    "ts_ea_ci95_high",
    *PROVENANCE,
]


@pytest.fixture
def ranked(make_submission, make_team, other_user, demo_version):
    """Alfa, Beta and Gamma (20, 15 and 14 right of 23: no pair is shown different, so all are rank 1) with
    a baseline between the last two; and one of each kind that must not show."""
    now = timezone.now()
    alfa = make_submission(
        model_name="Alfa",
        team=make_team("Torino"),
        model_size="70B",
        weights="open",
        approach="fine-tuning",
        spider_dev_ea=85.0,
        training_cutoff="2024-09-30",
        shots=3,
        schema_format="full-dump",
        instruction_language="it",
        sampling="top-p",
        temperature=0.7,
        decoding_note="=top-p 0.95",
        run_date=date(2025, 6, 1),
        paper_url="https://example.org/alfa.pdf",
        file_sha256="ab" * 32,
        created_at=now - timedelta(days=2),
        **scored_fields(20, strict=19),
    )
    beta = make_submission(model_name="Beta", created_at=now - timedelta(days=1), **scored_fields(15))
    gamma = make_submission(model_name="=Gamma", user=other_user, created_at=now, **scored_fields(14))
    make_submission(model_name="Privatissimo", **{**scored_fields(23), "is_public": False})
    make_submission(model_name="Nascostissimo", is_hidden=True, **scored_fields(23))
    make_submission(model_name="Ritiratissimo", withdrawn_at=now, **scored_fields(23))
    make_submission(model_name="Incodatissimo", is_public=True)
    baseline_make(
        version=demo_version,
        team="Rossi et al.",
        weights="closed",
        per_database={"biblioteca": 0.75, "ciclismo": 0.5},
    )
    return {"alfa": alfa, "beta": beta, "gamma": gamma}


def test_the_json_export_needs_no_login_and_lists_the_ranking(client, ranked):
    response = client.get(JSON, {"version": "demo-1.0"})
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    body = response.json()
    assert body["version"] == "demo-1.0"
    assert body["databases"] == ["biblioteca", "ciclismo"]
    assert body["hardness_levels"] == ["easy", "medium", "hard", "extra"]
    rows = body["rows"]
    assert [(r["model_name"], r["rank"], r["baseline"]) for r in rows] == [
        ("Alfa", 1, False),
        ("Beta", 1, False),
        ("Riferimento", None, True),  # placed by its EA, unranked
        ("=Gamma", 1, False),
    ]
    assert all(set(row) == ROW_KEYS for row in rows)


def test_a_json_row_carries_the_scores_and_the_model_card(client, ranked):
    alfa = ranked["alfa"]
    row = client.get(JSON).json()["rows"][0]
    assert row == {
        "rank": 1,
        "submission_id": alfa.pk,
        "model_name": "Alfa",
        "team": "Torino",
        "team_slug": "torino",
        "date": alfa.created_at.date().isoformat(),
        "ea": alfa.scores["overall"]["ea"],
        "ea_strict": alfa.scores["overall"]["ea_strict"],
        "ea_ci95": alfa.scores["overall"]["ea_ci95"],
        "ts_ea": None,  # scored before TS-EA existed: unknown
        "ts_ea_ci95": None,
        "per_database": {"biblioteca": 1.0, "ciclismo": 8 / 11},
        "per_hardness": {"easy": 1.0, "medium": 1.0, "hard": 1.0, "extra": 0.25},
        "spider_ea": 0.85,
        "spider_gap": round(0.85 - 20 / 23, 6),
        "model_size": "70B",
        "weights": "open",
        "approach": "fine-tuning",
        "baseline": False,
        "source": "",
        "scorer_version": "1.0.0",
        "verified": False,
        "verified_at": None,
        "verified_note": None,
        "training_cutoff": "2024-09-30",
        "shots": 3,
        "schema_format": "full-dump",
        "instruction_language": "it",
        "sampling": "top-p",
        "temperature": 0.7,
        "decoding_note": "=top-p 0.95",
        "run_date": "2025-06-01",
        "paper_url": "https://example.org/alfa.pdf",
        "code_url": None,
        "model_url": None,
        "file_sha256": "ab" * 32,
        # Right on the first 20 questions: 8 of ciclismo's 11, added after its cutoff.
        "ea_after_cutoff": 0.727273,
        "questions_after_cutoff": 11,
        "portal_run": False,
        "portal_protocol": None,
        "portal_endpoint_host": None,
        "portal_run_at": None,
        "significantly_better": [],
    }


def test_a_baseline_is_exported_as_such(client, ranked):
    (baseline,) = [row for row in client.get(JSON).json()["rows"] if row["baseline"]]
    assert baseline["submission_id"] is None and baseline["rank"] is None
    assert baseline["ea"] == pytest.approx((12 * 0.75 + 11 * 0.5) / 23, abs=1e-6)
    assert baseline["per_database"] == {"biblioteca": 0.75, "ciclismo": 0.5}
    assert baseline["per_hardness"] == dict.fromkeys(("easy", "medium", "hard", "extra"))
    assert baseline["ea_ci95"] is None and baseline["ea_strict"] is None
    assert baseline["ts_ea"] is None and baseline["ts_ea_ci95"] is None
    assert baseline["scorer_version"] is None  # not scored here
    assert baseline["file_sha256"] is None and baseline["ea_after_cutoff"] is None
    assert (baseline["verified"], baseline["verified_at"], baseline["verified_note"]) == (False, None, None)
    assert (baseline["team"], baseline["team_slug"]) == ("Rossi et al.", None)  # a paper's authors
    assert (baseline["date"], baseline["source"], baseline["weights"]) == (
        "2024-05-01",
        "Un articolo, 2024.",
        "closed",
    )


def test_nothing_private_hidden_withdrawn_or_unscored_is_exported(client, ranked):
    for response in (client.get(JSON), client.get(csv_url())):
        body = response.content.decode()
        for name in ("Privatissimo", "Nascostissimo", "Ritiratissimo", "Incodatissimo"):
            assert name not in body


def test_the_json_export_defaults_to_the_latest_published_version(client, ranked, make_submission):
    newer = version_make(label="demo-2.0")
    make_submission(version=newer, model_name="Nuovo", **scored_fields(10))
    assert client.get(JSON).json()["version"] == "demo-2.0"
    assert [r["model_name"] for r in client.get(JSON).json()["rows"]] == ["Nuovo"]
    assert client.get(JSON, {"version": "demo-1.0"}).json()["rows"][0]["model_name"] == "Alfa"


@pytest.mark.parametrize("label", ["nessuna", "bozza"])
def test_an_unknown_or_draft_version_is_a_404_error(client, ranked, label):
    version_create_draft(label="bozza", name="Bozza")
    response = client.get(JSON, {"version": label})
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"
    assert client.get(csv_url(label)).status_code == 404


def test_without_a_published_version_the_json_export_is_a_404_error(client, db, empty_store):
    response = client.get(JSON)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_the_json_export_answers_only_get(client, ranked):
    response = client.post(JSON)
    assert response.status_code == 405 and response.json()["error"]["code"] == "method_not_allowed"
    assert client.post(csv_url()).status_code == 405


def test_a_token_is_neither_needed_nor_checked(client, ranked):
    response = client.get(JSON, headers={"Authorization": "Bearer not-a-token"})
    assert response.status_code == 200


def read_csv(response) -> list[dict]:
    return list(csv.DictReader(io.StringIO(response.content.decode())))


def test_the_csv_export_has_stable_columns_and_the_same_rows(client, ranked):
    response = client.get(csv_url())
    assert response.status_code == 200
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="termite-leaderboard-demo-1.0.csv"'
    header = response.content.decode().splitlines()[0]
    assert header.split(",") == CSV_COLUMNS
    rows = read_csv(response)
    assert [(r["model_name"], r["rank"], r["baseline"]) for r in rows] == [
        ("Alfa", "1", "false"),
        ("Beta", "1", "false"),
        ("Riferimento", "", "true"),
        ("'=Gamma", "1", "false"),  # a leading = would run as a spreadsheet formula
    ]


def test_a_csv_row_holds_the_same_values_as_the_json_row(client, ranked):
    alfa = ranked["alfa"]
    row = read_csv(client.get(csv_url()))[0]
    low, high = alfa.scores["overall"]["ea_ci95"]
    assert row == {
        "rank": "1",
        "submission_id": str(alfa.pk),
        "model_name": "Alfa",
        "team": "Torino",
        "date": alfa.created_at.date().isoformat(),
        "ea": str(20 / 23),
        "ea_strict": str(19 / 23),
        "ea_ci95_low": str(low),
        "ea_ci95_high": str(high),
        "db_biblioteca": "1.0",
        "db_ciclismo": str(8 / 11),
        "hardness_easy": "1.0",
        "hardness_medium": "1.0",
        "hardness_hard": "1.0",
        "hardness_extra": "0.25",
        "spider_ea": "0.85",
        "spider_gap": str(round(0.85 - 20 / 23, 6)),
        "model_size": "70B",
        "weights": "open",
        "approach": "fine-tuning",
        "baseline": "false",
        "source": "",
        "scorer_version": "1.0.0",
        "ts_ea": "",
        "ts_ea_ci95_low": "",
        "ts_ea_ci95_high": "",
        "verified": "false",
        "verified_at": "",
        "verified_note": "",
        "team_slug": "torino",
        "training_cutoff": "2024-09-30",
        "shots": "3",
        "schema_format": "full-dump",
        "instruction_language": "it",
        "sampling": "top-p",
        "temperature": "0.7",
        "decoding_note": "'=top-p 0.95",
        "run_date": "2025-06-01",
        "paper_url": "https://example.org/alfa.pdf",
        "code_url": "",
        "model_url": "",
        "file_sha256": "ab" * 32,
        "ea_after_cutoff": "0.727273",
        "questions_after_cutoff": "11",
        "portal_run": "false",
        "portal_protocol": "",
        "portal_endpoint_host": "",
        "portal_run_at": "",
        "significantly_better": "",
    }
    baseline = read_csv(client.get(csv_url()))[2]
    assert (
        baseline["submission_id"] == "" and baseline["ea_ci95_low"] == "" and baseline["hardness_easy"] == ""
    )
    assert (baseline["db_biblioteca"], baseline["db_ciclismo"]) == ("0.75", "0.5")
    assert baseline["scorer_version"] == ""
    assert (baseline["team"], baseline["team_slug"]) == ("Rossi et al.", "")  # a paper's authors


def test_the_exports_carry_the_version_of_the_scorer_that_made_each_rows_scores(
    client, make_submission, demo_version
):
    make_submission(model_name="Nuovo", **scored_fields(10, scorer_version=SCORER_VERSION))
    make_submission(model_name="Vecchio", **scored_fields(5, scorer_version="1.1.0"))
    expected = {"Nuovo": SCORER_VERSION, "Vecchio": "1.1.0"}
    assert {r["model_name"]: r["scorer_version"] for r in client.get(JSON).json()["rows"]} == expected
    assert {r["model_name"]: r["scorer_version"] for r in read_csv(client.get(csv_url()))} == expected


def test_both_exports_carry_ts_ea_and_its_interval_and_leave_it_empty_where_unknown(
    client, make_submission, demo_version
):
    make_submission(model_name="Nuovo", **scored_fields(20, ts=17))
    make_submission(model_name="Vecchio", **scored_fields(15))
    new, old = client.get(JSON).json()["rows"]
    low, high = new["ts_ea_ci95"]
    assert new["ts_ea"] == pytest.approx(17 / 23) and low < 17 / 23 < high
    assert (old["ts_ea"], old["ts_ea_ci95"]) == (None, None)  # unknown: neither 0 nor its EA
    new_csv, old_csv = read_csv(client.get(csv_url()))
    assert (new_csv["ts_ea"], new_csv["ts_ea_ci95_low"], new_csv["ts_ea_ci95_high"]) == (
        str(17 / 23),
        str(low),
        str(high),
    )
    assert (old_csv["ts_ea"], old_csv["ts_ea_ci95_low"], old_csv["ts_ea_ci95_high"]) == ("", "", "")


def test_both_exports_say_whether_when_and_how_a_row_was_verified(client, ranked, staff):
    submission_verify(
        submission=ranked["beta"], verified=True, note="=riprodotto dagli organizzatori", by=staff
    )
    today = timezone.localdate().isoformat()
    rows = {r["model_name"]: r for r in client.get(JSON).json()["rows"]}
    assert (rows["Beta"]["verified"], rows["Beta"]["verified_at"], rows["Beta"]["verified_note"]) == (
        True,
        today,
        "=riprodotto dagli organizzatori",
    )
    assert (rows["Alfa"]["verified"], rows["Alfa"]["verified_at"], rows["Alfa"]["verified_note"]) == (
        False,
        None,
        None,
    )
    csv_rows = {r["model_name"]: r for r in read_csv(client.get(csv_url()))}
    beta = csv_rows["Beta"]
    # The note is typed by staff, but goes through the same guard against spreadsheet formulas.
    assert (beta["verified"], beta["verified_at"], beta["verified_note"]) == (
        "true",
        today,
        "'=riprodotto dagli organizzatori",
    )
    assert staff.username not in client.get(JSON).content.decode()  # who verified it stays private


def test_the_page_links_both_exports(client, ranked):
    body = client.get(reverse("leaderboard:leaderboard")).content.decode()
    assert f'href="{csv_url()}"' in body and f'href="{JSON}?version=demo-1.0"' in body


def test_the_exports_never_hold_gold(client, make_submission, gold):
    submission = make_submission(predictions={qid: "SELECT 1" for qid in gold}, is_public=True)
    submission_score(submission_id=submission.pk)
    golds = gold_texts()
    for url in (JSON, csv_url()):
        assert_no_gold(client.get(url).content, golds, where=url)


def test_the_openapi_document_describes_the_export(client, db):
    document = client.get(reverse("api:openapi")).json()
    operation = document["paths"]["/api/v1/leaderboard"]["get"]
    assert operation["security"] == []
    assert [p["name"] for p in operation["parameters"]] == ["version"]
    assert set(operation["responses"]) == {"200", "400", "404"}
    row = document["components"]["schemas"]["LeaderboardRow"]
    assert set(row["properties"]) == ROW_KEYS
