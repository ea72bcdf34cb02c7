"""Baselines: results reported in a paper, entered by admins (or by `load_paper_baseline`), shown on the
leaderboard marked "reported in the paper, not scored here", unranked, with `"baseline": true` in exports."""

from __future__ import annotations

from datetime import date
from io import StringIO

import pytest
from django.core.exceptions import ValidationError
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.models import BenchmarkVersion
from leaderboard.baselines import (
    PAPER_BASELINE_FILE,
    PAPER_GPT35,
    PAPER_GPT35_EA,
    TERMITE_DATABASES,
    paper_baseline_read,
)
from leaderboard.models import Baseline
from tests.factories import baseline_make, version_make
from tests.leaderboard.scored import scored_fields
from tests.services import TERMITE_QUESTIONS_PER_DATABASE

pytestmark = pytest.mark.django_db

# Sum of (questions x EA) over the ten databases, divided by their 202 questions.
PAPER_OVERALL = 10225.58 / 202 / 100


def shaped_like_termite(label: str = "1.0", databases=TERMITE_QUESTIONS_PER_DATABASE) -> BenchmarkVersion:
    """A published version with Termite's databases and question counts, and no content: enough for a
    baseline, which is never scored."""
    return version_make(label=label, databases=databases)


def load(*args: str) -> str:
    out = StringIO()
    call_command("load_paper_baseline", *args, stdout=out)
    return out.getvalue()


def test_the_paper_numbers_cover_the_ten_termite_databases():
    assert set(PAPER_GPT35_EA) == set(TERMITE_DATABASES) == set(TERMITE_QUESTIONS_PER_DATABASE)


def test_the_paper_numbers_and_citation_are_read_from_the_reference_file():
    assert PAPER_BASELINE_FILE.name == "paper_baseline.toml"
    assert PAPER_GPT35.fields["model_name"] == "GPT-3.5" and PAPER_GPT35.fields["date"] == date(2024, 2, 12)
    assert (PAPER_GPT35.fields["weights"], PAPER_GPT35.fields["approach"]) == ("closed", "prompting")
    assert "arXiv:2402.08100" in PAPER_GPT35.fields["source"]
    assert (PAPER_GPT35_EA["bowling"], PAPER_GPT35_EA["recensioni"]) == (50.79, 20.0)


def test_a_reference_file_that_does_not_add_up_is_refused(tmp_path):
    text = PAPER_BASELINE_FILE.read_text()
    broken = tmp_path / "paper_baseline.toml"
    broken.write_text(text.replace('"voli",\n', ""))
    with pytest.raises(ValueError, match="EA is given for"):
        paper_baseline_read(broken)
    broken.write_text(text.replace('weights = "closed"', 'weights = "ajar"'))
    with pytest.raises(ValueError, match="ajar"):
        paper_baseline_read(broken)


def test_the_command_adds_the_gpt35_row_with_its_question_weighted_overall(client):
    version = shaped_like_termite()
    output = load("--version", "1.0")
    assert (
        "Added the baseline 'GPT-3.5'" in output and "50.62% overall" in output and "202 questions" in output
    )
    baseline = Baseline.objects.get(version=version)
    assert baseline.per_database["bowling"] == 0.5079 and baseline.per_database["recensioni"] == 0.2
    assert baseline.ea is None  # left blank: the leaderboard weights the databases by their questions
    assert (baseline.weights, baseline.approach) == ("closed", "prompting")
    assert "gpt-3.5-turbo-16k" in baseline.note and "temperature 1" in baseline.note

    (row,) = client.get(reverse("api:leaderboard"), {"version": "1.0"}).json()["rows"]
    assert row["baseline"] is True and row["submission_id"] is None and row["rank"] is None
    assert row["ea"] == pytest.approx(PAPER_OVERALL, abs=1e-6)
    assert row["per_database"] == {db: pytest.approx(ea / 100) for db, ea in PAPER_GPT35_EA.items()}
    body = client.get(reverse("leaderboard:leaderboard")).content.decode()
    assert "reported in the paper, not scored here" in body and "50.6" in body and "arxiv.org" in body


def test_running_the_command_again_updates_the_row_and_adds_nothing():
    version = shaped_like_termite()
    load("--version", "1.0")
    Baseline.objects.filter(version=version).update(note="changed by hand")
    assert "Updated the baseline" in load("--version", "1.0")
    assert Baseline.objects.get(version=version).note == "gpt-3.5-turbo-16k, temperature 1"


def test_a_dry_run_stores_nothing():
    shaped_like_termite()
    assert "Would add the baseline" in load("--version", "1.0", "--dry-run")
    assert not Baseline.objects.exists()


@pytest.mark.parametrize(
    ("databases", "message"),
    [
        ({"biblioteca": 12, "ciclismo": 11}, "missing: bowling, centri"),
        ({**TERMITE_QUESTIONS_PER_DATABASE, "extra_db": 3}, "not in the paper: extra_db"),
        ({slug: n for slug, n in TERMITE_QUESTIONS_PER_DATABASE.items() if slug != "voli"}, "missing: voli;"),
    ],
)
def test_the_command_refuses_a_version_without_exactly_the_termite_databases(databases, message):
    shaped_like_termite(databases=databases)
    with pytest.raises(CommandError, match=message):
        load("--version", "1.0")
    assert not Baseline.objects.exists()


def test_the_command_refuses_an_unknown_version(db):
    with pytest.raises(CommandError, match="no such benchmark version"):
        load("--version", "9.9")


def test_the_command_describes_itself():
    from leaderboard.management.commands.load_paper_baseline import Command

    assert "reported in the paper" in Command.help and "ten Termite databases" in Command.help


@pytest.mark.termite_archive
def test_the_real_archive_takes_the_paper_baseline(termite_archive, monkeypatch):
    from tests.services import TERMITE_PASSWORD

    monkeypatch.delenv("TERMITE_REFERENCE_MYSQL_URL", raising=False)
    call_command("import_termite", str(termite_archive), "--password", TERMITE_PASSWORD, stdout=StringIO())
    assert "50.62% overall (weighted by their 202 questions)" in load("--version", "1.0")


# The admin.


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser("root", "root@example.org", "pw-123456789")
    client.force_login(admin)
    return client


def baseline_form(version, **fields) -> dict:
    return {
        "version": version.pk,
        "model_name": "Modello dell'articolo",
        "team": "",
        "model_size": "",
        "weights": "closed",
        "approach": "prompting",
        "per_database": '{"biblioteca": 0.5, "ciclismo": 0.25}',
        "ea": "",
        "spider_dev_ea": "",
        "note": "",
        "source": "Un articolo, 2024.",
        "source_url": "",
        "date": "2024-05-01",
        **fields,
    }


def test_admins_add_a_baseline_and_it_shows_at_once(admin_client, client, demo_version, make_submission):
    make_submission(model_name="Sistema", **scored_fields(12))
    assert "Modello dell" not in client.get(reverse("api:leaderboard")).content.decode()  # now cached
    response = admin_client.post(reverse("admin:leaderboard_baseline_add"), baseline_form(demo_version))
    assert response.status_code == 302, response.content.decode()[-2000:]
    rows = client.get(reverse("api:leaderboard")).json()["rows"]
    assert [(r["model_name"], r["baseline"]) for r in rows] == [
        ("Sistema", False),
        ("Modello dell'articolo", True),
    ]
    assert rows[1]["ea"] == pytest.approx((12 * 0.5 + 11 * 0.25) / 23, abs=1e-6)


@pytest.mark.parametrize(
    ("per_database", "error"),
    [
        ('{"biblioteca": 50.79}', "fraction between 0 and 1"),
        ('{"biblioteca": "alta"}', "fraction between 0 and 1"),
        ('{"bowling": 0.5}', "has no database bowling"),
        ("{}", "at least one database, {slug: fraction}, or the overall EA"),
        ("", "at least one database, {slug: fraction}, or the overall EA"),
        ("[0.5]", "Give the EA per database as {slug: fraction}"),
    ],
)
def test_the_admin_refuses_per_database_numbers_that_do_not_fit(
    admin_client, demo_version, per_database, error
):
    form = baseline_form(demo_version, per_database=per_database)
    response = admin_client.post(reverse("admin:leaderboard_baseline_add"), form)
    assert response.status_code == 200 and error in response.content.decode()
    assert not Baseline.objects.exists()


@pytest.mark.parametrize("per_database", ["{}", ""])
def test_the_admin_takes_a_baseline_with_only_an_overall_ea(admin_client, client, demo_version, per_database):
    """A paper that reports none of the version's databases: its overall EA alone, no column filled."""
    form = baseline_form(demo_version, per_database=per_database, ea="0.4")
    response = admin_client.post(reverse("admin:leaderboard_baseline_add"), form)
    assert response.status_code == 302, response.content.decode()[-2000:]
    assert Baseline.objects.get().per_database == {}
    (row,) = client.get(reverse("api:leaderboard")).json()["rows"]
    assert (row["ea"], row["rank"], row["per_database"]) == (
        0.4,
        None,
        {"biblioteca": None, "ciclismo": None},
    )
    change = reverse("admin:leaderboard_baseline_change", args=[Baseline.objects.get().pk])
    assert "40.00" in admin_client.get(change).content.decode()


def test_editing_or_deleting_a_baseline_in_the_admin_updates_the_leaderboard(
    admin_client, client, demo_version
):
    baseline = baseline_make(
        version=demo_version, model_name="Vecchio nome", per_database={"biblioteca": 0.5}
    )
    url = reverse("api:leaderboard")
    assert "Vecchio nome" in client.get(url).content.decode()
    change = reverse("admin:leaderboard_baseline_change", args=[baseline.pk])
    page = admin_client.get(change).content.decode()
    assert "50.00 (weighted by questions)" in page
    response = admin_client.post(change, baseline_form(demo_version, model_name="Nuovo nome", ea="0.4"))
    assert response.status_code == 302
    assert [r["model_name"] for r in client.get(url).json()["rows"]] == ["Nuovo nome"]
    assert client.get(url).json()["rows"][0]["ea"] == 0.4
    delete = reverse("admin:leaderboard_baseline_delete", args=[baseline.pk])
    assert admin_client.post(delete, {"post": "yes"}).status_code == 302
    assert client.get(url).json()["rows"] == []


# The model's own rule, whoever saves it.


def paper_row(version, **fields) -> Baseline:
    return Baseline(
        version=version, model_name="Articolo", source="Un articolo, 2024.", date=date(2024, 5, 1), **fields
    )


def test_a_baseline_may_give_no_database_when_it_gives_an_overall_ea(demo_version):
    paper_row(demo_version, per_database={}, ea=0.5).full_clean()


def test_a_baseline_with_neither_a_database_nor_an_overall_ea_is_refused_with_both_named(demo_version):
    with pytest.raises(ValidationError) as refused:
        paper_row(demo_version, per_database={}, ea=None).full_clean()
    assert refused.value.message_dict == {
        "per_database": ["Give the EA of at least one database, {slug: fraction}, or the overall EA."]
    }
