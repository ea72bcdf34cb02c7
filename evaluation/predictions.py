"""Reading a file of predicted SQL: JSONL, or the Termite authors' layout (a zip of `<db>/predict.txt`).

Validation is complete before anything is stored: every problem is reported with its line and field, and
a file with any problem is refused whole. Plain Python, no Django: the upload form, the API and
`manage.py score` all call `parse_predictions`.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import cast

from evaluation.text_lines import split_lines
from termite_site.upload_caps import MAX_SQL_CHARS, MAX_UPLOAD_BYTES

MAX_ERRORS = 50
# Entries (files and folders) of an authors' zip: one folder and one predict.txt per database is the layout.
MAX_ZIP_MEMBERS = 500


class PredictionFileError(ValueError):
    """The file is refused; `errors` lists every problem found (up to MAX_ERRORS), each one line."""

    def __init__(self, errors: Sequence[str]):
        self.errors = list(errors)
        super().__init__(
            "; ".join(self.errors[:3])
            + (f" (and {len(self.errors) - 3} more)" if len(self.errors) > 3 else "")
        )


@dataclass(frozen=True)
class Predictions:
    sql: dict[str, str]
    missing: list[str]
    format: str


def parse_predictions(
    data: bytes,
    *,
    filename: str,
    questions_by_database: Mapping[str, Sequence[str]],
    max_file_bytes: int = MAX_UPLOAD_BYTES,
    max_sql_chars: int = MAX_SQL_CHARS,
) -> Predictions:
    """Parse and validate; `questions_by_database` lists each database's question ids in benchmark order."""
    if len(data) > max_file_bytes:
        raise PredictionFileError([f"{filename}: the file is larger than {max_file_bytes // 1024} KB"])
    if not data.strip():
        raise PredictionFileError([f"{filename}: the file is empty"])
    if data[:4] != b"PK\x03\x04" and b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        raise PredictionFileError(
            [f"{filename}: line {line}: the file contains NUL bytes (UTF-16, or not text?); save it as UTF-8"]
        )
    if data[:4] == b"PK\x03\x04":
        # All its members together may unzip to no more than the upload limit: the same predictions as
        # JSONL, which spends more characters per line than predict.txt, would have to fit under it too.
        sql, errors = _read_authors_zip(
            data, filename, questions_by_database, max_unzipped_bytes=max_file_bytes
        )
        kind = "authors-zip"
    else:
        sql, errors = _read_jsonl(data, filename, questions_by_database)
        kind = "jsonl"
    for question_id, text in sql.items():
        if len(text) > max_sql_chars:
            errors.append(f"{filename}: {question_id}: the SQL is longer than {max_sql_chars} characters")
    if errors:
        raise PredictionFileError(errors[:MAX_ERRORS])
    if not sql:
        raise PredictionFileError([f"{filename}: no predictions"])
    every = [qid for ids in questions_by_database.values() for qid in ids]
    return Predictions(sql=sql, missing=[qid for qid in every if qid not in sql], format=kind)


def _decode(data: bytes, where: str) -> tuple[str | None, str | None]:
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        return None, f"{where}: line {line}: not UTF-8 (byte {error.start})"


def _read_jsonl(
    data: bytes, filename: str, questions_by_database: Mapping[str, Sequence[str]]
) -> tuple[dict[str, str], list[str]]:
    text, problem = _decode(data, filename)
    if problem:
        return {}, [problem]
    known = {qid for ids in questions_by_database.values() for qid in ids}
    sql: dict[str, str] = {}
    first_line: dict[str, int] = {}
    errors: list[str] = []
    # Without a problem, _decode gave the text.
    for number, line in enumerate(split_lines(cast(str, text)), start=1):
        if len(errors) >= MAX_ERRORS:
            break
        if not line.strip():
            continue
        at = f"{filename}: line {number}"
        try:
            item = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as error:
            reason = (
                f"{error.msg} at column {error.colno}"
                if isinstance(error, json.JSONDecodeError)
                else "nested too deeply"
            )
            errors.append(f"{at}: not a JSON object ({reason})")
            continue
        if not isinstance(item, dict):
            errors.append(f"{at}: expected a JSON object, got {type(item).__name__}")
            continue
        question_id, query = item.get("question_id"), item.get("sql")
        if not isinstance(question_id, str):
            errors.append(
                f"{at}: field 'question_id' is " + ("missing" if question_id is None else "not a string")
            )
            continue
        if not isinstance(query, str):
            errors.append(f"{at}: field 'sql' is " + ("missing" if query is None else "not a string"))
            continue
        problem = _unstorable(query)
        if problem:
            errors.append(f"{at}: field 'sql' {problem}")
            continue
        if question_id not in known:
            errors.append(f"{at}: field 'question_id': unknown question {_shown(question_id)}")
            continue
        if question_id in first_line:
            errors.append(f"{at}: field 'question_id': {question_id} repeats line {first_line[question_id]}")
            continue
        first_line[question_id] = number
        sql[question_id] = query
    return sql, errors


def _read_authors_zip(
    data: bytes, filename: str, questions_by_database: Mapping[str, Sequence[str]], *, max_unzipped_bytes: int
) -> tuple[dict[str, str], list[str]]:
    """The authors' layout: `<db>/predict.txt`, one `SQL<TAB>db` per line, lines in question order."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        entries = archive.infolist()
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        return {}, [f"{filename}: not a readable zip ({error})"]
    if len(entries) > MAX_ZIP_MEMBERS:
        return {}, [f"{filename}: more than {MAX_ZIP_MEMBERS} files and folders in the zip"]
    limit = f"{max_unzipped_bytes // 1024} KB"
    # Honest sizes over the limit are refused without inflating anything; lying ones meet the budget below.
    if sum(info.file_size for info in entries) > max_unzipped_bytes:
        return {}, [f"{filename}: unzips to more than {limit}, the upload limit"]
    budget = _Budget(left=max_unzipped_bytes)
    sql: dict[str, str] = {}
    errors: list[str] = []
    # A second predict.txt for a database would silently overwrite the first one's answers.
    member_of: dict[str, str] = {}
    for info in entries:
        path = PurePosixPath(info.filename)
        if info.is_dir() or path.name != "predict.txt" or len(path.parts) < 2:
            continue
        db = path.parts[-2]
        where = f"{filename}: {info.filename}"
        if db not in questions_by_database:
            errors.append(f"{where}: unknown database {_shown(db)}")
            continue
        if db in member_of:
            errors.append(
                f"{where}: the zip holds it twice; keep one predict.txt per database"
                if member_of[db] == info.filename
                else f"{where}: a second predict.txt for database {db} (the first is {member_of[db]});"
                " keep one per database"
            )
            continue
        member_of[db] = info.filename
        try:
            raw = _inflate(data, info, budget)
        except _PastBudget:
            errors.append(
                f"{where}: unzips past {limit} (the upload limit, for the whole zip); reading stopped"
            )
            break
        except _Unreadable as error:
            errors.append(f"{where}: {error}")
            continue
        text, problem = _decode(raw, where)
        if problem:
            errors.append(problem)
            continue
        ids = questions_by_database[db]
        # Without a problem, _decode gave the text.
        lines = [line for line in split_lines(cast(str, text)) if line.strip()]
        if len(lines) > len(ids):
            errors.append(f"{where}: {len(lines)} lines, but {db} has {len(ids)} questions")
            continue
        for number, line in enumerate(lines, start=1):
            query, _tab, line_db = line.rpartition("\t")
            if not _tab:
                query, line_db = line, db
            if line_db.strip() != db:
                errors.append(
                    f"{where}: line {number}: database {_shown(line_db.strip())} where {db} was expected"
                )
                continue
            problem = _unstorable(query)
            if problem:
                errors.append(f"{where}: line {number}: the SQL {problem}")
                continue
            sql[ids[number - 1]] = query
    if not sql and not errors:
        errors.append(f"{filename}: no <database>/predict.txt in the zip")
    return sql, errors


@dataclass
class _Budget:
    """Bytes the members of one zip may still unzip to, counted as they come out of the inflater."""

    left: int


class _Unreadable(ValueError):
    """A zip member refused; the message says why, to follow the member's name."""


class _PastBudget(Exception):
    """The zip's members have unzipped to more than the budget; nothing more of the zip is read."""


# Inflate this much at most per step, so that a stream broken part-way wastes at most one step.
_INFLATE_STEP = 64 * 1024
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature, then the lengths of the name and the extra field


def _inflate(data: bytes, info: zipfile.ZipInfo, budget: _Budget) -> bytes:
    """The member's content, inflating at most `budget.left + 1` bytes whatever its header declares.

    Not `ZipFile.open`: it inflates as much as one read asks for and only then cuts the output at the
    declared size, so members that declare a few bytes and inflate to megabytes cost that CPU each.
    zlib's `max_length` stops the inflater itself. What comes out is spent from the budget even when the
    member is then refused, so a zip of lying members costs one budget in all.
    """
    if info.flag_bits & 0x1:
        raise _Unreadable("encrypted; upload the zip without a password")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        # bzip2 and LZMA have no bounded reader in zipfile; zip tools deflate unless told otherwise.
        raise _Unreadable(
            f"compressed with method {info.compress_type}, which is not accepted;"
            " zip it with deflate (the usual method) or without compression"
        )
    header = data[info.header_offset : info.header_offset + _LOCAL_HEADER.size]
    if len(header) < _LOCAL_HEADER.size or header[:4] != b"PK\x03\x04":
        raise _Unreadable("damaged: no file header where the zip's directory points")
    _signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    start = info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
    stored = data[start : start + info.compress_size]
    if info.compress_type == zipfile.ZIP_STORED:
        content, complete = stored[: budget.left + 1], True
        budget.left -= len(content)
    else:
        content, complete = _inflate_deflated(stored, budget)
    if budget.left < 0:
        raise _PastBudget()
    if not complete or len(content) != info.file_size or zlib.crc32(content) != info.CRC:
        raise _Unreadable("damaged: its content does not match the size and checksum the zip declares for it")
    return content


def _inflate_deflated(stored: bytes, budget: _Budget) -> tuple[bytes, bool]:
    """Inflate a raw deflate stream (as zip members hold it) step by step, spending from `budget` what comes
    out; returns what came out and whether the stream ended properly."""
    inflater = zlib.decompressobj(-zlib.MAX_WBITS)
    pieces: list[bytes] = []
    pending = stored
    while not inflater.eof and budget.left >= 0:
        most = min(_INFLATE_STEP, budget.left + 1)
        try:
            piece = inflater.decompress(pending, most)
        except zlib.error:
            budget.left -= most  # zlib drops the output of a failed step: spend what it may have made
            return b"".join(pieces), False
        budget.left -= len(piece)
        pieces.append(piece)
        pending = inflater.unconsumed_tail
        if not piece and not pending:  # the input ran out before the stream's end
            break
    return b"".join(pieces), inflater.eof


def _unstorable(text: str) -> str | None:
    """Why a string cannot be stored or run as given (JSON may escape what UTF-8 text cannot hold)."""
    if "\x00" in text:
        return "contains a NUL character (\\u0000)"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"contains a lone surrogate (\\u{ord(text[error.start]):04x}), which is not text"
    return None


def _shown(value: str) -> str:
    """A user-supplied value quoted in an error, cut short so a huge value cannot flood the message."""
    return repr(value if len(value) <= 60 else value[:57] + "...")
