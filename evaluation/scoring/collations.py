"""MySQL 8.0's collations of utf8mb4 and utf8mb3 text, as SQLite collations of the same names.

MySQL 8.0 accepts, in a column's definition and in `expr COLLATE name`, every collation of the text's
character set (SHOW COLLATION): 89 for utf8mb4, 28 for utf8mb3 (`utf8_` names are aliases of the
`utf8mb3_` ones). `install_collations` registers each under its MySQL name, so that a copy's column
(`mysql_dump` declares the MySQL collation of each text column) and a query's COLLATE (`typed_rewrites`)
compare and sort as MySQL does, as closely as these approximations allow. Each collation is one of seven
kinds; what each kind compares:

- UCA 9.0.0, accent and case insensitive (`utf8mb4_0900_ai_ci`, the default, and every
  `utf8mb4_xx_0900_ai_ci`): `uca_weight`, NO PAD ('a' <> 'a ');
- UCA 9.0.0, accent sensitive, case insensitive (`utf8mb4_0900_as_ci`): accents count after the letters
  ('e' < 'é' < 'f'), NO PAD;
- UCA 9.0.0, accent and case sensitive (`utf8mb4_0900_as_cs`, every `utf8mb4_xx_0900_as_cs`,
  `utf8mb4_ja_0900_as_cs_ks`): then case, lower case first ('a' < 'A' < 'b'), NO PAD;
- code points, NO PAD (`utf8mb4_0900_bin`);
- code points, PAD SPACE (`utf8mb4_bin`, `utf8mb3_bin`: 'a' = 'a ', 'A' <> 'a');
- the older UCA collations, accent and case insensitive, PAD SPACE (`_unicode_ci`, `_unicode_520_ci`,
  `_vietnamese_ci` and the language ones, `_swedish_ci`, `_german2_ci`, ...): `uca_weight` of the text
  without its trailing spaces;
- `_general_ci` (and utf8mb3's `_general_mysql500_ci`, `_tolower_ci`): `general_weight`, one letter for one
  ('ß' = 's'), PAD SPACE.

Approximations: a language's tailoring is not applied (Swedish sorts 'ä' as 'a', not after 'z'; Spanish
'ñ' as 'n'; German phone book 'ä' as 'a', not 'ae'); the UCA's order of punctuation and symbols among
themselves and against letters may differ (`uca_weight`); UCA 4.0.0 and 5.2.0 compare as 9.0.0 does;
utf8mb4_general_ci weighs characters beyond the Basic Multilingual Plane by their code point, not all
alike; `_tolower_ci` ignores accents.

The sandbox's child process imports this module (through `functions`): it imports little.
"""

from __future__ import annotations

import functools
import sqlite3
import unicodedata
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "MYSQL_CHARSETS",
    "UTF8MB3_COLLATION",
    "UTF8MB4_COLLATION",
    "canonical_collation",
    "collation_charset",
    "general_weight",
    "install_collations",
    "uca_weight",
]

# MySQL 8.0's character sets (SHOW CHARACTER SET), and `utf8`, utf8mb3's other name.
MYSQL_CHARSETS = tuple(
    """armscii8 ascii big5 binary cp1250 cp1251 cp1256 cp1257 cp850 cp852 cp866 cp932 dec8 eucjpms euckr
    gb18030 gb2312 gbk geostd8 greek hebrew hp8 keybcs2 koi8r koi8u latin1 latin2 latin5 latin7 macce macroman
    sjis swe7 tis620 ucs2 ujis utf16 utf16le utf32 utf8mb3 utf8mb4 utf8""".split()  # noqa: SIM905
)
_UNICODE_CHARSETS = ("utf8mb4", "utf8mb3", "utf8")

# MySQL 8.0's default collation of each character set: a text column of a copy whose dump names no
# collation compares under its character set's (`mysql_dump`).
UTF8MB4_COLLATION = "utf8mb4_0900_ai_ci"
UTF8MB3_COLLATION = "utf8mb3_general_ci"

# --- What each kind of collation compares ----------------------------------------------------------------

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


@functools.lru_cache(maxsize=16_384)
def _accent_weight(text: str) -> tuple[str, str]:
    """utf8mb4_0900_as_ci: the letters first (as ai_ci), then the accents, which tell apart what the
    letters alone do not ('e' < 'é' < 'f')."""
    accented = unicodedata.normalize("NFKD", text.casefold().translate(_UCA_LETTERS))
    return (uca_weight(text), accented)


@functools.lru_cache(maxsize=16_384)
def _case_weight(text: str) -> tuple[str, str, tuple[tuple[str, bool], ...]]:
    """utf8mb4_0900_as_cs: letters, then accents, then case, lower case first ('a' < 'A' < 'b'); what
    differs in nothing else ('ß' and 'ss') differs last."""
    letters, accents = _accent_weight(text)
    decomposed = unicodedata.normalize("NFD", text)
    cases = tuple((char.lower() if len(char.lower()) == 1 else char, char.isupper()) for char in decomposed)
    return (letters, accents, cases)


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


def _padded_uca_weight(text: str) -> str:
    return uca_weight(text.rstrip(" "))


def _padded_code_points(text: str) -> str:
    return text.rstrip(" ")


def _code_points(text: str) -> str:
    return text


_Weight = TypeVar("_Weight", str, tuple[str, str], tuple[str, str, tuple[tuple[str, bool], ...]])


def _comparison(weight: Callable[[str], _Weight]) -> Callable[[str, str], int]:
    def compare(left: str, right: str) -> int:
        if left == right:  # the common case of a join or a GROUP BY, without working out weights
            return 0
        first, second = weight(left), weight(right)
        return (first > second) - (first < second)

    return compare


# --- MySQL 8.0's collations of utf8mb4 and utf8mb3 -------------------------------------------------------

_UCA_AI_CI = _comparison(uca_weight)
_UCA_AS_CI = _comparison(_accent_weight)
_UCA_AS_CS = _comparison(_case_weight)
_NO_PAD_BIN = _comparison(_code_points)
_PAD_BIN = _comparison(_padded_code_points)
_OLD_UCA_CI = _comparison(_padded_uca_weight)
_GENERAL_CI = _comparison(general_weight)

# The languages of the UCA 9.0.0 collations (utf8mb4_xx_0900_ai_ci and utf8mb4_xx_0900_as_cs) and of the
# older UCA ones (xx_ci, for utf8mb4 and utf8mb3).
_UCA_900_LANGUAGES = [
    "bg",
    "bs",
    "cs",
    "da",
    "de_pb",
    "eo",
    "es",
    "es_trad",
    "et",
    "gl",
    "hr",
    "hu",
    "is",
    "la",
    "lt",
    "lv",
    "mn_cyrl",
    "nb",
    "nn",
    "pl",
    "ro",
    "ru",
    "sk",
    "sl",
    "sr_latn",
    "sv",
    "tr",
    "vi",
]
_OLD_UCA_LANGUAGES = [
    "croatian",
    "czech",
    "danish",
    "esperanto",
    "estonian",
    "german2",
    "hungarian",
    "icelandic",
    "latvian",
    "lithuanian",
    "persian",
    "polish",
    "roman",
    "romanian",
    "sinhala",
    "slovak",
    "slovenian",
    "spanish",
    "spanish2",
    "swedish",
    "turkish",
    "unicode",
    "unicode_520",
    "vietnamese",
]


def _catalogue() -> dict[str, Callable[[str, str], int]]:
    """Each collation's name -> its comparison: SHOW COLLATION of MySQL 8.0 for utf8mb4 and utf8mb3."""
    utf8mb4 = {
        "0900_ai_ci": _UCA_AI_CI,
        "0900_as_ci": _UCA_AS_CI,
        "0900_as_cs": _UCA_AS_CS,
        "0900_bin": _NO_PAD_BIN,
        "ja_0900_as_cs": _UCA_AS_CS,
        "ja_0900_as_cs_ks": _UCA_AS_CS,
        "zh_0900_as_cs": _UCA_AS_CS,
        **{f"{language}_0900_ai_ci": _UCA_AI_CI for language in _UCA_900_LANGUAGES},
        **{f"{language}_0900_as_cs": _UCA_AS_CS for language in _UCA_900_LANGUAGES},
    }
    common = {
        "bin": _PAD_BIN,
        "general_ci": _GENERAL_CI,
        **{f"{language}_ci": _OLD_UCA_CI for language in _OLD_UCA_LANGUAGES},
    }
    utf8mb3 = {"general_mysql500_ci": _GENERAL_CI, "tolower_ci": _GENERAL_CI}
    return {
        **{f"utf8mb4_{suffix}": compare for suffix, compare in {**utf8mb4, **common}.items()},
        **{f"utf8mb3_{suffix}": compare for suffix, compare in {**common, **utf8mb3}.items()},
    }


_COLLATIONS = _catalogue()


def canonical_collation(name: str) -> str | None:
    """The name under which MySQL 8.0 knows a utf8mb4 or utf8mb3 collation (`utf8_bin` is `utf8mb3_bin`),
    in lower case; None when it is none of them."""
    lowered = name.lower()
    if lowered.startswith("utf8_"):
        lowered = "utf8mb3_" + lowered.removeprefix("utf8_")
    return lowered if lowered in _COLLATIONS else None


def collation_charset(name: str) -> str | None:
    """The character set a collation of MySQL 8.0 belongs to: "utf8mb4" or "utf8mb3" for the names
    `canonical_collation` knows, the prefix of any other character set's ('latin1_swedish_ci' is latin1's,
    whether or not latin1 has that one), "binary" for `binary`; None for a name of no character set."""
    known = canonical_collation(name)
    if known is not None:
        return known.partition("_")[0]
    lowered = name.lower()
    charset = lowered if lowered == "binary" else lowered.partition("_")[0]
    return charset if charset in MYSQL_CHARSETS and charset not in _UNICODE_CHARSETS else None


def install_collations(conn: sqlite3.Connection) -> None:
    """Register every collation above under its MySQL name (a copy cannot be read without them)."""
    for name, compare in _COLLATIONS.items():
        conn.create_collation(name, compare)
