"""How deeply a query nests and how costly it is to translate, from its text alone, before sqlglot sees it.

sqlglot's parser recurses once per level of nesting: a few hundred levels exhaust Python's stack, and a
few thousand can crash the interpreter (its compiled build, sqlglotc, has no recursion check of its own).
Its work on nested function calls can also multiply at each level (it reads `DATE(...)` twice, once as a
type, and writes some arguments several times, such as LOCATE's position): twenty nested `YEAR(` took
seconds. `check_shape` refuses both, in time linear in the text, with `QueryTooComplex`: a resource limit
of the participant's own query, decided by its text alone.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from evaluation.scoring.statements import TranspileError, code_spans

# Brackets, CASE ... END and prefix operators (NOT, unary minus, ...) open at once. Far deeper than any
# question needs (the Termite gold nests 4), far from where sqlglot runs out of Python stack.
MAX_NESTING = 100
# Each character counts 4 ** (the function calls around it): sqlglot's work on nested calls can double or
# triple at each level. The Termite gold counts at most 1,310; a flat query of the largest size an upload
# allows (20,000 characters) 20,000; seven calls deep, four characters are too many. At this bound the
# costliest queries found take about half a second to translate.
MAX_TRANSLATION_COST = 50_000
_COST_PER_CALL = 4
# Words that may stand before a bracket without calling a function.
_NOT_CALLS = frozenset(
    """ALL AND ANY AS BETWEEN BY CASE DISTINCT DIV ELSE ESCAPE EXCEPT EXISTS FROM GROUP HAVING IN INTERSECT
    INTO IS JOIN LATERAL LIKE LIMIT MOD NOT OFFSET ON OR ORDER OVER PARTITION RECURSIVE REGEXP RLIKE SELECT
    SOME TABLE THEN UNION USING VALUE VALUES WHEN WHERE WINDOW WITH XOR""".split()  # noqa: SIM905
)
_PREFIX_OPERATORS = frozenset(("-", "+", "~", "!", "NOT", "BINARY"))
# The tokens that shape the nesting: brackets, CASE ... END and prefix operators.
_STRUCTURE = re.compile(r"[()!~+-]|\b(?:CASE|END|NOT|BINARY)\b", re.IGNORECASE)


class QueryTooComplex(TranspileError):
    """The query nests too deeply, or would cost too much to translate: a resource limit, not a syntax
    error."""


class Shape(NamedTuple):
    depth: int  # the most brackets, CASEs and prefix operators open at once
    calls: int  # the most function calls open at once
    cost: int  # the sum, over characters, of 4 ** (function calls around the character)


class _Open(NamedTuple):
    levels: int  # this bracket or CASE, and the prefix operators right before it
    call: bool
    case: bool


def check_shape(text: str, *, source: str, translating: bool) -> None:
    """Raise QueryTooComplex when one statement's text nests deeper than MAX_NESTING or, if it is to be
    translated, would cost more than MAX_TRANSLATION_COST."""
    if _within_limits_by_counts(text, translating=translating):
        return
    shape = query_shape(text, source=source)
    if shape.depth > MAX_NESTING:
        raise QueryTooComplex(
            f"the query nests deeper than {MAX_NESTING} levels (brackets, CASE and operators such as NOT)"
        )
    if translating and shape.cost > MAX_TRANSLATION_COST:
        raise QueryTooComplex(
            f"the query nests function calls {shape.calls} deep around too much SQL: translating it could "
            "multiply the work at each level"
        )


def query_shape(text: str, *, source: str) -> Shape:
    """How deeply one statement nests (brackets in strings and comments do not count), in time linear in
    its length. The scan stops early, with a depth over MAX_NESTING, once it is too deep."""
    opened: list[_Open] = []
    brackets = depth = deepest = calls = most_calls = cost = counted = 0
    run = 0  # prefix operators in a row, the last one ending at `run_end`
    run_end = -1
    for start_of_code, end_of_code in code_spans(text, source=source):
        for token in _STRUCTURE.finditer(text, start_of_code, end_of_code):
            symbol = token.group().upper()
            start = token.start()
            # Prefix operators apply to what follows them with only blanks between.
            applied = run if start == run_end or text[run_end:start].isspace() else 0
            if symbol in _PREFIX_OPERATORS:
                run = applied + 1
                run_end = token.end()
                deepest = max(deepest, depth + run)
                continue
            run = 0
            if symbol in ("(", "CASE"):
                name = _name_before(text, start, start_of_code) if symbol == "(" else ""
                call = bool(name) and name not in _NOT_CALLS
                if call:
                    cost += (token.end() - counted) * _COST_PER_CALL ** min(calls, 16)
                    counted = token.end()
                    calls += 1
                    most_calls = max(most_calls, calls)
                opened.append(_Open(1 + applied, call, symbol == "CASE"))
                brackets += symbol == "("
                depth += 1 + applied
                deepest = max(deepest, depth)
                if deepest > MAX_NESTING:
                    return Shape(deepest, most_calls, cost)
            elif symbol == "END" and opened and opened[-1].case:
                depth -= opened.pop().levels
            elif symbol == ")" and brackets:
                # A bracket closes the CASEs left open inside it; an extra one closes nothing.
                cost += (start - counted) * _COST_PER_CALL ** min(calls, 16)
                counted = start
                while True:
                    entry = opened.pop()
                    depth -= entry.levels
                    calls -= entry.call
                    if not entry.case:
                        brackets -= 1
                        break
    cost += (len(text) - counted) * _COST_PER_CALL ** min(calls, 16)
    return Shape(deepest, most_calls, cost)


def _name_before(text: str, end: int, start: int) -> str:
    """The name, in upper case, right before position `end` (blanks between), not looking before `start`;
    "" if there is none."""
    stop = end
    while stop > start and text[stop - 1].isspace():
        stop -= 1
    first = stop
    while first > start and (text[first - 1].isalnum() or text[first - 1] in "_$"):
        first -= 1
    return text[first:stop].upper() if first < stop and not text[first].isdigit() else ""


def _within_limits_by_counts(text: str, *, translating: bool) -> bool:
    """True when counting characters shows that `query_shape` would find the text within the limits: each
    level it counts opens at one of these tokens, and no character is inside more calls than there are
    brackets. Most queries pass here, at a fraction of the scan's cost (the Termite gold: 193 of 202)."""
    brackets = text.count("(")
    if translating and len(text) * _COST_PER_CALL ** min(brackets, 16) > MAX_TRANSLATION_COST:
        return False
    upper = text.upper()
    openers = brackets + sum(text.count(symbol) for symbol in "-+~!")
    openers += sum(upper.count(word) for word in ("CASE", "NOT", "BINARY"))
    return openers <= MAX_NESTING
