"""The model card (leaderboard/model_card.py): submissions and baselines describe a system with the same
fields, labels and choices; a public submission must say how its predictions were made, through the
upload form and the API alike; its file's sha256 is public beside its scores."""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from evaluation.services import version_create_draft, version_publish
from leaderboard.baselines import PAPER_GPT35
from leaderboard.demo import DEMO_CARDS
from leaderboard.model_card import (
    PUBLIC_REQUIRED,
    Approach,
    InstructionLanguage,
    ModelCard,
    Sampling,
    SchemaFormat,
    Weights,
    card_problems,
)
from leaderboard.models import Baseline, Submission
from termite_site.accounts.models import Team
from termite_site.accounts.services import api_token_create
from tests.demo import PUBLIC_CARD
from tests.leaderboard.scored import scored_fields
from tests.leaderboard.test_openapi import nullable

SHARED = [field.name for field in ModelCard._meta.get_fields()]
LINE = b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}\n'


def test_the_shared_fields_are_the_model_card_of_both():
    assert SHARED == [
        "model_name",
        "model_size",
        "weights",
        "approach",
        "training_cutoff",
        "shots",
        "schema_format",
        "instruction_language",
        "sampling",
        "temperature",
        "decoding_note",
        "run_date",
        "spider_dev_ea",
    ]
    assert set(SHARED) <= set(Submission.MODEL_CARD_FIELDS)
    assert set(PUBLIC_REQUIRED) <= set(SHARED)


def test_a_submissions_team_is_one_of_the_portal_and_a_baselines_the_papers_authors():
    assert Submission._meta.get_field("team").related_model is Team
    assert "team" not in Submission.MODEL_CARD_FIELDS  # who submitted, checked apart
    assert Baseline._meta.get_field("team").get_internal_type() == "CharField"


@pytest.mark.parametrize("name", SHARED)
def test_a_submission_and_a_baseline_label_each_shared_field_alike(name):
    on_submission, on_baseline = Submission._meta.get_field(name), Baseline._meta.get_field(name)
    assert str(on_submission.verbose_name) == str(on_baseline.verbose_name)
    assert str(on_submission.help_text) == str(on_baseline.help_text)
    assert on_submission.choices == on_baseline.choices
    assert on_submission.default == on_baseline.default


def test_the_choices_are_the_model_cards():
    assert Submission._meta.get_field("weights").choices == Weights.choices
    assert Baseline._meta.get_field("approach").choices == Approach.choices
    assert Submission._meta.get_field("schema_format").choices == SchemaFormat.choices
    assert Weights.values == ["open", "closed", "unknown"]
    assert Approach.values == ["prompting", "fine-tuning", "other"]
    assert SchemaFormat.values == ["mysql-ddl", "sqlite-ddl", "tables-json", "full-dump", "other"]
    assert InstructionLanguage.values == ["it", "en", "other"]
    assert Sampling.values == ["greedy", "top-p", "beam", "other"]


# Uploading, through the web form and through the API: one rule, one message per missing field.


@pytest.fixture
def post(client, owner, demo_version, in_process, django_capture_on_commit_callbacks):
    """Upload one line with a model card through `channel`; returns (status, {field: [messages]})."""
    _token, raw = api_token_create(user=owner, name="tests")

    def send(channel: str, **card) -> tuple[int, dict[str, list[str]]]:
        fields = {"model_name": "Modello", "predictions": SimpleUploadedFile("p.jsonl", LINE), **card}
        with django_capture_on_commit_callbacks(execute=True):
            if channel == "form":
                if fields.pop("public", None) == "true":
                    fields["is_public"] = "on"
                client.force_login(owner)
                response = client.post(reverse("leaderboard:submission_new"), fields)
                errors = response.context["form"].errors if response.status_code == 400 else {}
                return response.status_code, {name: list(messages) for name, messages in errors.items()}
            response = client.post(reverse("api:submissions"), fields, HTTP_AUTHORIZATION=f"Bearer {raw}")
        found: dict[str, list[str]] = {}
        if response.status_code == 400:
            for detail in response.json()["error"]["details"]:
                name, _, message = detail.partition(": ")
                found.setdefault(name, []).append(message)
        return response.status_code, found

    return send


CHANNELS = ["form", "api"]


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_public_submission_with_the_whole_card_is_accepted_and_stored(post, channel):
    status, errors = post(channel, public="true", **PUBLIC_CARD, model_url="https://example.org/modello")
    assert (status, errors) in ((302, {}), (201, {}))
    submission = Submission.objects.get()
    assert submission.is_public
    assert (submission.model_size, submission.weights, submission.approach) == ("7B", "open", "prompting")
    assert (submission.shots, submission.schema_format, submission.instruction_language) == (
        0,
        "mysql-ddl",
        "it",
    )
    assert (submission.sampling, submission.temperature) == ("greedy", None)
    assert submission.run_date == date(2025, 6, 1)
    assert submission.training_cutoff == "2024-09-30"
    assert submission.training_cutoff_date == date(2024, 9, 30)
    assert submission.model_url == "https://example.org/modello"


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("missing", list(PUBLIC_REQUIRED))
def test_a_public_submission_missing_a_field_of_the_card_is_refused_naming_that_field(post, channel, missing):
    card = {key: value for key, value in PUBLIC_CARD.items() if key != missing}
    if missing == "temperature":
        card["sampling"] = "top-p"  # the temperature matters once the output is sampled
    status, errors = post(channel, public="true", **card)
    assert status == 400
    assert errors == {missing: [str(PUBLIC_REQUIRED[missing])]}
    assert not Submission.objects.exists()


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_bare_public_card_is_told_every_missing_field_at_once(post, channel):
    status, errors = post(channel, public="true")
    assert status == 400
    # Whether a temperature is needed depends on the decoding, which is missing too.
    assert set(errors) == set(PUBLIC_REQUIRED) - {"temperature"}


@pytest.mark.parametrize("channel", CHANNELS)
def test_a_private_submission_needs_the_model_name_only(post, channel):
    status, errors = post(channel)
    assert (status, errors) in ((302, {}), (201, {}))
    submission = Submission.objects.get()
    assert not submission.is_public
    assert (submission.weights, submission.approach, submission.dialect) == ("unknown", "prompting", "mysql")
    assert (submission.model_size, submission.training_cutoff, submission.shots) == ("", "", None)


@pytest.mark.parametrize("channel", CHANNELS)
def test_not_saying_whether_the_weights_are_open_is_no_answer_for_a_public_submission(post, channel):
    status, errors = post(channel, public="true", **{**PUBLIC_CARD, "weights": "unknown"})
    assert (status, errors) == (400, {"weights": [str(PUBLIC_REQUIRED["weights"])]})


@pytest.mark.parametrize("sampling", ["greedy", "beam"])
def test_a_decoding_that_does_not_sample_needs_no_temperature(post, sampling):
    status, errors = post("api", public="true", **{**PUBLIC_CARD, "sampling": sampling})
    assert (status, errors) == (201, {})


@pytest.mark.parametrize("channel", CHANNELS)
def test_unknown_is_an_answer_for_the_size_and_the_cutoff_of_a_closed_model(post, channel):
    card = {**PUBLIC_CARD, "weights": "closed", "model_size": "Unknown", "training_cutoff": " UNKNOWN "}
    _status, errors = post(channel, public="true", **card)
    assert errors == {}
    submission = Submission.objects.get()
    assert (submission.model_size, submission.training_cutoff) == ("unknown", "unknown")
    assert submission.training_cutoff_date is None


def test_a_cutoff_given_as_a_month_means_its_last_day(post):
    post("api", public="true", **{**PUBLIC_CARD, "training_cutoff": "2024-02"})
    assert Submission.objects.get().training_cutoff == "2024-02-29"


@pytest.mark.parametrize("channel", CHANNELS)
@pytest.mark.parametrize("cutoff", ["settembre 2021", "2021-13", "2021-02-30", "31/12/2021"])
def test_a_cutoff_that_is_neither_a_date_nor_unknown_is_refused_saying_what_to_write(post, channel, cutoff):
    status, errors = post(channel, public="true", **{**PUBLIC_CARD, "training_cutoff": cutoff})
    assert status == 400
    assert errors == {
        "training_cutoff": ["Give the cutoff as a date, YYYY-MM-DD (or a month, YYYY-MM), or write unknown."]
    }


@pytest.mark.parametrize("public", ["true", ""])
def test_a_run_in_the_future_or_a_cutoff_after_the_run_is_refused_on_any_submission(post, public):
    future = (timezone.localdate() + timedelta(days=3)).isoformat()
    card = {**PUBLIC_CARD, "public": public} if public else {}
    status, errors = post("api", **{**card, "run_date": future})
    assert (status, errors) == (400, {"run_date": ["The date of the run is in the future."]})
    status, errors = post("api", **{**card, "run_date": "2024-01-01", "training_cutoff": "2024-06-30"})
    assert (status, errors) == (
        400,
        {"training_cutoff": ["The training-data cutoff is after the date of the run."]},
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [("shots", "-1"), ("temperature", "11"), ("schema_format", "yaml"), ("sampling", "nucleus")],
)
def test_a_value_out_of_range_is_refused_once_not_also_as_missing(post, field, value):
    card = {**PUBLIC_CARD, "sampling": "top-p", "temperature": "0.5", field: value}
    status, errors = post("api", public="true", **card)
    assert status == 400 and list(errors) == [field] and len(errors[field]) == 1


def test_the_api_answers_with_the_card_as_stored(post, client, owner):
    post("api", public="true", **{**PUBLIC_CARD, "sampling": "top-p", "temperature": "0.2"})
    _token, raw = api_token_create(user=owner, name="again")
    body = client.get(reverse("api:submissions"), HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    card = body["submissions"][0]["model_card"]
    assert card["training_cutoff"] == "2024-09-30" and card["run_date"] == "2025-06-01"
    assert (card["sampling"], card["temperature"], card["shots"]) == ("top-p", 0.2, 0)
    assert card["code_url"] is None and card["decoding_note"] is None  # left empty
    assert "is_public" not in card


def test_the_form_asks_for_the_card_and_says_what_a_public_submission_needs(client, owner, demo_version):
    client.force_login(owner)
    body = client.get(reverse("leaderboard:submission_new")).content.decode()
    assert 'id="public-card"' in body
    for name in Submission.MODEL_CARD_FIELDS:
        assert f'name="{name}"' in body
    assert 'type="date" name="run_date"' in body
    assert "Italian" in body and "full dump, with the data" in body and "sampling with top-p" in body


# What is shipped with a complete card: the demo and the paper's baseline.


@pytest.mark.parametrize("name", list(DEMO_CARDS))
def test_the_demo_systems_have_whole_cards(name):
    assert card_problems(DEMO_CARDS[name], public=True) == {}


def test_the_papers_baseline_says_how_it_ran():
    fields = PAPER_GPT35.fields
    assert fields["note"].startswith("gpt-3.5-turbo-16k")
    assert (fields["shots"], fields["schema_format"], fields["instruction_language"]) == (
        0,
        "full-dump",
        "it",
    )
    assert fields["temperature"] == 1.0
    assert (fields["model_size"], fields["weights"]) == ("unknown", "closed")
    assert fields["training_cutoff"] == "2021-09-30"


def test_an_older_public_row_without_a_card_keeps_its_place(make_submission, client):
    # The card is required when a submission is uploaded, not of the rows already there.
    make_submission(model_name="Di prima", **scored_fields(12))
    rows = client.get(reverse("api:leaderboard")).json()["rows"]
    assert [(row["model_name"], row["training_cutoff"], row["shots"]) for row in rows] == [
        ("Di prima", None, None)
    ]


# The file's sha256 is public: a paper's number can be tied to one file.


@pytest.fixture
def public_scored(make_submission):
    return make_submission(
        model_name="Citabile",
        file_sha256="c0ffee" + "0" * 58,
        training_cutoff="2024-09-30",
        shots=5,
        schema_format="tables-json",
        instruction_language="en",
        sampling="top-p",
        temperature=0.6,
        decoding_note="top-p 0.9",
        run_date=date(2025, 5, 30),
        **scored_fields(15),
    )


def test_the_public_page_of_a_submission_shows_its_card_and_its_files_sha256_to_anyone(client, public_scored):
    body = client.get(public_scored.get_absolute_url()).content.decode()
    assert f'<code id="file-sha256">{"c0ffee" + "0" * 58}</code>' in body
    assert 'id="receipt"' not in body  # the receipt stays the owner's
    assert "5-shot" in body and "Spider&#x27;s tables.json" in body and "English" in body
    assert "sampling with top-p, temperature 0.6 (top-p 0.9)" in body
    assert "2025-05-30" in body and "2024-09-30" in body


def test_the_leaderboard_row_carries_the_sha256_in_the_api_and_the_csv(client, public_scored):
    (row,) = client.get(reverse("api:leaderboard")).json()["rows"]
    assert row["file_sha256"] == public_scored.file_sha256
    csv_text = client.get(reverse("leaderboard:leaderboard_csv", args=["demo-1.0"])).content.decode()
    assert public_scored.file_sha256 in csv_text


def test_the_leaderboard_page_shows_the_prompt_and_the_cutoff_with_the_decoding_on_hover(
    client, public_scored
):
    body = client.get(reverse("leaderboard:leaderboard")).content.decode()
    assert 'data-key="training_cutoff"' in body and 'data-key="prompt"' in body
    assert "5-shot · Spider&#39;s tables.json · English" in body  # escaped by Jinja2, as every row is
    assert 'title="Decoding: sampling with top-p, T = 0.6 (top-p 0.9) · run on 2025-05-30"' in body


def test_the_openapi_document_lists_the_card_for_uploads_and_answers(client, db):
    document = client.get(reverse("api:openapi")).json()
    upload = document["paths"]["/api/v1/submissions"]["post"]
    properties = upload["requestBody"]["content"]["multipart/form-data"]["schema"]["properties"]
    assert set(Submission.MODEL_CARD_FIELDS) - {"is_public"} <= set(properties)
    assert properties["schema_format"]["enum"] == [*SchemaFormat.values, None]  # null: not said
    assert properties["run_date"]["anyOf"][0] == {"type": "string", "format": "date"}
    for name in PUBLIC_REQUIRED:
        assert name in upload["description"]
    answer = document["components"]["schemas"]["Submission"]["properties"]["model_card"]["properties"]
    assert nullable(answer["shots"]) == ["integer", "null"] and None in answer["sampling"]["enum"]
    row = document["components"]["schemas"]["LeaderboardRow"]["properties"]
    assert nullable(row["file_sha256"]) == ["string", "null"]
    assert nullable(row["training_cutoff"]) == ["string", "null"]


def test_a_submission_carried_to_a_derived_version_keeps_its_card_and_its_files_sha256(
    public_scored, in_process, django_capture_on_commit_callbacks
):
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=public_scored.version)
    with django_capture_on_commit_callbacks(execute=True):
        version_publish(version=draft, carry_submissions=True)
    copy = Submission.objects.get(version=draft)
    for name in Submission.MODEL_CARD_FIELDS:
        assert getattr(copy, name) == getattr(public_scored, name), name
    assert copy.file_sha256 == public_scored.file_sha256


@pytest.mark.parametrize("name", ["public", "is_public"])
def test_the_api_takes_public_under_the_forms_name_too(post, name):
    """`public` is what the API documents; `is_public`, the form's name, was always taken too."""
    status, errors = post("api", **{name: "true"}, **PUBLIC_CARD)
    assert (status, errors) == (201, {})
    assert Submission.objects.get().is_public
