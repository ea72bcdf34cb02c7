"""Prediction files: every malformed line is refused with its line and field, before anything is stored."""

from __future__ import annotations

import io
import json
import zipfile
import zlib

import pytest

from evaluation.predictions import PredictionFileError, parse_predictions

QUESTIONS = {"negozio": ["negozio-001", "negozio-002", "negozio-003"], "scuola": ["scuola-001"]}


def parse(data: bytes, **kwargs):
    return parse_predictions(data, filename="p.jsonl", questions_by_database=QUESTIONS, **kwargs)


def jsonl(*lines) -> bytes:
    return "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines).encode()


def errors_of(data: bytes, **kwargs) -> list[str]:
    with pytest.raises(PredictionFileError) as caught:
        parse(data, **kwargs)
    return caught.value.errors


def test_a_good_file_is_read_and_missing_questions_are_listed():
    result = parse(
        jsonl({"question_id": "negozio-002", "sql": "SELECT 2"}, {"question_id": "scuola-001", "sql": ""})
    )
    assert result.sql == {"negozio-002": "SELECT 2", "scuola-001": ""}
    assert result.missing == ["negozio-001", "negozio-003"]
    assert result.format == "jsonl"


def test_a_byte_order_mark_and_blank_lines_are_fine():
    result = parse(b"\xef\xbb\xbf" + jsonl({"question_id": "negozio-001", "sql": "SELECT 1"}, "", "  "))
    assert result.sql == {"negozio-001": "SELECT 1"}


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["{not json"], "p.jsonl: line 1: not a JSON object (Expecting property name"),
        (['["negozio-001", "SELECT 1"]'], "p.jsonl: line 1: expected a JSON object, got list"),
        (['"SELECT 1"'], "p.jsonl: line 1: expected a JSON object, got str"),
        (['{"sql": "SELECT 1"}'], "p.jsonl: line 1: field 'question_id' is missing"),
        (['{"question_id": 7, "sql": "SELECT 1"}'], "p.jsonl: line 1: field 'question_id' is not a string"),
        (['{"question_id": "negozio-001"}'], "p.jsonl: line 1: field 'sql' is missing"),
        (['{"question_id": "negozio-001", "sql": null}'], "p.jsonl: line 1: field 'sql' is missing"),
        (
            ['{"question_id": "negozio-001", "sql": ["SELECT 1"]}'],
            "p.jsonl: line 1: field 'sql' is not a string",
        ),
        (
            ['{"question_id": "negozio-999", "sql": "SELECT 1"}'],
            "line 1: field 'question_id': unknown question 'negozio-999'",
        ),
        (
            [
                '{"question_id": "negozio-001", "sql": "SELECT 1"}',
                '{"question_id": "negozio-001", "sql": "SELECT 2"}',
            ],
            "p.jsonl: line 2: field 'question_id': negozio-001 repeats line 1",
        ),
        (
            ['{"question_id": "negozio-001", "sql": "' + "x" * 20_001 + '"}'],
            "negozio-001: the SQL is longer than 20000",
        ),
    ],
)
def test_each_bad_line_is_refused_with_its_line_and_field(lines, expected):
    assert any(error.startswith(expected) or expected in error for error in errors_of(jsonl(*lines))), (
        expected
    )


def test_every_problem_is_reported_not_only_the_first():
    errors = errors_of(jsonl("{bad", {"question_id": "negozio-001", "sql": "SELECT 1"}, {"sql": "x"}, "[]"))
    assert [error.split(":")[1].strip() for error in errors] == ["line 1", "line 3", "line 4"]


def test_errors_stop_at_fifty_so_a_huge_bad_file_gives_a_readable_answer():
    assert len(errors_of(b"{bad\n" * 10_000)) == 50


def test_an_empty_file_is_refused():
    assert errors_of(b"  \n\n") == ["p.jsonl: the file is empty"]


def test_a_file_of_only_blank_json_lines_has_no_predictions():
    assert errors_of(b"\n \n\t\n") == ["p.jsonl: the file is empty"]


def test_a_file_over_the_size_cap_is_refused_before_reading():
    assert errors_of(b"x" * 2049, max_file_bytes=2048) == ["p.jsonl: the file is larger than 2 KB"]


def test_text_that_is_not_utf8_names_the_line():
    errors = errors_of(
        jsonl({"question_id": "negozio-001", "sql": "SELECT 1"}).replace(b"1", b"\xe8", 1) + b"\n"
    )
    assert errors[0].startswith("p.jsonl: line 1: not UTF-8")


def test_utf16_is_refused_with_a_hint_to_save_as_utf8():
    errors = errors_of(jsonl({"question_id": "negozio-001", "sql": "SELECT 1"}).decode().encode("utf-16"))
    assert errors == ["p.jsonl: line 1: the file contains NUL bytes (UTF-16, or not text?); save it as UTF-8"]


def test_deeply_nested_json_is_refused_without_crashing():
    errors = errors_of(b"[" * 100_000 + b"]" * 100_000)
    assert "line 1" in errors[0]


def test_an_unknown_value_is_cut_short_in_the_message():
    errors = errors_of(jsonl({"question_id": "q" * 10_000, "sql": "SELECT 1"}))
    assert len(errors[0]) < 200


def authors_zip(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def test_the_authors_layout_maps_lines_to_questions_in_order():
    data = authors_zip(
        {
            "pred/negozio/predict.txt": "SELECT 1\tnegozio\nSELECT\t2\tnegozio\n",
            "scuola/predict.txt": "SELECT 3\tscuola",
        }
    )
    result = parse(data)
    assert result.format == "authors-zip"
    assert result.sql == {"negozio-001": "SELECT 1", "negozio-002": "SELECT\t2", "scuola-001": "SELECT 3"}
    assert result.missing == ["negozio-003"]


# Characters str.splitlines() takes for line ends; in a query or a JSON string they are ordinary text.
NOT_LINE_ENDS = ["\u2028", "\u2029", "\x85", "\x0c", "\x0b", "\x1c", "\x1d", "\x1e", "\r"]


@pytest.mark.parametrize("character", NOT_LINE_ENDS)
def test_only_a_newline_ends_a_line_of_the_authors_layout_so_later_lines_keep_their_questions(character):
    data = authors_zip(
        {"negozio/predict.txt": f"SELECT 'a{character}b'\tnegozio\nSELECT 2\tnegozio\nSELECT 3\tnegozio\n"}
    )
    assert parse(data).sql == {
        "negozio-001": f"SELECT 'a{character}b'",
        "negozio-002": "SELECT 2",
        "negozio-003": "SELECT 3",
    }


def test_the_authors_layout_accepts_windows_line_ends():
    data = authors_zip({"negozio/predict.txt": "SELECT 1\tnegozio\r\nSELECT 2\r\n"})
    assert parse(data).sql == {"negozio-001": "SELECT 1", "negozio-002": "SELECT 2"}


# JSON lets these stand raw inside a string; the control characters among NOT_LINE_ENDS it does not.
@pytest.mark.parametrize("character", ["\u2028", "\u2029", "\x85"])
def test_a_json_string_may_hold_a_raw_character_that_splitlines_would_take_for_a_line_end(character):
    data = jsonl(
        f'{{"question_id": "negozio-001", "sql": "SELECT {character}"}}',
        {"question_id": "negozio-002", "sql": "SELECT 2"},
    )
    assert parse(data).sql == {"negozio-001": f"SELECT {character}", "negozio-002": "SELECT 2"}


@pytest.mark.parametrize("character", ["\x0c", "\x0b", "\x1c", "\r"])
def test_a_raw_control_character_in_a_json_string_is_refused_on_its_own_line(character):
    data = jsonl(
        f'{{"question_id": "negozio-001", "sql": "SELECT {character}"}}',
        {"question_id": "negozio-002", "sql": "SELECT 2"},
    )
    [error] = errors_of(data)
    assert error.startswith("p.jsonl: line 1: not a JSON object (Invalid control character")


def test_jsonl_errors_count_lines_by_newlines_only():
    data = jsonl('{"question_id": "negozio-001", "sql": "SELECT \u2028\x85"}', "{bad")
    assert errors_of(data)[0].startswith("p.jsonl: line 2: not a JSON object")


def test_a_zip_holding_the_same_predict_txt_twice_is_refused_naming_it():
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive, pytest.warns(UserWarning, match="Duplicate name"):
        archive.writestr("negozio/predict.txt", "SELECT 1\tnegozio")
        archive.writestr("negozio/predict.txt", "SELECT 2\tnegozio")
    assert errors_of(buffer.getvalue()) == [
        "p.jsonl: negozio/predict.txt: the zip holds it twice; keep one predict.txt per database"
    ]


def test_a_zip_with_two_predict_txt_for_one_database_is_refused_naming_both():
    data = authors_zip(
        {"a/negozio/predict.txt": "SELECT 1\tnegozio", "b/negozio/predict.txt": "SELECT 2\tnegozio"}
    )
    assert errors_of(data) == [
        "p.jsonl: b/negozio/predict.txt: a second predict.txt for database negozio "
        "(the first is a/negozio/predict.txt); keep one per database"
    ]


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"altro/predict.txt": "SELECT 1\taltro"}, "altro/predict.txt: unknown database 'altro'"),
        (
            {"scuola/predict.txt": "SELECT 1\tscuola\nSELECT 2\tscuola"},
            "scuola/predict.txt: 2 lines, but scuola has 1 questions",
        ),
        (
            {"negozio/predict.txt": "SELECT 1\tscuola"},
            "negozio/predict.txt: line 1: database 'scuola' where negozio was expected",
        ),
        ({"notes.txt": "hello"}, "p.jsonl: no <database>/predict.txt in the zip"),
    ],
)
def test_bad_authors_zips_are_refused_with_the_member_and_line(files, expected):
    errors = errors_of(authors_zip(files))
    assert any(expected in error for error in errors), errors


def test_a_truncated_zip_is_refused():
    data = authors_zip({"negozio/predict.txt": "SELECT 1\tnegozio"})
    assert "not a readable zip" in errors_of(data[: len(data) // 2])[0]


@pytest.fixture
def inflated(monkeypatch) -> list[int]:
    """The sizes of what every zlib inflater produces (the zip reader's and zipfile's own) while a test runs."""
    sizes: list[int] = []
    real = zlib.decompressobj

    class Counting:
        def __init__(self, *args):
            self.inner = real(*args)

        def decompress(self, *args):
            out = self.inner.decompress(*args)
            sizes.append(len(out))
            return out

        def flush(self, *args):
            out = self.inner.flush(*args)
            sizes.append(len(out))
            return out

        def __getattr__(self, name):
            return getattr(self.inner, name)

    monkeypatch.setattr(zlib, "decompressobj", Counting)
    return sizes


def zip_of(files: dict[str, bytes], *, declare=None, compression=zipfile.ZIP_DEFLATED, **changes) -> bytes:
    """A zip whose directory can lie: `declare` overrides each member's declared size, `changes` any
    other header field, before the central directory is written."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        for info in archive.infolist():
            if declare is not None:
                info.file_size = declare
            for field, value in changes.items():
                setattr(info, field, value(getattr(info, field)))
    return buffer.getvalue()


def test_a_zip_bomb_is_refused_before_it_is_inflated(inflated):
    errors = errors_of(zip_of({"negozio/predict.txt": b"\0" * (30 * 2**20)}))
    assert errors == ["p.jsonl: unzips to more than 5120 KB, the upload limit"]
    assert sum(inflated) == 0


def test_members_that_declare_a_small_size_and_inflate_large_are_refused_at_the_cap(inflated):
    cap = 64 * 1024
    data = zip_of({"negozio/predict.txt": b"\0" * 2**20, "scuola/predict.txt": b"\0" * 2**20}, declare=10)
    assert errors_of(data, max_file_bytes=cap) == [
        "p.jsonl: negozio/predict.txt: unzips past 64 KB (the upload limit, for the whole zip); reading stopped"
    ]
    assert sum(inflated) <= cap + 1


def test_the_cap_counts_every_member_of_the_zip_together_even_those_refused(inflated):
    cap = 64 * 1024
    each = b"\0" * (40 * 1024)  # under the cap alone, over it together
    data = zip_of({"negozio/predict.txt": each, "scuola/predict.txt": each}, declare=10)
    assert errors_of(data, max_file_bytes=cap) == [
        "p.jsonl: negozio/predict.txt: damaged: its content does not match the size and checksum"
        " the zip declares for it",
        "p.jsonl: scuola/predict.txt: unzips past 64 KB (the upload limit, for the whole zip); reading stopped",
    ]
    assert sum(inflated) <= cap + 1


def test_a_deflate_stream_broken_part_way_is_refused_as_damaged_within_the_cap(inflated):
    deflate = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    broken = deflate.compress(b"\0" * 128 * 1024) + deflate.flush(zlib.Z_SYNC_FLUSH) + b"\xff\xff"
    data = zip_of(
        {"negozio/predict.txt": broken},
        compression=zipfile.ZIP_STORED,
        compress_type=lambda _stored: zipfile.ZIP_DEFLATED,  # the directory says deflate: inflate the bytes
    )
    assert errors_of(data, max_file_bytes=256 * 1024) == [
        "p.jsonl: negozio/predict.txt: damaged: its content does not match the size and checksum"
        " the zip declares for it"
    ]
    assert sum(inflated) <= 256 * 1024 + 1


def test_a_stored_member_and_a_deflated_member_are_both_read():
    stored = zip_of({"negozio/predict.txt": b"SELECT 1\tnegozio"}, compression=zipfile.ZIP_STORED)
    assert parse(stored).sql == {"negozio-001": "SELECT 1"}
    deflated = zip_of({"negozio/predict.txt": b"SELECT 1\tnegozio"})
    assert parse(deflated).sql == {"negozio-001": "SELECT 1"}


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"compression": zipfile.ZIP_BZIP2},
            "p.jsonl: negozio/predict.txt: compressed with method 12, which is not accepted;"
            " zip it with deflate (the usual method) or without compression",
        ),
        (
            {"flag_bits": lambda bits: bits | 0x1},
            "p.jsonl: negozio/predict.txt: encrypted; upload the zip without a password",
        ),
        (
            {"CRC": lambda crc: crc ^ 1},
            "p.jsonl: negozio/predict.txt: damaged: its content does not match the size and checksum"
            " the zip declares for it",
        ),
        (
            {"declare": 1_000},
            "p.jsonl: negozio/predict.txt: damaged: its content does not match the size and checksum"
            " the zip declares for it",
        ),
        (
            {"header_offset": lambda offset: offset + 1},
            "p.jsonl: negozio/predict.txt: damaged: no file header where the zip's directory points",
        ),
    ],
    ids=["bzip2", "encrypted", "wrong-checksum", "declared-larger", "header-elsewhere"],
)
def test_a_member_that_cannot_be_read_safely_is_refused_by_name(kwargs, message):
    assert errors_of(zip_of({"negozio/predict.txt": b"SELECT 1\tnegozio"}, **kwargs)) == [message]


def test_a_zip_of_too_many_entries_is_refused_before_any_is_read(inflated):
    data = zip_of({f"d{n}/": b"" for n in range(501)} | {"negozio/predict.txt": b"SELECT 1\tnegozio"})
    assert errors_of(data) == ["p.jsonl: more than 500 files and folders in the zip"]
    assert inflated == []


@pytest.mark.parametrize(
    ("sql_json", "message"),
    [
        (r'"SELECT \u0000"', "p.jsonl: line 1: field 'sql' contains a NUL character (\\u0000)"),
        (
            r'"SELECT \ud800"',
            "p.jsonl: line 1: field 'sql' contains a lone surrogate (\\ud800), which is not text",
        ),
    ],
)
def test_sql_that_json_can_escape_but_no_database_can_store_is_refused(sql_json, message):
    data = b'{"question_id": "negozio-001", "sql": ' + sql_json.encode() + b"}"
    assert errors_of(data) == [message]


def test_a_nul_character_in_the_authors_layout_is_refused():
    errors = errors_of(authors_zip({"scuola/predict.txt": "SELECT '\x00'\tscuola"}))
    assert errors == ["p.jsonl: scuola/predict.txt: line 1: the SQL contains a NUL character (\\u0000)"]
