"""What participants may see of each database follows its version: the schema only (the default) or the
schema and the data (the full dump as imported, as the paper's first turn shows it); the task bundle and
the version's page follow it, and nothing hidden is ever in it."""

from __future__ import annotations

import hashlib
import html
import io
import re
import zipfile
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.urls import reverse

from evaluation.bundle import build_bundle
from evaluation.errata import erratum_accept, erratum_report
from evaluation.models import BenchmarkVersion, Database, ParticipantsSee, SchemaShown, VersionKind
from evaluation.schemas import participant_dump, quoted_golds
from evaluation.services import (
    DEMO_LABEL,
    VersionStateError,
    database_add,
    database_schema_choose,
    demo_benchmark_load,
    version_create_draft,
    version_set_participants_see,
)
from evaluation.sources import SourceError, database_source_from_files
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.evaluation.test_schema_shown import DUMP, QUESTIONS, add_workshop
from tests.evaluation.test_sources import archive_members, make_archive

pytestmark = pytest.mark.django_db

SCHEMA, DATA = ParticipantsSee.SCHEMA, ParticipantsSee.SCHEMA_AND_DATA

# The demo version's bundle as the portal gave it before the setting existed: a version that gives the
# schema only must keep giving these very bytes, so that a sha256 cited for it stays true. (Its SQLite
# schemas changed twice, when the copies began to declare unsigned integers as such and when they began to
# keep the members of an ENUM or SET in a comment: a version keeps the schema texts of its import, so only
# a new import of the demo shows each change.)
BUNDLE_SHA256 = "de73eaf95129a13d90e3aa3ada22c39e0448bcc4e20a98a3f260c1791c12a71b"
MEMBER_SHA256 = {
    "README.txt": "1cb56ac159432e5a9ddae255042440f955ab3f7a635aff3976069880ec2396fb",
    "questions.jsonl": "171166c32738cf56458b6a1a36a1a74b484b4bddf2a16c99c03c53388206dc0e",
    "schemas/mysql/biblioteca.sql": "2745da89dd1971ddc08c4ecf171479aa4e328bd4727b80a3a11d09db92444189",
    "schemas/sqlite/biblioteca.sql": "06bdb708a23750268b0bfb634fae7edac0312d601ad7f206b98b4fedae68532e",
    "schemas/mysql/ciclismo.sql": "3c12ba9d01bfdf9962e7f290d2d58c0c489ecd68e5958209ef1546afd9b93309",
    "schemas/sqlite/ciclismo.sql": "848286147813ea48b6e8abc3c6e83751d8138e368b393542619f3af1ca9ae99b",
    "tables.json": "f340a63a446b6ce29459682ef408b93a2904f3e8818eebc970b5e91290df7bde",
}
# The workshop's dump with a comment that quotes the gold of its first question.
QUOTING_DUMP = DUMP.replace(
    "CREATE TABLE meccanici", "-- prova: SELECT  COUNT(*)\tFROM meccanici\nCREATE TABLE meccanici", 1
)


def given_data(version: BenchmarkVersion) -> BenchmarkVersion:
    return version_set_participants_see(version=version, participants_see=DATA)


def bundle_of(version: BenchmarkVersion) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(build_bundle(version))) as archive:
        return {name: archive.read(name).decode() for name in archive.namelist()}


def text_of(response) -> str:
    return html.unescape(response.content.decode())


def workshop_source(dump: str = DUMP):
    return database_source_from_files(
        dump=dump.encode(), dump_name="officina.sql", questions=QUESTIONS, questions_name="officina.jsonl"
    )


# participant_dump


def test_by_default_participants_see_the_schema_they_are_shown_and_no_row(demo_version):
    assert demo_version.participants_see == SCHEMA
    for database in demo_version.databases.all():
        text = participant_dump(database)
        assert text == database.shown_schema_sql
        assert "CREATE TABLE" in text and "INSERT" not in text


def test_with_the_data_participants_see_the_full_dump_as_imported(demo_version):
    given_data(demo_version)
    for database in Database.objects.filter(version=demo_version):
        text = participant_dump(database)
        assert text == database.original_dump
        assert "CREATE TABLE" in text and "INSERT INTO" in text


def test_the_schema_only_is_the_schema_staff_chose_to_show_and_the_data_the_dump_whatever_was_chosen():
    draft = version_create_draft(label="officina-1", name="Officina")
    workshop = add_workshop(draft)
    database_schema_choose(database=workshop, shown=SchemaShown.AUTHORS)
    workshop.refresh_from_db()
    assert participant_dump(workshop) == workshop.authors_schema_sql
    given_data(draft)
    workshop.refresh_from_db()
    assert participant_dump(workshop) == DUMP


def test_it_never_holds_gold_errata_or_staff_notes(owner, staff, demo_version):
    question = demo_version.questions.get(public_id="biblioteca-001")
    erratum = erratum_report(reporter=owner, question=question, description="NotaRiservataDelPartecipante")
    erratum_accept(erratum=erratum, by=staff, public_reason="RagionePubblicaDelloStaff")
    golds = gold_texts()
    for setting in (SCHEMA, DATA):
        BenchmarkVersion.objects.filter(pk=demo_version.pk).update(participants_see=setting)
        for database in Database.objects.filter(version=demo_version).select_related("version"):
            text = participant_dump(database)
            assert_no_gold(text, golds, where=f"{database.slug} ({setting})")
            assert "NotaRiservata" not in text and "RagionePubblica" not in text


def test_quoted_golds_names_the_questions_whose_gold_a_dump_holds_whatever_its_layout():
    golds = [("q-1", "SELECT COUNT(*) FROM meccanici"), ("q-2", "SELECT nome FROM meccanici"), ("q-3", "")]
    assert quoted_golds(QUOTING_DUMP, golds) == ["q-1"]
    assert quoted_golds(DUMP, golds) == []


# Setting it: the rules


def test_a_draft_takes_either_setting():
    draft = version_create_draft(label="officina-1", name="Officina")
    add_workshop(draft)
    assert given_data(draft).participants_see == DATA
    version_set_participants_see(version=draft, participants_see=SCHEMA)
    draft.refresh_from_db()
    assert draft.participants_see == SCHEMA


def test_a_published_version_may_widen_to_the_data_but_never_narrow_back(demo_version):
    assert demo_version.is_published
    given_data(demo_version)
    with pytest.raises(VersionStateError, match="may have downloaded the data already"):
        version_set_participants_see(version=demo_version, participants_see=SCHEMA)
    demo_version.refresh_from_db()
    assert demo_version.participants_see == DATA


def test_an_unknown_setting_is_refused(demo_version):
    with pytest.raises(VersionStateError, match="choose one of schema, schema-and-data"):
        version_set_participants_see(version=demo_version, participants_see="everything")
    demo_version.refresh_from_db()
    assert demo_version.participants_see == SCHEMA


def test_the_data_is_refused_while_a_dump_quotes_a_gold_query_and_the_error_names_only_the_question():
    draft = version_create_draft(label="officina-1", name="Officina")
    database, questions = workshop_source(QUOTING_DUMP)
    database_add(version=draft, database=database, questions=questions)
    with pytest.raises(VersionStateError) as refused:
        given_data(draft)
    message = str(refused.value)
    assert message.endswith("the dump of officina quotes the gold of officina-001")
    assert "SELECT" not in message
    draft.refresh_from_db()
    assert draft.participants_see == SCHEMA


def test_a_database_whose_dump_quotes_its_gold_cannot_join_a_draft_that_gives_the_data():
    draft = given_data(version_create_draft(label="officina-1", name="Officina"))
    database, questions = workshop_source(QUOTING_DUMP)
    with pytest.raises(SourceError, match="the dump of officina quotes the gold of officina-001"):
        database_add(version=draft, database=database, questions=questions)
    assert not draft.databases.exists() and not draft.questions.exists()
    database, questions = workshop_source()
    database_add(version=draft, database=database, questions=questions)
    assert participant_dump(draft.databases.get()) == DUMP


def test_a_draft_derived_from_a_version_keeps_what_its_participants_see(demo_version):
    given_data(demo_version)
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    assert draft.participants_see == DATA
    assert version_create_draft(label="vuota", name="Termite").participants_see == SCHEMA


# The task bundle


def test_a_version_giving_the_schema_only_gives_the_same_bundle_byte_for_byte_as_before(demo_version):
    content = build_bundle(demo_version)
    with zipfile.ZipFile(io.BytesIO(content)) as archive:
        members = {
            info.filename: hashlib.sha256(archive.read(info)).hexdigest() for info in archive.infolist()
        }
        assert {info.date_time for info in archive.infolist()} == {(2024, 1, 1, 0, 0, 0)}
    assert list(members) == list(MEMBER_SHA256)
    assert members == MEMBER_SHA256
    assert hashlib.sha256(content).hexdigest() == BUNDLE_SHA256


def test_with_the_data_the_bundle_holds_every_full_dump_and_its_readme_says_so(demo_version):
    before = bundle_of(demo_version)
    given_data(demo_version)
    files = bundle_of(demo_version)
    dumps = {database.slug: database.original_dump for database in demo_version.databases.all()}
    assert set(files) == set(before) | {f"dumps/mysql/{slug}.sql" for slug in dumps}
    assert all(files[f"dumps/mysql/{slug}.sql"] == dump for slug, dump in dumps.items())
    # Everything else stays as it was: the schemas shown, the questions, tables.json.
    assert {name: text for name, text in files.items() if name in before and name != "README.txt"} == {
        name: text for name, text in before.items() if name != "README.txt"
    }
    assert "dumps/mysql/" in files["README.txt"] and "its schema and every row" in files["README.txt"]
    assert "do not publish the questions, schemas or dumps" in files["README.txt"]
    assert "dumps/" not in before["README.txt"]
    assert build_bundle(demo_version) == build_bundle(demo_version)
    golds = gold_texts()
    for name, text in files.items():
        assert_no_gold(text, golds, where=name)


def test_participants_download_the_bundle_with_the_dumps_and_visitors_still_cannot(
    client, owner, demo_version
):
    given_data(demo_version)
    url = reverse("evaluation:task_bundle", args=[demo_version.label])
    response = client.get(url)
    assert response.status_code == 302 and reverse("accounts:login") in response.url
    client.force_login(owner)
    response = client.get(url)
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        assert "dumps/mysql/biblioteca.sql" in archive.namelist()


# The version's page


def test_the_version_page_says_participants_get_the_schema_only_by_default(client, owner, demo_version):
    client.force_login(owner)
    body = text_of(client.get(reverse("evaluation:version_detail", args=[demo_version.label])))
    assert 'id="participants-see"' in body
    assert "participants get each database's schema only, without its rows" in body
    assert "full MySQL dump" not in body


def test_the_version_page_says_participants_get_the_data_where_the_version_gives_it(
    client, owner, demo_version
):
    given_data(demo_version)
    client.force_login(owner)
    body = text_of(client.get(reverse("evaluation:version_detail", args=[demo_version.label])))
    assert "participants get each database's schema and its data" in body and "dumps/mysql/" in body
    assert "every database's full MySQL dump" in body
    assert_no_gold(body, gold_texts(), where="version page")


def test_anonymous_visitors_still_go_to_log_in_and_participants_still_miss_drafts(
    client, owner, demo_version
):
    given_data(demo_version)
    draft = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    page = reverse("evaluation:version_detail", args=[demo_version.label])
    assert reverse("accounts:login") in client.get(page).url
    client.force_login(owner)
    assert client.get(page).status_code == 200
    assert client.get(reverse("evaluation:version_detail", args=[draft.label])).status_code == 404
    assert client.get(reverse("evaluation:task_bundle", args=[draft.label])).status_code == 404


# The staff page


def test_staff_give_the_data_on_the_version_page(client, staff, demo_version):
    client.force_login(staff)
    page = text_of(client.get(reverse("staff:version", args=[demo_version.label])))
    assert 'id="participants-see"' in page
    assert re.search(r'value="schema" [^>]*checked', page) and not re.search(
        r'value="schema-and-data" [^>]*checked', page
    )
    url = reverse("staff:version_participants_see", args=[demo_version.label])
    response = client.post(url, {"participants_see": DATA}, follow=True)
    assert "see of each database: the schema and the data." in text_of(response)
    demo_version.refresh_from_db()
    assert demo_version.participants_see == DATA


def test_staff_cannot_narrow_a_published_version_and_are_told_why(client, staff, demo_version):
    given_data(demo_version)
    client.force_login(staff)
    url = reverse("staff:version_participants_see", args=[demo_version.label])
    response = client.post(url, {"participants_see": SCHEMA}, follow=True)
    assert "may have downloaded the data already" in text_of(response)
    demo_version.refresh_from_db()
    assert demo_version.participants_see == DATA


def test_a_bad_or_missing_choice_is_refused_with_a_message(client, staff, demo_version):
    client.force_login(staff)
    url = reverse("staff:version_participants_see", args=[demo_version.label])
    refusals = {"everything": "Select a valid choice", "": "This field is required"}
    for choice, refusal in refusals.items():
        body = text_of(client.post(url, {"participants_see": choice} if choice else {}, follow=True))
        assert refusal in body, choice
    demo_version.refresh_from_db()
    assert demo_version.participants_see == SCHEMA


def test_only_staff_change_it_and_only_by_post(client, owner, staff, demo_version):
    url = reverse("staff:version_participants_see", args=[demo_version.label])
    assert reverse("accounts:login") in client.post(url, {"participants_see": DATA}).url
    client.force_login(owner)
    assert client.post(url, {"participants_see": DATA}).status_code == 403
    client.force_login(staff)
    assert client.get(url).status_code == 405
    assert client.post(reverse("staff:version_participants_see", args=["nope"]), {}).status_code == 404
    demo_version.refresh_from_db()
    assert demo_version.participants_see == SCHEMA


def test_the_admin_shows_the_setting_but_leaves_changing_it_to_the_staff_page(client, staff):
    staff.is_superuser = True
    staff.save()
    draft = version_create_draft(label="officina-1", name="Officina")
    client.force_login(staff)
    url = reverse("admin:evaluation_benchmarkversion_change", args=[draft.pk])
    body = client.get(url).content.decode()
    assert "participants see of each database" in body.lower()
    assert 'name="participants_see"' not in body


# Importing


def import_small_archive(tmp_path, *extra: str, members: dict | None = None) -> str:
    path = tmp_path / "bench.zip"
    make_archive(path, members or archive_members())
    out = StringIO()
    call_command("import_termite", str(path), "--password", "segreto", *extra, stdout=out)
    return out.getvalue()


def test_an_import_gives_the_schema_only_unless_told(tmp_path):
    output = import_small_archive(tmp_path)
    assert BenchmarkVersion.objects.get(label="1.0").participants_see == SCHEMA
    assert "What its participants see of each database: the schema only." in output


def test_an_import_told_to_gives_the_data(tmp_path):
    output = import_small_archive(tmp_path, "--participants-see", "schema-and-data")
    version = BenchmarkVersion.objects.get(label="1.0")
    assert version.participants_see == DATA
    assert "What its participants see of each database: the schema and the data." in output
    negozio = version.databases.get(slug="negozio")
    assert participant_dump(negozio) == negozio.original_dump and "INSERT" in negozio.original_dump


def test_importing_again_with_another_setting_changes_nothing_and_says_where_to_change_it(tmp_path):
    import_small_archive(tmp_path)
    output = import_small_archive(tmp_path, "--participants-see", "schema-and-data")
    assert "nothing changed" in output and "change that on its staff page" in output
    assert BenchmarkVersion.objects.get(label="1.0").participants_see == SCHEMA


def test_an_import_with_the_data_is_refused_when_a_dump_quotes_a_gold_and_writes_nothing(
    tmp_path, empty_store
):
    members = archive_members()
    members["databases/scuola/scuola.sql"] += "\n-- SELECT COUNT(*) FROM studenti\n"
    with pytest.raises(CommandError, match="the dump of scuola quotes the gold of scuola-001$"):
        import_small_archive(tmp_path, "--participants-see", "schema-and-data", members=members)
    assert not BenchmarkVersion.objects.exists()


def test_an_unknown_setting_on_the_command_line_is_refused(tmp_path, empty_store):
    with pytest.raises(CommandError, match="invalid choice: 'everything'"):
        import_small_archive(tmp_path, "--participants-see", "everything")
    assert not BenchmarkVersion.objects.exists()


def test_staff_upload_an_archive_that_gives_the_data(client, staff, tmp_path):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    client.force_login(staff)
    form = {
        "import-archive": SimpleUploadedFile("Termite.zip", path.read_bytes()),
        "import-password": "segreto",
        "import-label": "1.0",
        "import-participants_see": DATA,
    }
    assert client.post(reverse("staff:import_archive"), form).status_code == 302
    assert BenchmarkVersion.objects.get(label="1.0").participants_see == DATA


# The demo loader


def test_the_demo_loads_as_a_sealed_version_with_the_data_when_told(empty_store):
    version = demo_benchmark_load(kind=VersionKind.SEALED, participants_see=DATA)
    assert version.participants_see == DATA and version.is_published and not version.is_practice
    assert "dumps/mysql/ciclismo.sql" in bundle_of(version)


def test_load_demo_loads_a_practice_version_which_gives_the_data_for_good(in_process, empty_store):
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert "A practice version: participants see its questions, gold and data." in out.getvalue()
    version = BenchmarkVersion.objects.get(label=DEMO_LABEL)
    assert version.is_practice and version.participants_see == DATA
    assert "dumps/mysql/ciclismo.sql" in bundle_of(version)
    with pytest.raises(VersionStateError, match="is a practice version"):
        version_set_participants_see(version=version, participants_see=SCHEMA)


def test_a_demo_loaded_before_practice_versions_stays_sealed(in_process, demo_version):
    out = StringIO()
    call_command("load_demo", stdout=out)
    assert "A sealed version: participants see their scores only." in out.getvalue()
    demo_version.refresh_from_db()
    assert not demo_version.is_practice and demo_version.participants_see == SCHEMA
