"""How an uploaded text file splits into lines: at "\n" (and "\r\n") only. Plain Python, no Django.

Not `str.splitlines()`: it also ends a line at U+2028, U+2029, U+0085, form feed, vertical tab and
\x1c-\x1e, which may stand inside a query and (the first three) raw inside a JSON string. A split there
shifts every later line of a predict.txt onto the wrong question, and cuts a JSON line in two.
"""

from __future__ import annotations


def split_lines(text: str) -> list[str]:
    """The lines of `text`, numbered as editors number them; a trailing "\r" (Windows) is dropped."""
    return [line.removesuffix("\r") for line in text.split("\n")]
