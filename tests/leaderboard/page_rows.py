"""The rows of the ranking page as its HTML shows them: the page is cached whole, so a test reads what was
sent, never the context of a render that a cached answer did not make. Names are read as a browser shows
them: the rows are escaped by Jinja2 ("&#39;"), the rest of the page by Django ("&#x27;")."""

from __future__ import annotations

import html
import re

_ROW = re.compile(
    r'<tr( hidden)?[^>]*>\s*<td class="num" data-sort="\d+">(?:<span class="rank-why"[^>]*>)?([^<]*)(?:</span>)?</td>\s*<td class="model"[^>]*>(?:<a [^>]*>|<span [^>]*>)([^<]*)<'
)


def row_names(response, *, shown_only: bool = True) -> list[str]:
    """The model names of the table's rows in the order sent; with `shown_only`, those not hidden."""
    return [
        html.unescape(name)
        for hidden, _rank, name in _ROW.findall(response.content.decode())
        if not (hidden and shown_only)
    ]


def row_ranks(response) -> dict[str, str]:
    """Each row's model name and its rank as shown ("—" for a baseline)."""
    return {html.unescape(name): rank for _hidden, rank, name in _ROW.findall(response.content.decode())}
