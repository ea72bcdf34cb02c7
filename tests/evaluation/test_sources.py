"""Reading uploads and archives: every bad input is one clear line naming the file, the line, the field."""

from __future__ import annotations

import json

import pytest
import pyzipper

from evaluation.sources import (
    SourceError,
    database_source_from_files,
    read_questions_jsonl,
    read_termite_archive,
)

DUMP = (
    "CREATE TABLE clienti (id INT PRIMARY KEY, nome VARCHAR(40));\nINSERT INTO clienti VALUES (1, 'Ada');\n"
)


def make_archive(
    path, members: dict[str, str], password: str = "segreto", dates: dict[str, tuple] | None = None
) -> None:
    """An archive as the authors pack it; `dates` gives members a modification time (default: now)."""
    with pyzipper.AESZipFile(
        path, "w", compression=pyzipper.ZIP_DEFLATED, encryption=pyzipper.WZ_AES
    ) as archive:
        archive.setpassword(password.encode())
        for name, text in members.items():
            if dates and name in dates:
                info = archive.zipinfo_cls(name, date_time=dates[name])
                info.compress_type = pyzipper.ZIP_DEFLATED
                info.external_attr = 0o600 << 16
                archive.writestr(info, text)
            else:
                archive.writestr(name, text)


def archive_members(**overrides) -> dict[str, str]:
    questions = [
        {"db_id": "negozio", "original": "Quanti clienti ci sono?", "query": "SELECT COUNT(*) FROM clienti"},
        {"db_id": "negozio", "original": "Elenca i nomi", "query": "SELECT nome FROM clienti"},
        {"db_id": "scuola", "original": "Quanti studenti?", "query": "SELECT COUNT(*) FROM studenti"},
    ]
    members = {
        "databases/queries.json": json.dumps(questions),
        "databases/negozio/negozio.sql": DUMP,
        "databases/negozio/no_insert_negozio.sql": DUMP.splitlines()[0],
        "databases/negozio/readme.txt": "Negozio di quartiere\n",
        "databases/scuola/scuola.sql": "CREATE TABLE studenti (id INT);",
    }
    members.update(overrides)
    return {name: text for name, text in members.items() if text is not None}


def test_an_archive_is_read_with_ids_numbered_per_database_in_file_order(tmp_path):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    source = read_termite_archive(path, "segreto")
    assert [q.public_id for q in source.questions] == ["negozio-001", "negozio-002", "scuola-001"]
    assert [db.slug for db in source.databases] == ["negozio", "scuola"]
    negozio, scuola = source.databases
    assert negozio.display_name == "Negozio di quartiere"
    assert negozio.schema_dump.startswith("CREATE TABLE")
    assert scuola.schema_dump is None and scuola.display_name == "scuola"
    assert len(source.sha256) == 64


def test_the_same_archive_content_gives_the_same_digest(tmp_path):
    make_archive(tmp_path / "a.zip", archive_members())
    make_archive(tmp_path / "b.zip", archive_members())
    assert (
        read_termite_archive(tmp_path / "a.zip", "segreto").sha256
        == read_termite_archive(tmp_path / "b.zip", "segreto").sha256
    )


def test_a_wrong_password_is_one_clear_line(tmp_path):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members())
    with pytest.raises(SourceError, match=r"bench\.zip: wrong password$"):
        read_termite_archive(path, "sbagliata")


def test_a_file_that_is_not_a_zip_is_refused(tmp_path):
    path = tmp_path / "bench.zip"
    path.write_bytes(b"PK\x03\x04 but not really a zip" * 10)
    with pytest.raises(SourceError, match="not a zip archive"):
        read_termite_archive(path, "segreto")


def test_a_missing_archive_is_refused(tmp_path):
    with pytest.raises(SourceError, match="no such file"):
        read_termite_archive(tmp_path / "absent.zip", "segreto")


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("databases/queries.json", "missing databases/queries.json"),
        ("databases/negozio/negozio.sql", "missing databases/negozio/negozio.sql"),
    ],
)
def test_a_missing_member_is_named(tmp_path, missing, message):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members(**{missing: None}))
    with pytest.raises(SourceError, match=message):
        read_termite_archive(path, "segreto")


@pytest.mark.parametrize(
    ("questions", "message"),
    [
        ("[{", "queries.json: line 1: not valid JSON"),
        ("{}", "expected a non-empty JSON list"),
        ("[]", "expected a non-empty JSON list"),
        ('["text"]', "item 1: not a JSON object"),
        ('[{"db_id": "negozio", "original": "Q?"}]', "item 1: field 'query' is missing"),
        (
            '[{"db_id": "Neg ozio", "original": "Q?", "query": "SELECT 1"}]',
            "item 1: db_id 'Neg ozio' is not a valid",
        ),
    ],
)
def test_a_malformed_question_list_is_refused_with_the_item(tmp_path, questions, message):
    path = tmp_path / "bench.zip"
    make_archive(path, archive_members(**{"databases/queries.json": questions}))
    with pytest.raises(SourceError, match=message):
        read_termite_archive(path, "segreto")


def test_a_member_that_is_not_utf8_is_refused(tmp_path):
    path = tmp_path / "bench.zip"
    members = archive_members()
    with pyzipper.AESZipFile(
        path, "w", compression=pyzipper.ZIP_DEFLATED, encryption=pyzipper.WZ_AES
    ) as archive:
        archive.setpassword(b"segreto")
        for name, text in members.items():
            archive.writestr(name, b"\xff\xfe\x00bad" if name.endswith("negozio.sql") else text)
    with pytest.raises(SourceError, match=r"negozio\.sql: not UTF-8 \(byte 0\)"):
        read_termite_archive(path, "segreto")


def jsonl(*items) -> bytes:
    return "\n".join(item if isinstance(item, str) else json.dumps(item) for item in items).encode()


def test_questions_without_ids_are_numbered_by_position():
    questions = read_questions_jsonl(
        jsonl({"question": "Uno?", "gold_sql": "SELECT 1"}, "", {"question": "Due?", "gold_sql": "SELECT 2"}),
        db_slug="negozio",
    )
    assert [(q.public_id, q.position) for q in questions] == [("negozio-001", 1), ("negozio-002", 2)]


def test_a_byte_order_mark_is_accepted():
    questions = read_questions_jsonl(
        b"\xef\xbb\xbf" + jsonl({"question": "Uno?", "gold_sql": "SELECT 1"}), db_slug="x"
    )
    assert questions[0].text == "Uno?"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question": "Uno?", "gold_sql": "SELECT 1"}', "{oops"], "q.jsonl: line 2: not valid JSON"),
        (["[1, 2]"], "q.jsonl: line 1: expected a JSON object, got list"),
        (['{"gold_sql": "SELECT 1"}'], "line 1: field 'question' is missing"),
        (
            ['{"question": "Uno?", "gold_sql": 7}'],
            "line 1: field 'gold_sql' is missing or not a non-empty string",
        ),
        (
            ['{"id": "altro-001", "question": "Uno?", "gold_sql": "SELECT 1"}'],
            "does not belong to database 'negozio'",
        ),
        (['{"id": "negozio-1", "question": "Uno?", "gold_sql": "SELECT 1"}'], "field 'id' must look like"),
        (
            ['{"id": "negozio-001", "question": "A?", "gold_sql": "SELECT 1"}'] * 2,
            "line 2: field 'id' 'negozio-001' repeats line 1",
        ),
        (["", "  "], "q.jsonl: no questions"),
    ],
)
def test_each_bad_question_line_is_refused_with_its_line_and_field(lines, message):
    with pytest.raises(SourceError, match=message):
        read_questions_jsonl(jsonl(*lines), db_slug="negozio", where="q.jsonl")


@pytest.mark.parametrize("character", ["\u2028", "\u2029", "\x85"])
def test_a_question_may_hold_a_raw_character_that_splitlines_would_take_for_a_line_end(character):
    questions = read_questions_jsonl(
        jsonl(
            {"question": "Uno?", "gold_sql": "SELECT 1"}, {"question": "Due?", "gold_sql": "SELECT 2"}
        ).replace(b"Uno", f"U{character}no".encode()),
        db_slug="negozio",
    )
    assert [(q.public_id, q.text) for q in questions] == [
        ("negozio-001", f"U{character}no?"),
        ("negozio-002", "Due?"),
    ]


def test_questions_that_are_not_utf8_are_refused():
    with pytest.raises(SourceError, match="q.jsonl: not UTF-8"):
        read_questions_jsonl(b'{"question": "\xe0?"}', db_slug="negozio", where="q.jsonl")


def test_uploaded_files_make_a_database_named_after_the_dump():
    database, questions = database_source_from_files(
        dump=DUMP.encode(),
        dump_name="Negozio.sql",
        questions=jsonl({"question": "Uno?", "gold_sql": "SELECT 1"}),
        questions_name="q.jsonl",
    )
    assert database.slug == "negozio" and database.display_name == "negozio"
    assert questions[0].public_id == "negozio-001"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"dump": b"  \n"}, "n.sql: empty file"),
        ({"questions": b""}, "q.jsonl: empty file"),
        ({"slug": "Bad Name"}, "database name 'Bad Name'"),
        ({"dialect": "oracle"}, "dialect 'oracle'"),
        ({"dump": b"x" * (20 * 2**20 + 1)}, "n.sql: larger than 20 MB"),
    ],
)
def test_bad_uploads_are_refused(overrides, message):
    arguments = {
        "dump": DUMP.encode(),
        "dump_name": "n.sql",
        "questions": jsonl({"question": "Uno?", "gold_sql": "SELECT 1"}),
        "questions_name": "q.jsonl",
        **overrides,
    }
    with pytest.raises(SourceError, match=message):
        database_source_from_files(**arguments)
