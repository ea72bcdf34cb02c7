"""The SQL of a model's answer, by one documented rule. Plain Python, no Django.

`extract_sql(answer)`:

1. Reasoning is dropped: `<think>…</think>` (also `<thinking>`, `<reasoning>`), and everything before a
   closing `</think>` whose opening tag the server cut off.
2. Where to look, in this order, the first that holds a query winning:
   a. the fenced code blocks (``` or ~~~) tagged as SQL (`sql`, `mysql`, `sqlite`, `mariadb`, …), in order;
   b. the other fenced blocks (untagged or any other tag), in order;
   c. inline code (`` `SELECT …` ``) that begins with a query;
   d. the whole answer.
   A fence left open runs to the end of the answer; a closing fence may end the last line of the code.
3. The query begins at the first `SELECT` or `WITH … AS (` that begins a statement: at the start of a line
   (after a label such as `SQL:` or a list marker) in any case, or anywhere else written in capitals (a
   `SELECT` then with a `FROM` on its line), so that prose mentioning a select is not taken for a query. Whatever comes before, a label included, is
   dropped. No such keyword: no query, and the answer's SQL is "".
4. The query ends at the first of:
   - a line of prose after its first line: one holding three words in a row, outside strings and comments,
     that are not SQL keywords (`In questa query…`); a Markdown list item or bold text; one that begins
     with a word that is not an SQL keyword and is a label (`Spiegazione:`) or follows a blank line;
   - the semicolon that ends its first statement (not one inside a string, a quoted name or a comment,
     as `evaluation.scoring.statements` reads MySQL).
5. Blanks, comments and the semicolon at its ends are dropped; what is inside is kept as written.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from evaluation.scoring.statements import SQLGLOT_DIALECTS, split_statements

SQL_TAGS = frozenset(
    {"sql", "mysql", "mariadb", "sqlite", "sqlite3", "postgresql", "postgres", "pgsql", "plsql", "tsql"}
)

# Words that belong to SQL, as MySQL's tokenizer knows them ("GROUP BY" gives GROUP and BY).
_KEYWORDS = frozenset(
    word
    for phrase in SQLGLOT_DIALECTS["mysql"].tokenizer_class.KEYWORDS
    for word in phrase.split()
    if word.isalpha()
)
_THINKING = re.compile(r"<(think|thinking|reasoning)>.*?(?:</\1>|\Z)", re.IGNORECASE | re.DOTALL)
_UNOPENED_THINKING = re.compile(r"\A.*?</(?:think|thinking|reasoning)>", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"(?P<fence>`{3,}|~{3,})[ \t]*(?P<tag>[\w+#.-]*)")
_INLINE_CODE = re.compile(r"(?<!`)`(?!`)([^`\n]+)`(?!`)")
# A query's first keyword: where a line begins (after a label or a list marker), in any case; elsewhere
# in capitals only, and a SELECT then with a FROM on its line ("uso una SELECT annidata" is prose). A
# WITH begins a query only when a common table expression follows.
_LINE_START = r"(?:^|(?<=\n))[ \t]*(?:(?:[-*+>]|\d+[.)])[ \t]+)?(?:[^\W\d_][\w ]{0,20}:[ \t]*)?"
_WITH = r"WITH\s+(?:RECURSIVE\s+)?[`\"\w]+\s*(?:\([^()]*\)\s*)?AS\s*\("
_QUERY_START = re.compile(
    rf"{_LINE_START}(?P<line>(?i:SELECT\b|{_WITH}))"
    rf"|(?<![\w`'\"])(?P<capitals>SELECT\b|{_WITH})"
)
_FROM = re.compile(r"\bFROM\b")
_STRING = re.compile(r"'(?:[^'\\\n]|\\.|'')*'|\"(?:[^\"\\\n]|\\.|\"\")*\"|`[^`\n]*`|--.*|#.*")
_WORD = re.compile(r"[^\W\d_]\w*")
_LABEL = re.compile(r"[ \t]*[^\W\d_][\w ]{0,30}:(?!:)")
_MARKDOWN = re.compile(r"[ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+[^\W\d_]|\*\*|__)")  # a list item, bold text
_PROSE_RUN = 3


@dataclass(frozen=True)
class _Block:
    tag: str
    code: str


def extract_sql(answer: str) -> str:
    """The SQL of a model's answer by the rule of the module docstring; "" if it holds no query."""
    answer = _UNOPENED_THINKING.sub("", _THINKING.sub("", answer))
    blocks = _fenced_blocks(answer)
    places = [block.code for block in blocks if block.tag in SQL_TAGS]
    places += [block.code for block in blocks if block.tag not in SQL_TAGS]
    places += [code for code in _INLINE_CODE.findall(answer) if _query_start(code) == 0]
    places.append(answer)
    for text in places:
        start = _query_start(text)
        if start is not None:
            return _first_statement(text[start:])
    return ""


def _fenced_blocks(text: str) -> list[_Block]:
    blocks = []
    position = 0
    while opening := _FENCE.search(text, position):
        fence, tag = opening.group("fence"), opening.group("tag")
        start = opening.end()
        if tag.upper() in ("SELECT", "WITH"):  # ```SELECT …```: no tag, the code begins at once
            tag, start = "", opening.start("tag")
        end = text.find(fence, start)
        end = len(text) if end < 0 else end
        blocks.append(_Block(tag.lower(), text[start:end]))
        position = end + len(fence)
    return blocks


def _query_start(text: str) -> int | None:
    """Where the first query of the text begins (the rule's step 3), or None.

    Each line's last FROM is found once, so that an answer of many SELECTs on one line costs linear time.
    """
    line_ends = [newline.start() for newline in re.finditer("\n", text)] + [len(text)]
    last_from: dict[int, int] = {}  # a line's number: where its last FROM begins, -1 if it has none
    for match in _QUERY_START.finditer(text):
        if match.group("line"):
            return match.start("line")
        start = match.start("capitals")
        if not match.group("capitals").startswith("SELECT"):
            return start  # a WITH followed by a common table expression
        line = bisect.bisect_left(line_ends, start)
        if line not in last_from:
            begin = line_ends[line - 1] + 1 if line else 0
            last_from[line] = max(
                (found.start() for found in _FROM.finditer(text, begin, line_ends[line])), default=-1
            )
        if last_from[line] > start:
            return start
    return None


def _first_statement(query: str) -> str:
    lines = query.splitlines(keepends=True)
    kept = lines[:1]
    after_blank = False
    for line in lines[1:]:
        if _is_prose(line, after_blank=after_blank):
            break
        kept.append(line)
        after_blank = not line.strip()
    statements = split_statements("".join(kept), source="mysql")
    return statements[0].text.strip() if statements else ""


def _is_prose(line: str, *, after_blank: bool) -> bool:
    """Whether a line cannot continue a query (the rule's step 4)."""
    if _MARKDOWN.match(line):
        return True
    code = _STRING.sub(" ' ", line)
    words = code.split()
    if not words:
        return False
    first = _WORD.fullmatch(words[0].rstrip(":,"))  # not `s.nome`, `(`, `'`, a number
    if first and first.group().upper() not in _KEYWORDS and (after_blank or _LABEL.match(line)):
        return True
    run = 0
    for word in words:
        plain = _WORD.fullmatch(word.rstrip(".,:;!?"))
        run = run + 1 if plain and plain.group().upper() not in _KEYWORDS and word[-1] not in ",;" else 0
        if run >= _PROSE_RUN:
            return True
    return False
