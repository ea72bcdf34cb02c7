"""The day a database, with its questions, joined the benchmark: set when it is added or imported, carried
by a derived version, shown to participants."""

from __future__ import annotations

from datetime import date

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from evaluation.models import BenchmarkVersion
from evaluation.selectors import question_dates
from evaluation.services import DEMO_ADDED_ON, database_add, version_create_draft
from evaluation.sources import database_source_from_files, read_termite_archive
from tests.evaluation.test_add_database import DUMP, GOOD_QUESTIONS
from tests.evaluation.test_sources import archive_members, make_archive

pytestmark = pytest.mark.django_db


def dates(version: BenchmarkVersion) -> dict[str, date]:
    return dict(version.databases.values_list("slug", "added_on"))


def add_negozio(version: BenchmarkVersion, **kwargs):
    database, questions = database_source_from_files(
        dump=DUMP.encode(), dump_name="negozio.sql", questions=GOOD_QUESTIONS, questions_name="q.jsonl"
    )
    return database_add(version=version, database=database, questions=questions, **kwargs)


def test_a_database_added_to_a_draft_is_dated_the_day_it_is_added():
    draft = version_create_draft(label="bozza", name="Prova")
    add_negozio(draft)
    assert dates(draft) == {"negozio": timezone.localdate()}


def test_a_database_added_by_staff_on_the_page_is_dated_that_day(
    client, staff, imports_in_process, django_capture_on_commit_callbacks
):
    draft = version_create_draft(label="bozza", name="Prova")
    client.force_login(staff)
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            reverse("staff:database_add", args=[draft.label]),
            {
                "dump": SimpleUploadedFile("negozio.sql", DUMP.encode()),
                "questions": SimpleUploadedFile("q.jsonl", GOOD_QUESTIONS),
                "dialect": "mysql",
            },
        )
    assert response.status_code == 302
    assert dates(draft) == {"negozio": timezone.localdate()}


def test_the_demo_databases_carry_their_own_days(demo_version):
    assert dates(demo_version) == DEMO_ADDED_ON


def test_a_derived_version_keeps_the_days_of_the_databases_it_carries_and_dates_a_new_one_today(
    demo_version,
):
    derived = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    add_negozio(derived)
    assert dates(derived) == {**DEMO_ADDED_ON, "negozio": timezone.localdate()}


def test_each_scored_question_reads_its_databases_day(demo_version):
    found = question_dates(version=demo_version)
    assert len(found) == demo_version.questions.scored().count() == 23
    assert found["biblioteca-001"] == date(2024, 3, 1) and found["ciclismo-011"] == date(2025, 3, 1)


def import_archive(path, *extra) -> str:
    from io import StringIO

    out = StringIO()
    call_command("import_termite", str(path), "--password", "segreto", *extra, stdout=out)
    return out.getvalue()


def test_the_import_dates_its_databases_as_told(tmp_path):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    output = import_archive(path, "--added-on", "2024-02-12")
    assert dates(BenchmarkVersion.objects.get(label="1.0")) == {
        "negozio": date(2024, 2, 12),
        "scuola": date(2024, 2, 12),
    }
    assert "Its databases count as added to the benchmark on 2024-02-12." in output


def test_by_default_the_import_dates_them_when_the_authors_packed_the_archive(tmp_path):
    path = tmp_path / "bench.zip"
    members = archive_members()
    packed = dict.fromkeys(members, (2023, 11, 2, 10, 0, 0))
    packed["databases/scuola/scuola.sql"] = (2024, 1, 20, 18, 30, 0)  # the newest entry
    make_archive(path, members, dates=packed)
    assert read_termite_archive(path, "segreto").packed_on == date(2024, 1, 20)
    import_archive(path)
    assert set(dates(BenchmarkVersion.objects.get(label="1.0")).values()) == {date(2024, 1, 20)}


def test_an_archive_that_carries_no_dates_is_dated_today(tmp_path):
    path = tmp_path / "bench.zip"
    members = archive_members()
    # 1980-01-01 is the zip format's first day: what a writer that sets no date leaves.
    make_archive(path, members, dates=dict.fromkeys(members, (1980, 1, 1, 0, 0, 0)))
    assert read_termite_archive(path, "segreto").packed_on is None
    import_archive(path)
    assert set(dates(BenchmarkVersion.objects.get(label="1.0")).values()) == {timezone.localdate()}


@pytest.mark.parametrize("value", ["12/02/2024", "2024-13-01", "ieri"])
def test_an_added_on_that_is_not_a_date_is_refused_before_anything_is_read(tmp_path, value, empty_store):
    with pytest.raises(CommandError, match="is not a date: use YYYY-MM-DD"):
        import_archive(tmp_path / "absent.zip", "--added-on", value)
    assert not BenchmarkVersion.objects.exists()


def test_staff_may_date_an_import_on_its_page(client, staff, tmp_path):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    client.force_login(staff)
    response = client.post(
        reverse("staff:import_archive"),
        {
            "import-archive": SimpleUploadedFile("Termite.zip", path.read_bytes()),
            "import-password": "segreto",
            "import-label": "1.0",
            "import-added_on": "2024-02-12",
        },
    )
    assert response.status_code == 302
    assert set(dates(BenchmarkVersion.objects.get(label="1.0")).values()) == {date(2024, 2, 12)}


def test_participants_see_when_a_database_was_added(client, owner, demo_version):
    client.force_login(owner)
    page = client.get(reverse("evaluation:database_detail", args=[demo_version.label, "ciclismo"]))
    assert "Added to the benchmark, with its questions, on 2025-03-01." in page.content.decode()
    listing = client.get(reverse("evaluation:version_detail", args=[demo_version.label])).content.decode()
    assert "<td>2024-03-01</td>" in listing and "<td>2025-03-01</td>" in listing
