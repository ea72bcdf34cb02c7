"""MySQL's values and functions in plain Python: how MySQL reads a date or a time, and the SQLite functions
that the SQL from `dialect.to_sqlite` calls (`install_functions`).

The sandbox's child process imports this module, and every submission waits for it to start: so it
imports no sqlglot, and little else.
"""

from __future__ import annotations

import calendar
import datetime as dt
import functools
import math
import re
import sqlite3
import unicodedata
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation
from typing import NamedTuple, NoReturn

from evaluation.scoring.collations import install_collations, uca_weight

# --- MySQL's reading of dates and times ------------------------------------------------------------------

# Any punctuation may separate the parts of a MySQL date or time.
_DATETIME_RE = re.compile(
    r"(\d{1,4})[^\w\s](\d{1,2})[^\w\s](\d{1,2})"
    r"(?:(?:\s+|T)(\d{1,2})[^\w\s](\d{1,2})(?:[^\w\s](\d{1,2}))?(?:\.(\d{1,6})\d*)?)?"
)
# YYYYMMDD, YYMMDD, and either with hhmmss (as MySQL reads a number or a string of digits as a date).
_COMPACT_DATETIME_RE = re.compile(r"(\d{4}|\d{2})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?")
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


# --- MySQL's errors while a query runs, and its integer arithmetic -----------------------------------------


class QueryError(Exception):
    """An error MySQL raises while a query runs, on a value it meets (its message is MySQL's), raised by a
    function that `install_functions` registers."""


# SQLite reports only that "user-defined function raised exception": the message of the last QueryError
# waits here for `raised_error`.
_RAISED: list[str] = []


def raised_error() -> str | None:
    """The message of the QueryError a function raised since the last call, if any (and forget it)."""
    message = _RAISED[0] if _RAISED else None
    _RAISED.clear()
    return message


def _fail(code: int, state: str, message: str) -> NoReturn:
    text = f"ERROR {code} ({state}): {message}"
    _RAISED[:] = [text]
    raise QueryError(text)


# The ranges of MySQL's integer arithmetic: BIGINT, and BIGINT UNSIGNED from 0.
BIGINT_MIN = -(2**63)
BIGINT_MAX = 2**63 - 1
BIGINT_UNSIGNED_MAX = 2**64 - 1


def _bigint_operand(value: object, unsigned: bool) -> int | None:
    """An integer operand's value: SQLite holds a BIGINT UNSIGNED of 2^63 or more as a REAL, or (from the
    bit operators) as the signed integer of the same 64 bits; a hexadecimal literal is a BLOB. None for
    what is no integer."""
    if isinstance(value, int):
        return value + 2**64 if unsigned and value < 0 else value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    return None


def _bigint(
    operator: object, left: object, right: object, signs: object, expression: object
) -> int | float | None:
    """MySQL's `left operator right` (+, -, * or DIV) of two integers, `signs` saying which are unsigned
    ("us": the left one is, the right one is signed): BIGINT arithmetic, unsigned when either operand is
    (MySQL 8.0's default sql_mode lacks NO_UNSIGNED_SUBTRACTION), and error 1690 when the result leaves the
    range, naming `expression` as MySQL names it. A result of 2^63 or more is a REAL: SQLite's integers
    are signed 64-bit."""
    if left is None or right is None or not isinstance(signs, str) or len(signs) != 2:
        return None
    first, second = _bigint_operand(left, signs[0] == "u"), _bigint_operand(right, signs[1] == "u")
    if first is None or second is None:  # no integers after all: arithmetic on what MySQL reads as numbers
        return _float_arithmetic(operator, _as_number(left), _as_number(right))
    if operator == "+":
        result = first + second
    elif operator == "-":
        result = first - second
    elif operator == "*":
        result = first * second
    elif operator == "DIV":
        if second == 0:
            return None  # MySQL's division by zero in a SELECT: NULL (ERROR_FOR_DIVISION_BY_ZERO warns only)
        quotient = abs(first) // abs(second)
        result = quotient if (first < 0) == (second < 0) else -quotient
    else:
        return None
    unsigned = "u" in signs
    if not (0 if unsigned else BIGINT_MIN) <= result <= (BIGINT_UNSIGNED_MAX if unsigned else BIGINT_MAX):
        kind = "BIGINT UNSIGNED" if unsigned else "BIGINT"
        _fail(1690, "22003", f"{kind} value is out of range in '{expression}'")
    return result if result <= BIGINT_MAX else float(result)


def _float_arithmetic(operator: object, left: float, right: float) -> float | None:
    if operator == "+":
        return left + right
    if operator == "-":
        return left - right
    if operator == "*":
        return left * right
    if operator == "DIV" and right != 0:
        return float(int(left / right))
    return None


def _cast_integer(value: object, unsigned: object, exact: object) -> int | float | None:
    """MySQL's CAST(value AS SIGNED) and CAST(value AS UNSIGNED) (`unsigned` 1): a number rounded to an
    integer, half away from zero when it is `exact` (a DECIMAL), half to even otherwise (a DOUBLE); a string
    by its leading integer ('12.7' and '12abc' are 12, 'abc' 0); beyond the type's range, its end; a
    negative value as UNSIGNED wraps round 2^64 (CAST(-1 AS UNSIGNED) is 2^64 - 1, a REAL here)."""
    if value is None:
        return None
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        number = _round_half_away(value) if exact else round(value)
    elif isinstance(value, int):
        number = value
    elif isinstance(value, bytes):
        number = int.from_bytes(value, "big")
    else:
        match = re.match(r"\s*([-+]?\d+)", as_text(value))
        number = int(match.group(1)) if match else 0
    number = min(max(number, BIGINT_MIN), BIGINT_UNSIGNED_MAX if unsigned else BIGINT_MAX)
    if unsigned and number < 0:
        number += 2**64
    return number if number <= BIGINT_MAX else float(number)


def _round_half_away(number: float) -> int:
    """A number rounded to an integer as MySQL rounds a DECIMAL: half away from zero."""
    return int(Decimal(repr(number)).to_integral_value(ROUND_HALF_UP))


# --- MySQL's string and date functions SQLite lacks -------------------------------------------------------

_MONTH_NAMES = tuple(calendar.month_name)  # English, as MySQL's default lc_time_names
_DAY_NAMES = tuple(calendar.day_name)  # Monday first
_DATE_DIRECTIVES = frozenset("aDdbcejMmUuVvWwXxYy")
_TIME_DIRECTIVES = frozenset("fHhIiklprSsT")


def _date_format(value: object, format_: object) -> str | None:
    """MySQL DATE_FORMAT (and MONTHNAME, DAYNAME): English names; NULL for what is no date."""
    if value is None or not isinstance(format_, str):
        return None
    moment = _as_moment(value)
    if moment is None:
        time = _read_time(as_text(value))
        if time is None:
            return None
        hours, minutes, seconds = map(int, time.lstrip("-").split(":"))
        moment = Moment(0, 0, 0, hours % 24, minutes, seconds, timed=True)
    parts: list[str] = []
    characters = iter(format_)
    for char in characters:
        if char != "%":
            parts.append(char)
            continue
        directive = next(characters, "")
        text = _format_directive(moment, directive)
        if text is None:
            return None
        parts.append(text)
    return "".join(parts)


def _format_directive(moment: Moment, directive: str) -> str | None:
    hour12 = moment.hour % 12 or 12
    if directive in "MbWawjUuD":  # names and counts need a real date
        day = moment.to_datetime()
        if day is None:
            return None
        if directive == "M":
            return _MONTH_NAMES[moment.month]
        if directive == "b":
            return _MONTH_NAMES[moment.month][:3]
        if directive == "W":
            return _DAY_NAMES[day.weekday()]
        if directive == "a":
            return _DAY_NAMES[day.weekday()][:3]
        if directive == "w":
            return str((day.weekday() + 1) % 7)
        if directive == "j":
            return f"{day.timetuple().tm_yday:03d}"
        if directive == "U":
            return day.strftime("%U")
        if directive == "u":
            return day.strftime("%W")
        suffix = (
            "th" if 10 <= moment.day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(moment.day % 10, "th")
        )
        return f"{moment.day}{suffix}"  # D
    simple = {
        "Y": f"{moment.year:04d}",
        "y": f"{moment.year % 100:02d}",
        "m": f"{moment.month:02d}",
        "c": str(moment.month),
        "d": f"{moment.day:02d}",
        "e": str(moment.day),
        "H": f"{moment.hour:02d}",
        "k": str(moment.hour),
        "h": f"{hour12:02d}",
        "I": f"{hour12:02d}",
        "l": str(hour12),
        "i": f"{moment.minute:02d}",
        "S": f"{moment.second:02d}",
        "s": f"{moment.second:02d}",
        "f": f"{moment.microsecond:06d}",
        "p": "PM" if moment.hour >= 12 else "AM",
        "T": moment.time_text,
        "r": f"{hour12:02d}:{moment.minute:02d}:{moment.second:02d} {'PM' if moment.hour >= 12 else 'AM'}",
        "%": "%",
    }
    return simple.get(directive, directive)


_NUMBER_WIDTHS = {"d": 2, "e": 2, "m": 2, "c": 2, "Y": 4, "y": 2, "H": 2, "k": 2, "h": 2, "I": 2, "l": 2}
_NUMBER_WIDTHS |= {"i": 2, "s": 2, "S": 2, "f": 6, "j": 3}


def _str_to_date(value: object, format_: object) -> str | None:
    """MySQL STR_TO_DATE: a DATE, DATETIME or TIME as the format's parts say; NULL when the text does not
    fit the format or the date is invalid or has a zero part (MySQL 8.0's NO_ZERO_IN_DATE, NO_ZERO_DATE).
    Text left over after the format is ignored, as MySQL does (with a warning)."""
    if value is None or not isinstance(format_, str):
        return None
    text = as_text(value)
    fields = {"Y": 0, "m": 0, "d": 0, "H": 0, "i": 0, "s": 0, "f": 0}
    pm: bool | None = None
    position = 0
    characters = iter(format_)
    directives: set[str] = set()
    for char in characters:
        if char.isspace():
            while position < len(text) and text[position].isspace():
                position += 1
            continue
        if char != "%":
            if position >= len(text) or text[position] != char:
                return None
            position += 1
            continue
        directive = next(characters, "%")
        while position < len(text) and text[position].isspace():
            position += 1
        for part in {"T": "H:i:s", "r": "h:i:s p"}.get(directive, directive):
            if part in ": ":
                if position >= len(text) or text[position] != part:
                    return None
                position += 1 if part == ":" else 0
                while part == " " and position < len(text) and text[position].isspace():
                    position += 1
                continue
            directives.add(part)
            if part in _NUMBER_WIDTHS:
                end = position
                while end < len(text) and end - position < _NUMBER_WIDTHS[part] and text[end].isdigit():
                    end += 1
                if end == position:
                    return None
                number = int(text[position:end])
                if part == "f":
                    number = int(text[position:end].ljust(6, "0"))
                if part == "y":
                    number += 2000 if number < 70 else 1900
                position = end
                key = {"e": "d", "c": "m", "y": "Y", "k": "H", "h": "H", "I": "H", "l": "H", "S": "s"}
                fields[key.get(part, part)] = number
            elif part in "MbWa":
                names = _MONTH_NAMES[1:] if part in "Mb" else _DAY_NAMES
                rest = text[position:].lower()
                found = next(
                    (
                        (index, len(name))
                        for index, full in enumerate(names)
                        for name in (full, full[:3])
                        if rest.startswith(name.lower())
                    ),
                    None,
                )
                if found is None:
                    return None
                if part in "Mb":
                    fields["m"] = found[0] + 1
                position += found[1]
            elif part == "p":
                marker = text[position : position + 2].upper()
                if marker not in ("AM", "PM"):
                    return None
                pm = marker == "PM"
                position += 2
            elif part == "%":
                if position >= len(text) or text[position] != "%":
                    return None
                position += 1
            else:
                return None  # a directive STR_TO_DATE does not read here (weeks, %j, %D)
    if pm is not None:
        if not 1 <= fields["H"] <= 12:
            return None
        fields["H"] = fields["H"] % 12 + (12 if pm else 0)
    has_date = bool(directives & _DATE_DIRECTIVES)
    has_time = bool(directives & _TIME_DIRECTIVES)
    moment = Moment(fields["Y"], fields["m"], fields["d"], fields["H"], fields["i"], fields["s"], fields["f"])
    if fields["H"] > 23 or fields["i"] > 59 or fields["s"] > 59:
        return None
    if has_date or not has_time:
        if moment.to_datetime() is None:
            return None
        if not has_time:
            return moment.date_text
        fraction = f".{moment.microsecond:06d}" if "f" in directives else ""
        return moment.datetime_text + fraction
    fraction = f".{moment.microsecond:06d}" if "f" in directives else ""
    return moment.time_text + fraction


def _period_months(period: int) -> int:
    year, month = divmod(period, 100)
    if year < 100:
        year += 2000 if year < 70 else 1900
    return year * 12 + month - 1


def _period_diff(first: object, second: object) -> int | None:
    """MySQL PERIOD_DIFF(P1, P2): months from period P2 to P1, periods as YYMM or YYYYMM."""
    if not isinstance(first, int | float | str) or not isinstance(second, int | float | str):
        return None
    try:
        return _period_months(int(float(first))) - _period_months(int(float(second)))
    except ValueError:
        return None


def _period_add(period: object, months: object) -> int | None:
    """MySQL PERIOD_ADD(P, N): period P (YYMM or YYYYMM) N months later, as YYYYMM."""
    if not isinstance(period, int | float | str) or not isinstance(months, int | float | str):
        return None
    try:
        year, month = divmod(_period_months(int(float(period))) + int(float(months)), 12)
    except ValueError:
        return None
    return year * 100 + month + 1


# MySQL's day numbers (TO_DAYS, FROM_DAYS): day 1 is 0000-01-01, in a calendar whose year 0 is no leap
# year, so that day 366 is 0001-01-01, Python's date.fromordinal(1). FROM_DAYS gives a date from day 366
# (0001-01-01) to 3652424 (9999-12-31), the zero date otherwise.
_DAYS_BEFORE_YEAR_1 = 365
_LAST_DAY_NUMBER = 3_652_424
_ZERO_DATE = "0000-00-00"


def _day_number(year: int, month: int, day: int) -> int:
    """MySQL's calc_daynr: the day number of a valid date (year 0 included)."""
    if year == 0:
        return dt.date(1, month, day).timetuple().tm_yday  # year 1 has year 0's days: neither is leap
    return dt.date(year, month, day).toordinal() + _DAYS_BEFORE_YEAR_1


def _full_date(value: object) -> Moment | None:
    """A date as MySQL 8.0's default sql_mode reads it for the day-number functions: none when invalid,
    the zero date (NO_ZERO_DATE) or with a zero month or day (NO_ZERO_IN_DATE)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # a number as a date: 20240229.0 is 20240229
    moment = _as_moment(value)
    if moment is None or moment.month == 0 or moment.day == 0:
        return None
    if moment.year == 0 and (moment.month, moment.day) == (2, 29):
        return None  # year 0 has no 29 February for MySQL
    return moment


def _to_days(value: object) -> int | None:
    """MySQL TO_DAYS(date): its day number (TO_DAYS('0000-01-01') is 1); NULL for no valid date."""
    moment = _full_date(value)
    return None if moment is None else _day_number(moment.year, moment.month, moment.day)


def _to_seconds(value: object) -> int | None:
    """MySQL TO_SECONDS(datetime): the seconds since 0000-01-01 00:00:00 (day 1 starts at 86400)."""
    moment = _full_date(value)
    if moment is None:
        return None
    days = _day_number(moment.year, moment.month, moment.day)
    return days * 86_400 + moment.hour * 3_600 + moment.minute * 60 + moment.second


def _integer_argument(value: object) -> int | None:
    """An integer argument as MySQL reads it: a number rounded half away from zero, a string by its
    number ('739000' is 739000)."""
    if value is None or isinstance(value, bytes):
        return None
    number = _as_number(value)
    return _round_half_away(number) if math.isfinite(number) else None


def _from_day_number(days: int) -> str | None:
    if not _DAYS_BEFORE_YEAR_1 < days <= _LAST_DAY_NUMBER:
        return None
    return dt.date.fromordinal(days - _DAYS_BEFORE_YEAR_1).isoformat()


def _from_days(value: object) -> str | None:
    """MySQL FROM_DAYS(N): the date of day number N, the zero date '0000-00-00' for N out of the range
    of dates (as MySQL 8.0 gives it)."""
    days = _integer_argument(value)
    if days is None:
        return None
    return _from_day_number(days) or _ZERO_DATE


def _makedate(year: object, day_of_year: object) -> str | None:
    """MySQL MAKEDATE(year, dayofyear): the day of the year, counting on into the next years; a year of two
    digits is 1970-2069; NULL for a day below 1 or past 9999-12-31."""
    first, day = _integer_argument(year), _integer_argument(day_of_year)
    if first is None or day is None or day < 1 or not 0 <= first <= 9999:
        return None
    if first < 100:
        first += 2000 if first < 70 else 1900
    return _from_day_number(_day_number(first, 1, 1) + day - 1)


# MySQL's week modes (WEEK(date, mode)): the bits of `week_mode`.
_WEEK_MONDAY_FIRST = 1
_WEEK_YEAR = 2
_WEEK_FIRST_WEEKDAY = 4


def _week_mode(mode: int) -> int:
    behaviour = mode & 7
    if not behaviour & _WEEK_MONDAY_FIRST:
        behaviour ^= _WEEK_FIRST_WEEKDAY
    return behaviour


def _weekday(day_number: int, sunday_first: bool) -> int:
    return (day_number + 5 + int(sunday_first)) % 7


def _days_in_year(year: int) -> int:
    return 366 if year and calendar.isleap(year) else 365


def _calc_week(moment: Moment, behaviour: int) -> tuple[int, int]:
    """MySQL's calc_week: (week, year of the week) of a date under a week mode's `behaviour`."""
    day_number = _day_number(moment.year, moment.month, moment.day)
    first_day = _day_number(moment.year, 1, 1)
    monday_first = bool(behaviour & _WEEK_MONDAY_FIRST)
    week_year = bool(behaviour & _WEEK_YEAR)
    first_weekday = bool(behaviour & _WEEK_FIRST_WEEKDAY)
    weekday = _weekday(first_day, not monday_first)
    year = moment.year
    if moment.month == 1 and moment.day <= 7 - weekday:
        if not week_year and ((first_weekday and weekday != 0) or (not first_weekday and weekday >= 4)):
            return 0, year
        week_year = True
        year -= 1
        days = _days_in_year(year)
        first_day -= days
        weekday = (weekday + 53 * 7 - days) % 7
    if (first_weekday and weekday != 0) or (not first_weekday and weekday >= 4):
        days = day_number - (first_day + (7 - weekday))
    else:
        days = day_number - (first_day - weekday)
    if week_year and days >= 52 * 7:
        weekday = (weekday + _days_in_year(year)) % 7
        if (not first_weekday and weekday < 4) or (first_weekday and weekday == 0):
            return 1, year + 1
    return days // 7 + 1, year


def _week(value: object, mode: object = 0) -> int | None:
    """MySQL WEEK(date, mode) (WEEKOFYEAR is mode 3): the week number, 0 to 53, under the mode's rules."""
    moment, number = _full_date(value), _integer_argument(mode)
    if moment is None or number is None:
        return None
    return _calc_week(moment, _week_mode(number))[0]


def _yearweek(value: object, mode: object = 0) -> int | None:
    """MySQL YEARWEEK(date, mode): the year and week, YYYYWW, the week counted as in its own year."""
    moment, number = _full_date(value), _integer_argument(mode)
    if moment is None or number is None:
        return None
    week, year = _calc_week(moment, _week_mode(number) | _WEEK_YEAR)
    return year * 100 + week


def _strcmp(left: object, right: object) -> int | None:
    """MySQL STRCMP under utf8mb4_0900_ai_ci: -1, 0 or 1, case and accents ignored."""
    if left is None or right is None:
        return None
    first, second = uca_weight(as_text(left)), uca_weight(as_text(right))
    return (first > second) - (first < second)


def _substring_index(value: object, delimiter: object, count: object) -> str | None:
    """MySQL SUBSTRING_INDEX: the text before the count-th delimiter (after it, counting from the end,
    when count < 0); the delimiter is matched with case, as MySQL does."""
    if value is None or delimiter is None or not isinstance(count, int | float):
        return None
    text, separator, number = as_text(value), as_text(delimiter), int(count)
    if number == 0 or not separator:
        return ""
    parts = text.split(separator)
    return separator.join(parts[:number] if number > 0 else parts[number:])


def _field(value: object, *candidates: object) -> int:
    """MySQL FIELD: the position of value among the candidates, 0 when absent or NULL; as text under
    utf8mb4_0900_ai_ci when all are text, else as numbers."""
    if value is None:
        return 0
    if all(isinstance(item, str) for item in (value, *candidates) if item is not None):
        wanted = uca_weight(str(value))
        matches = (item is not None and uca_weight(str(item)) == wanted for item in candidates)
    else:
        number = _as_number(value)
        matches = (item is not None and _as_number(item) == number for item in candidates)
    return next((index for index, match in enumerate(matches, 1) if match), 0)


def _find_in_set(value: object, members: object) -> int | None:
    """MySQL FIND_IN_SET: the position of value among the comma-separated members, 0 when absent or when
    value holds a comma (no member does); compared as whole strings under utf8mb4_0900_ai_ci (case and
    accents ignored, trailing spaces kept), whatever the list's collation."""
    if value is None or members is None:
        return None
    wanted, listed = as_text(value), as_text(members)
    if not listed or "," in wanted:
        return 0
    weight = uca_weight(wanted)
    return next(
        (index for index, member in enumerate(listed.split(","), 1) if uca_weight(member) == weight), 0
    )


def _find_set_member(value: object, member: object, position: object) -> int | None:
    """MySQL's FIND_IN_SET of a constant in a SET column, where the constant is one of the column's members:
    the member's `position` among the declared ones when the value holds it, else 0 (MySQL tests the
    member's bit; `typed_rewrites` finds the member and its position)."""
    if value is None:
        return None
    return position if isinstance(position, int) and member in as_text(value).split(",") else 0


def _enum_index(value: object, *members: object) -> int | None:
    """An ENUM's value as MySQL uses it as a number: the position of its member among the declared ones
    (`typed_rewrites` passes them), 0 for the empty string MySQL stores for an invalid value."""
    if value is None:
        return None
    return members.index(value) + 1 if value in members else 0


def _set_number(value: object, *members: object) -> int | None:
    """A SET's value as MySQL uses it as a number: the bits of its members, the first declared member being
    bit 0 ('b,c' of SET('a','b','c') is 6)."""
    if value is None:
        return None
    chosen = set(as_text(value).split(","))
    return sum(1 << bit for bit, member in enumerate(members) if member in chosen)


def _as_number(value: object) -> float:
    """A value as MySQL reads it as a number: a string by its leading digits ('12abc' is 12, 'abc' 0)."""
    if isinstance(value, int | float):
        return float(value)
    match = re.match(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?", as_text(value))
    return float(match.group(0)) if match else 0.0


def _locate(needle: object, haystack: object, start: object = 1) -> int | None:
    """MySQL LOCATE/INSTR/POSITION: the character position of needle in haystack from start, 0 when absent;
    case and accents ignored, as utf8mb4_0900_ai_ci does (character by character)."""
    if needle is None or haystack is None or start is None or not isinstance(start, int | float):
        return None
    begin = int(start)
    text, wanted = _like_fold(as_text(haystack)), _like_fold(as_text(needle))
    if begin < 1 or begin > len(text) + 1:
        return 0
    return text.find(wanted, begin - 1) + 1


def _date(value: object) -> str | None:
    """MySQL DATE(x) and CAST(x AS DATE): the date of a date or datetime as MySQL reads it ('2024-6-1' is
    2024-06-01), NULL for what is no valid date ('2024-02-30') or, under MySQL 8.0's default sql_mode
    (NO_ZERO_DATE, NO_ZERO_IN_DATE), a zero date or one with a zero part ('2024-00-10')."""
    moment = _as_moment(value)
    return moment.date_text if moment is not None and moment.to_datetime() is not None else None


def _datetime(value: object) -> str | None:
    """MySQL CAST(x AS DATETIME): `_date`'s reading, with the time of day (midnight when none is given)."""
    moment = _as_moment(value)
    return moment.datetime_text if moment is not None and moment.to_datetime() is not None else None


GROUP_CONCAT_MAX_BYTES = 1024  # MySQL 8.0's group_concat_max_len
# What one group may hold before it is ordered and cut: its values' text, and about what Python spends on
# keeping each. Far beyond any group of the benchmark's databases, far below the sandbox child's memory;
# past it the query fails as too big (OverflowError: SQLITE_TOOBIG), a resource limit.
_GROUP_CONCAT_HELD_BYTES = 16_000_000
_HELD_ITEM_BYTES = 200


class _GroupConcat:
    """MySQL GROUP_CONCAT([DISTINCT] x ORDER BY k... SEPARATOR s), called as
    mysql_group_concat(x, s, distinct, directions, k...) with directions 'A'/'D' per key. NULLs are
    skipped; DISTINCT and the order of text follow utf8mb4_0900_ai_ci; the result is cut to
    group_concat_max_len bytes (1024), as MySQL 8.0 does by default."""

    def __init__(self) -> None:
        self.items: list[tuple[tuple[object, ...], str]] = []
        self.held = 0  # bytes, as _GROUP_CONCAT_HELD_BYTES counts them
        self.separator = ","
        self.distinct = False
        self.directions = ""

    def step(
        self, value: object, separator: object, distinct: object, directions: object, *keys: object
    ) -> None:
        if value is None:
            return
        self.separator = "" if separator is None else as_text(separator)
        self.distinct = bool(distinct)
        self.directions = directions if isinstance(directions, str) else ""
        text = as_text(value)
        self.held += len(text) + _HELD_ITEM_BYTES
        if self.held > _GROUP_CONCAT_HELD_BYTES:
            raise OverflowError("GROUP_CONCAT holds too much")
        self.items.append((keys, text))

    def finalize(self) -> str | None:
        if not self.items:
            return None
        items = self.items
        if self.distinct:
            unique: dict[str, tuple[tuple[object, ...], str]] = {}
            for item in items:
                unique.setdefault(uca_weight(item[1]), item)  # the first of equal values is kept
            items = list(unique.values())
        for index in reversed(range(len(self.directions))):
            items.sort(key=lambda item: _sort_key(item[0][index]), reverse=self.directions[index] == "D")
        text = self.separator.join(value for _, value in items)
        encoded = text.encode()
        if len(encoded) <= GROUP_CONCAT_MAX_BYTES:
            return text
        return encoded[:GROUP_CONCAT_MAX_BYTES].decode("utf-8", errors="ignore")


def _sort_key(value: object) -> tuple[int, object]:
    # MySQL orders NULL first, then numbers or text (text by its collation).
    if value is None:
        return (0, 0)
    if isinstance(value, str):
        return (2, uca_weight(value))
    if isinstance(value, bytes):
        return (3, value)
    return (1, value)


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
    ("mysql_date_format", 2, _date_format),
    ("mysql_str_to_date", 2, _str_to_date),
    ("mysql_period_diff", 2, _period_diff),
    ("mysql_strcmp", 2, _strcmp),
    ("mysql_substring_index", 3, _substring_index),
    ("mysql_field", -1, _field),
    ("mysql_find_in_set", 2, _find_in_set),
    ("mysql_find_set_member", 3, _find_set_member),
    ("mysql_enum_index", -1, _enum_index),
    ("mysql_set_number", -1, _set_number),
    ("mysql_locate", 2, _locate),
    ("mysql_locate", 3, _locate),
    ("mysql_date", 1, _date),
    ("mysql_datetime", 1, _datetime),
    ("mysql_bigint", 5, _bigint),
    ("mysql_cast_integer", 3, _cast_integer),
    ("mysql_period_add", 2, _period_add),
    ("mysql_to_days", 1, _to_days),
    ("mysql_to_seconds", 1, _to_seconds),
    ("mysql_from_days", 1, _from_days),
    ("mysql_makedate", 2, _makedate),
    ("mysql_week", 2, _week),
    ("mysql_yearweek", 1, _yearweek),
    ("mysql_yearweek", 2, _yearweek),
)


def install_functions(conn: sqlite3.Connection) -> None:
    """Register the functions SQL from `to_sqlite` may call, and the collations of the copies' text
    columns (a copy cannot be read without them). Cheap: call it on every connection."""
    for name, arity, function in _FUNCTIONS:
        conn.create_function(name, arity, function, deterministic=True)
    conn.create_aggregate("mysql_group_concat", -1, _GroupConcat)  # type: ignore[arg-type]  # typeshed: one-argument steps only
    install_collations(conn)
