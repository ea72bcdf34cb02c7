"""The `scores` object, the JSON contract of a scored submission: what `ScoreReport.as_dict` writes,
`manage.py score --json` prints and `Submission.scores` stores, and what the pages, charts, ranking and
API read. Its keys are public (the API returns them): add, never rename.

Accuracies are fractions in [0, 1]. The API (leaderboard/api.py) declares its answers with these types,
and its OpenAPI document is generated from them. They are `typing_extensions` TypedDicts, as every JSON
contract here is: pydantic, which generates the document, reads `typing`'s only from Python 3.12 on.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, NotRequired

from typing_extensions import TypedDict

from evaluation.scoring.vocabulary import Outcome


class Schema:
    """`Annotated` metadata: JSON Schema keywords a type alone cannot say (bounds, a format, a description).

    Compared by identity, so hashable, as typing needs `Annotated` metadata to be inside a union. Pydantic
    adds the keywords to the type's JSON Schema through `__get_pydantic_json_schema__`, a method it looks
    for on any metadata: this library imports no pydantic. They describe; nothing validates by them.
    """

    def __init__(self, **keywords: Any) -> None:
        self.keywords = keywords

    def __get_pydantic_json_schema__(
        self, schema: Any, handler: Callable[[Any], dict[str, Any]]
    ) -> dict[str, Any]:
        return {**handler(schema), **self.keywords}

    def __repr__(self) -> str:
        return f"Schema(**{self.keywords!r})"


Fraction = Annotated[float, Schema(minimum=0, maximum=1)]


Interval = Annotated[list[float], Schema(minItems=2, maxItems=2)]


class AccuracyJSON(TypedDict):
    """EA, EA-strict and TS-EA of a group of questions (a database, a hardness level); 0.0 when `n` is 0.

    TS-EA (test-suite EA) is absent from scores made before scorer 1.3.0."""

    ea: Fraction
    ea_strict: Fraction
    ts_ea: NotRequired[Fraction]
    n: int


class OverallJSON(TypedDict):
    ea: Fraction
    ea_strict: Fraction
    ea_ci95: Interval
    ts_ea: NotRequired[Fraction]
    ts_ea_ci95: NotRequired[Interval]
    # How many of the n scored questions have neighbour databases: the others' TS-EA is their EA.
    ts_questions: NotRequired[int]
    n: int
    excluded: int


class ScoresHeadJSON(TypedDict):
    version: str
    scorer_version: str
    overall: OverallJSON


class ScoresJSON(ScoresHeadJSON):
    """The scores as the scorer writes them: every breakdown is there."""

    per_database: dict[str, AccuracyJSON]
    per_hardness: dict[str, AccuracyJSON]
    outcomes: dict[Outcome, int]


# What leaderboard/feedback.py shows a viewer; the API returns it. (The docstring is the API's description.)
class VisibleScoresJSON(ScoresHeadJSON):
    """The scores as the viewer may see them: the breakdowns are null where they may not be seen, as on a
    private submission (see `breakdowns_hidden`)."""

    per_database: dict[str, AccuracyJSON] | None
    per_hardness: dict[str, AccuracyJSON] | None
    outcomes: dict[Outcome, int] | None


class QuestionDetailJSON(TypedDict):
    """A practice version's question as scored (`score.QuestionDetail`): never made for a sealed version."""

    sql_run: Annotated[
        str | None, Schema(description="The prediction as it ran, in SQLite; null: nothing ran")
    ]
    columns: Annotated[list[str], Schema(description="The prediction's result's column names")]
    rows: Annotated[list[list[Any]], Schema(description="The first rows of the prediction's result")]
    row_count: Annotated[int | None, Schema(description="How many rows it returned; null: it did not run")]
    gold_rows: Annotated[list[list[Any]], Schema(description="The first rows of the gold's result")]
    gold_row_count: int
    difference: Annotated[
        str | None,
        Schema(
            enum=["columns", "row_count", "values", "order", "strict_only", None],
            description="Why the results differ; null when they do not, or when the prediction did not run",
        ),
    ]
