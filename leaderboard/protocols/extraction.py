"""The SQL of a model's answer (minimal version, replaced by the documented rule at merge).

The rule here: the first fenced code block if there is one (```sql ... ``` or ``` ... ```), else the whole
answer from its first SQL keyword; then its first statement, up to the first `;` outside quotes.
Plain Python, no Django.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"```[A-Za-z]*\s*\n?(.*?)```", re.DOTALL)
_START = re.compile(r"\b(SELECT|WITH)\b", re.IGNORECASE)


def extract_sql(answer: str) -> str:
    """The SQL of `answer` by the rule above; "" if there is none."""
    fenced = _FENCE.search(answer)
    text = fenced.group(1) if fenced else answer
    start = _START.search(text)
    if start is None:
        return ""
    return _first_statement(text[start.start() :]).strip()


def _first_statement(text: str) -> str:
    quote = ""
    for index, char in enumerate(text):
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif char == ";":
            return text[:index]
    # No `;`: the statement ends at the first blank line, where trailing prose begins.
    return text.split("\n\n", 1)[0]
