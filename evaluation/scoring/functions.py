"""MySQL's values and functions in plain Python: how MySQL reads a date or a time, and the SQLite functions
that the SQL from `dialect.to_sqlite` calls (`install_functions`).

The sandbox's child process imports this module, and every submission waits for it to start: so it
imports no sqlglot, and little else.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import re
import sqlite3
import unicodedata
from collections.abc import Callable
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import NamedTuple

# --- MySQL's reading of dates and times ------------------------------------------------------------------

# Any punctuation may separate the parts of a MySQL date or time.
_DATETIME_RE = re.compile(
    r"(\d{1,4})[^\w\s](\d{1,2})[^\w\s](\d{1,2})"
    r"(?:(?:\s+|T)(\d{1,2})[^\w\s](\d{1,2})(?:[^\w\s](\d{1,2}))?(?:\.(\d{1,6})\d*)?)?"
)
_COMPACT_DATETIME_RE = re.compile(r"(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?")
_TIME_RE = re.compile(r"(-)?(\d{1,3}):(\d{1,2})(?::(\d{1,2}))?(?:\.\d*)?")
_COMPACT_TIME_RE = re.compile(r"(-)?(\d{1,7})(?:\.\d*)?")
_MAX_TIME_HOURS = 838


class Moment(NamedTuple):
    """A date with a time of day as MySQL reads it; zero months and days are allowed, as MySQL does."""

    year: int
    month: int
    day: int
    hour: int = 0
    minute: int = 0
    second: int = 0
    microsecond: int = 0
    timed: bool = False  # a time of day was written

    @property
    def date_text(self) -> str:
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    @property
    def time_text(self) -> str:
        return f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}"

    @property
    def datetime_text(self) -> str:
        return f"{self.date_text} {self.time_text}"

    @property
    def has_time_of_day(self) -> bool:
        return (self.hour, self.minute, self.second, self.microsecond) != (0, 0, 0, 0)

    def to_datetime(self) -> dt.datetime | None:
        """None for what Python cannot hold: zero dates and months, year 0."""
        try:
            return dt.datetime(
                self.year, self.month, self.day, self.hour, self.minute, self.second, self.microsecond
            )
        except ValueError:
            return None


@functools.lru_cache(maxsize=4096)
def read_moment(text: str) -> Moment | None:
    """Read a MySQL date or datetime string ('2024-6-9', '2024-06-09 7:5', '20240609'), None if invalid."""
    text = text.strip()
    match = _DATETIME_RE.fullmatch(text) or _COMPACT_DATETIME_RE.fullmatch(text)
    if match is None:
        return None
    year_text, month, day, hour, minute, second = match.groups()[:6]
    fraction = match.group(7) if match.re is _DATETIME_RE else None
    year = int(year_text)
    if len(year_text) <= 2:
        year += 2000 if year < 70 else 1900
    moment = Moment(
        year,
        int(month),
        int(day),
        int(hour or 0),
        int(minute or 0),
        int(second or 0),
        int((fraction or "0").ljust(6, "0")),
        timed=hour is not None,
    )
    return moment if _is_valid(moment) else None


def _is_valid(moment: Moment) -> bool:
    if not (moment.month <= 12 and moment.hour < 24 and moment.minute < 60 and moment.second < 60):
        return False
    if moment.month == 0 or moment.day == 0:
        return moment.day <= 31
    return moment.day <= calendar.monthrange(moment.year, moment.month)[1]


def _read_time(text: str) -> str | None:
    """A MySQL TIME value as stored: '10:00' -> '10:00:00', '1:5:3' -> '01:05:03', '130' -> '00:01:30'.

    A datetime gives its time of day.
    """
    text = text.strip()
    if match := _TIME_RE.fullmatch(text):
        sign, hours, minutes = match.group(1) or "", int(match.group(2)), int(match.group(3))
        seconds = int(match.group(4) or 0)
    elif (moment := read_moment(text)) is not None and moment.timed:
        return moment.time_text
    elif match := _COMPACT_TIME_RE.fullmatch(text):
        sign, digits = match.group(1) or "", match.group(2).rjust(6, "0")
        hours, minutes, seconds = int(digits[:-4]), int(digits[-4:-2]), int(digits[-2:])
    else:
        return None
    if minutes > 59 or seconds > 59 or hours > _MAX_TIME_HOURS:
        return None
    return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}"


def normalise_temporal(value: str, kind: str) -> str | None:
    """The text MySQL stores for `value` in a column of kind "date", "datetime" or "time".

    Returns None when MySQL would reject the value. A DATE keeps only the date of a datetime; a DATETIME
    gets midnight when no time is given; fractions of seconds are dropped, as MariaDB's DATETIME does.
    """
    if kind == "time":
        return _read_time(value)
    moment = read_moment(value)
    if moment is None:
        return None
    return moment.date_text if kind == "date" else moment.datetime_text


# --- SQLite functions the generated SQL relies on --------------------------------------------------------

MONTHS_PER_UNIT = {"MONTH": 1, "QUARTER": 3, "YEAR": 12}
MICROSECONDS_PER_UNIT = {
    "MICROSECOND": 1,
    "SECOND": 1_000_000,
    "MINUTE": 60_000_000,
    "HOUR": 3_600_000_000,
    "DAY": 86_400_000_000,
    "WEEK": 604_800_000_000,
}


def _as_moment(value: object) -> Moment | None:
    # bool is an int: keep TRUE from reading as a date.
    if isinstance(value, int | str) and not isinstance(value, bool):
        return read_moment(str(value))
    return None


def _as_datetime(value: object) -> dt.datetime | None:
    moment = _as_moment(value)
    return moment.to_datetime() if moment else None


def _timestampdiff(unit: str, start: object, end: object) -> int | None:
    """MySQL TIMESTAMPDIFF: whole units from start to end; a month is complete on the same day and time."""
    begin, finish = _as_datetime(start), _as_datetime(end)
    if begin is None or finish is None or not isinstance(unit, str):
        return None
    sign = 1
    if finish < begin:
        begin, finish, sign = finish, begin, -1
    unit = unit.upper()
    if unit in MONTHS_PER_UNIT:
        months = (finish.year - begin.year) * 12 + finish.month - begin.month
        if (finish.day, finish.time()) < (begin.day, begin.time()):
            months -= 1
        return sign * (months // MONTHS_PER_UNIT[unit])
    if unit in MICROSECONDS_PER_UNIT:
        return sign * ((finish - begin) // dt.timedelta(microseconds=MICROSECONDS_PER_UNIT[unit]))
    return None


def _date_add(value: object, amount: object, unit: str) -> str | None:
    """MySQL DATE_ADD: adding months keeps the day when it exists, else takes the last day of the month."""
    moment = _as_moment(value)
    start = moment.to_datetime() if moment else None
    try:
        count = int(Decimal(str(amount)).to_integral_value(ROUND_HALF_UP))
    except (InvalidOperation, ValueError):
        return None
    if moment is None or start is None or not isinstance(unit, str):
        return None
    unit = unit.upper()
    try:
        if unit in MONTHS_PER_UNIT:
            month_index = start.year * 12 + start.month - 1 + count * MONTHS_PER_UNIT[unit]
            year, month = divmod(month_index, 12)
            day = min(start.day, calendar.monthrange(year, month + 1)[1])
            result = start.replace(year=year, month=month + 1, day=day)
        elif unit in MICROSECONDS_PER_UNIT:
            result = start + dt.timedelta(microseconds=count * MICROSECONDS_PER_UNIT[unit])
        else:
            return None
    except (ValueError, OverflowError):
        return None
    # MySQL answers a DATE for a date given without a time, when whole days are added.
    date_only = not moment.timed and unit in ("DAY", "WEEK", *MONTHS_PER_UNIT)
    return result.strftime("%Y-%m-%d") if date_only else result.strftime("%Y-%m-%d %H:%M:%S")


def _truncate(value: object, decimals: object) -> int | float | None:
    """MySQL TRUNCATE(x, d): cut (not round) to d decimals, d may be negative."""
    if not isinstance(value, int | float) or not isinstance(decimals, int):
        return None
    cut = Decimal(repr(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_DOWN)
    return int(cut) if isinstance(value, int) else float(cut)


def _concat_ws(separator: object, *parts: object) -> str | None:
    """MySQL CONCAT_WS: NULL parts are skipped, a NULL separator gives NULL."""
    if separator is None:
        return None
    return str(separator).join(as_text(part) for part in parts if part is not None)


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


def _regexp(pattern: object, value: object) -> int | None:
    """`value REGEXP pattern`: a match anywhere, ignoring case as MySQL's default collation does."""
    if pattern is None or value is None:
        return None
    try:
        return int(_compiled(as_text(pattern)).search(as_text(value)) is not None)
    except re.error:
        return None


def as_text(value: object) -> str:
    """A value as MySQL turns it into a string (bytes are read as UTF-8)."""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


# --- MySQL 8.0's default collations as SQLite collations -------------------------------------------------

# The SQLite collation of a text column whose MySQL table or column has this character set, under
# MySQL 8.0's defaults (`mysql_dump` declares them; `install_functions` registers them).
UTF8MB4_COLLATION = "utf8mb4_0900_ai_ci"
UTF8MB3_COLLATION = "utf8mb3_general_ci"
# Letters that Unicode does not decompose but the UCA weighs as other letters (ai_ci: 'æ' = 'ae').
_UCA_LETTERS = str.maketrans({"æ": "ae", "œ": "oe", "ø": "o", "đ": "d", "ł": "l", "ħ": "h", "\u0131": "i"})


@functools.lru_cache(maxsize=65_536)
def _uca_weight_wide(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.casefold().translate(_UCA_LETTERS))
    return "".join(char for char in decomposed if not unicodedata.combining(char)).casefold()


def uca_weight(text: str) -> str:
    """What utf8mb4_0900_ai_ci compares of a string: case and accents ignored ('Ščukin' -> 'scukin',
    'ß' -> 'ss'), trailing spaces kept (NO PAD). An approximation of the UCA: letters and digits compare
    as MySQL's do; the order of punctuation among itself and against letters may differ."""
    return text.lower() if text.isascii() else _uca_weight_wide(text)


class _GeneralWeights(dict[int, str]):
    """utf8mb3_general_ci's weight of each character: its base letter, upper case ('è' -> 'E', 'ß' -> 'S');
    one character for one character, as general_ci compares."""

    def __missing__(self, code: int) -> str:
        base = unicodedata.normalize("NFD", chr(code))[0]
        upper = "S" if base == "ß" else base.upper()
        weight = upper if len(upper) == 1 else base
        self[code] = weight
        return weight


_GENERAL_WEIGHTS = _GeneralWeights()


def general_weight(text: str) -> str:
    """What utf8mb3_general_ci compares of a string: case and accents ignored, trailing spaces too (PAD
    SPACE: 'a' = 'a   ')."""
    text = text.rstrip(" ")
    return text.upper() if text.isascii() else text.translate(_GENERAL_WEIGHTS)


def _collation(weight: Callable[[str], str]) -> Callable[[str, str], int]:
    def compare(left: str, right: str) -> int:
        left, right = weight(left), weight(right)
        return (left > right) - (left < right)

    return compare


class _LikeFold(dict[int, str]):
    """A character as LIKE compares it under utf8mb4_0900_ai_ci: lower case, accents dropped; always one
    character for one (LIKE compares character by character: 'ß' LIKE '_' holds)."""

    def __missing__(self, code: int) -> str:
        decomposed = unicodedata.normalize("NFKD", chr(code).lower())
        kept = "".join(char for char in decomposed if not unicodedata.combining(char))
        fold = kept if len(kept) == 1 else chr(code).lower()[:1] or chr(code)
        self[code] = fold
        return fold


_LIKE_FOLD = _LikeFold()


def _like_fold(text: str) -> str:
    return text.lower() if text.isascii() else text.translate(_LIKE_FOLD)


# Longer LIKE patterns are refused (SQLite's own limit in the sandbox, which MySQL does not have).
LIKE_PATTERN_MAX_CHARS = 1000


class _LikePattern(NamedTuple):
    """A LIKE pattern cut at its `%`s: segments of fixed length (`_` is any one character), as regular
    expressions without repetition, so that matching takes no backtracking."""

    segments: tuple[tuple[re.Pattern[str], int], ...]  # each with its length in characters


@functools.lru_cache(maxsize=1024)
def _like_pattern(pattern: str, escape: str | None) -> _LikePattern:
    segments: list[tuple[re.Pattern[str], int]] = []
    parts: list[str] = []
    characters = iter(pattern)
    for char in characters:
        if char == escape:
            following = next(characters, escape)  # a trailing escape stands for itself, as in MySQL
            parts.append(re.escape(_like_fold(following)))
        elif char == "%":
            segments.append((re.compile("".join(parts), re.DOTALL), len(parts)))
            parts = []
        else:
            parts.append("." if char == "_" else re.escape(_like_fold(char)))
    segments.append((re.compile("".join(parts), re.DOTALL), len(parts)))
    return _LikePattern(tuple(segments))


def _like_matches(pattern: _LikePattern, value: str) -> bool:
    # The first segment is matched at the start, the last at the end, each other one at its leftmost
    # place after the one before: for `%` and `_` alone, the leftmost place is never a wrong choice.
    segments = pattern.segments
    first, first_length = segments[0]
    if len(segments) == 1:
        return first.fullmatch(value) is not None
    last, last_length = segments[-1]
    end = len(value) - last_length
    if end < first_length or first.match(value) is None or last.fullmatch(value, end) is None:
        return False
    position = first_length
    for segment, _ in segments[1:-1]:
        found = segment.search(value, position, end)
        if found is None:
            return False
        position = found.end()
    return True


def _like(pattern: object, value: object, escape: object = None) -> int | None:
    """`value LIKE pattern [ESCAPE escape]` under utf8mb4_0900_ai_ci: case and accents ignored
    ('Universita' LIKE 'Università'), trailing spaces significant, one character for `_`.

    SQLite calls like(pattern, value) for `value LIKE pattern`, ignoring the collation of the column:
    this replaces its built-in LIKE. Without ESCAPE, MySQL's escape character is the backslash;
    `dialect.to_sqlite` writes it out, so that the two-argument form keeps SQLite's meaning (no escape).
    A pattern over LIKE_PATTERN_MAX_CHARS raises OverflowError, which SQLite reports as too big.
    """
    if pattern is None or value is None or (escape is not None and not isinstance(escape, str)):
        return None
    if isinstance(escape, str) and len(escape) != 1:
        return None
    text = as_text(pattern)
    if len(text) > LIKE_PATTERN_MAX_CHARS:
        raise OverflowError("the LIKE pattern is too long")
    return int(_like_matches(_like_pattern(text, escape), _like_fold(as_text(value))))


_FUNCTIONS = (
    ("mysql_timestampdiff", 3, _timestampdiff),
    ("mysql_date_add", 3, _date_add),
    ("mysql_truncate", 2, _truncate),
    ("mysql_concat_ws", -1, _concat_ws),
    ("regexp", 2, _regexp),  # SQLite's `x REGEXP y` calls regexp(y, x) but defines no such function
    ("like", 2, _like),
    ("like", 3, _like),
)
_COLLATIONS = ((UTF8MB4_COLLATION, _collation(uca_weight)), (UTF8MB3_COLLATION, _collation(general_weight)))


def install_functions(conn: sqlite3.Connection) -> None:
    """Register the functions SQL from `to_sqlite` may call, and the collations of the copies' text
    columns (a copy cannot be read without them). Cheap: call it on every connection."""
    for name, arity, function in _FUNCTIONS:
        conn.create_function(name, arity, function, deterministic=True)
    for name, compare in _COLLATIONS:
        conn.create_collation(name, compare)
