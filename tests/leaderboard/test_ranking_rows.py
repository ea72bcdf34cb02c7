"""The rows of the ranking as rendered once per change (Jinja2, escaping by hand: see the template): every
text a row can hold comes out escaped, in every branch of the row, and each row stays one <tr>."""

from __future__ import annotations

import dataclasses
import re
from datetime import UTC, date, datetime

import pytest
from django.utils import translation

from leaderboard import ranking_views
from leaderboard.ranking import Leaderboard, Row
from leaderboard.ranking_views import rows_html

MARKUP = "<i>\"x'&"
# Fields holding a code of the model card's vocabularies, shown by their labels: no free text.
CODES = ("weights", "approach", "sampling", "schema_format", "instruction_language")


def hostile(**fields) -> Row:
    """A row whose every text field holds MARKUP, besides `fields`."""
    texts = {
        field.name: f"{field.name}{MARKUP}"
        for field in dataclasses.fields(Row)
        if field.type in ("str", "str | None") and field.name not in CODES
    }
    values = {
        "submission_id": 7,
        "date": date(2026, 12, 1),
        "ea": 0.5,
        "ea_strict": 0.4,
        "ea_ci95": (0.4, 0.6),
        "per_database": {f"db{MARKUP}": 0.5},
        "per_hardness": {"easy": 0.5},
        "spider_ea": 0.7,
        "rank": 1,
        "training_cutoff": "2024-01-01",
        "shots": 3,
        "scorer_version": "0.1.0",
        "verified_at": datetime(2026, 12, 2, tzinfo=UTC),
        "ea_after_cutoff": 0.5,
        "questions_after_cutoff": 4,
    }
    return Row(**{**texts, **values, **fields})


@pytest.mark.parametrize("language", ["en", "it"])
def test_no_text_of_any_row_comes_out_unescaped(db, language):
    rows = [
        hostile(),
        hostile(submission_id=8, verified_at=None, rank=2, significantly_better=(7,)),
        hostile(submission_id=None, baseline=True, rank=None, source_url=f"https://example.org/{MARKUP}"),
        hostile(submission_id=None, baseline=True, rank=None, source_url=""),
    ]
    board = Leaderboard(version="v", databases=[f"db{MARKUP}"], rows=rows)
    with translation.override(language):
        rendered = rows_html(board)
    assert len(rendered) == len(rows)
    for html in rendered:
        assert html.startswith("<tr") and html.rstrip().endswith("</tr>") and html.count("<tr") == 1
        assert "<i>" not in html and "x'" not in html and '"x' not in html and '&"' not in html
        assert "&lt;i&gt;" in html  # the texts are there, escaped
    # Each branch that shows a text showed it: the portal run, the verification, the baseline's source.
    assert "portal_protocol&lt;i&gt;" in rendered[0] and "verified_note&lt;i&gt;" in rendered[0]
    assert "#7 model_name&lt;i&gt;" in rendered[1]  # the rank's explanation names the better row
    assert "source&lt;i&gt;" in rendered[2] and "note&lt;i&gt;" in rendered[3]


def test_a_model_name_holding_the_row_separator_stays_in_its_row(db):
    board = Leaderboard(version="v", databases=[], rows=[hostile(model_name="<!--row end-->"), hostile()])
    assert len(rows_html(board)) == 2


def test_a_row_rendered_before_is_reused_in_its_new_place_and_only_new_rows_are_rendered(db, monkeypatch):
    monkeypatch.setattr(ranking_views, "_ROWS_RENDERED", {})
    first, second, newcomer = hostile(submission_id=1), hostile(submission_id=2), hostile(submission_id=3)
    before = rows_html(Leaderboard(version="v", databases=[], rows=[first, second]))
    after = rows_html(Leaderboard(version="v", databases=[], rows=[newcomer, first, second]))
    assert len(ranking_views._ROWS_RENDERED) == 3  # the newcomer alone was rendered
    assert [re.search(r'data-sort="(\d+)"', html)[1] for html in after] == ["0", "1", "2"]
    assert after[1].replace('data-sort="1"', 'data-sort="0"', 1) == before[0]
    assert after[2].replace('data-sort="2"', 'data-sort="1"', 1) == before[1]
    with translation.override("it"):
        rows_html(Leaderboard(version="v", databases=[], rows=[first]))
    assert len(ranking_views._ROWS_RENDERED) == 4  # another language is another rendering


def test_a_row_is_rendered_again_when_anything_it_holds_changes_even_only_its_type(db, monkeypatch):
    monkeypatch.setattr(ranking_views, "_ROWS_RENDERED", {})
    row = hostile(per_database={"a": 1.0}, significantly_better=(8,))
    changes = [
        {"per_database": {"a": 0.5}},
        {"per_database": {"a": 1}},  # 1 and 1.0 are equal in Python, not on the page
        {"per_database": {"b": 1.0}},
        {"rank": 2},
        {"verified_note": "altro"},
        {"significantly_better": (9,)},
    ]
    for changed in (row, *(dataclasses.replace(row, **change) for change in changes)):
        rows_html(Leaderboard(version="v", databases=[], rows=[changed]))
    assert len(ranking_views._ROWS_RENDERED) == 1 + len(changes)
    rows_html(Leaderboard(version="v", databases=[], rows=[dataclasses.replace(row)]))  # an equal row
    assert len(ranking_views._ROWS_RENDERED) == 1 + len(changes)
