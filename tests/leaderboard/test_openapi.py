"""The OpenAPI document derives its schemas of the scores and of a leaderboard row from the TypedDicts the
code is annotated with; what the API returns matches what the document says."""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Annotated, Literal, NotRequired, TypedDict

import pytest
from django.urls import reverse

from evaluation.scoring.scores_json import Schema, ScoresJSON, VisibleScoresJSON
from leaderboard.exports import LeaderboardJSON, LeaderboardRowJSON
from leaderboard.models import Baseline
from leaderboard.openapi import json_schema
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create
from tests.leaderboard.scored import scored_fields

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_json_type(instance, json_type: str) -> bool:
    if json_type in ("integer", "number"):
        kinds = int if json_type == "integer" else int | float
        return isinstance(instance, kinds) and not isinstance(instance, bool)
    return isinstance(instance, _TYPES[json_type])


def violations(instance, schema: dict, document: dict, where: str = "$") -> list[str]:
    """Where `instance` breaks `schema`: the keywords the document uses, checked as JSON Schema does."""
    if "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        return violations(instance, document["components"]["schemas"][name], document, where)
    for keyword, fits in (("anyOf", lambda n: n >= 1), ("oneOf", lambda n: n == 1)):
        if keyword in schema:
            passing = sum(not violations(instance, branch, document, where) for branch in schema[keyword])
            return [] if fits(passing) else [f"{where}: {passing} branches of {keyword} match"]
    types = schema.get("type")
    types = [types] if isinstance(types, str) else types
    if types is not None and not any(is_json_type(instance, t) for t in types):
        return [f"{where}: {type(instance).__name__} is not {types}"]
    problems = []
    if "enum" in schema and instance not in schema["enum"]:
        problems.append(f"{where}: {instance!r} not in {schema['enum']}")
    if isinstance(instance, int | float) and not isinstance(instance, bool):
        if "minimum" in schema and instance < schema["minimum"]:
            problems.append(f"{where}: {instance} < {schema['minimum']}")
        if "maximum" in schema and instance > schema["maximum"]:
            problems.append(f"{where}: {instance} > {schema['maximum']}")
    if isinstance(instance, str) and schema.get("format") == "date":
        date.fromisoformat(instance)
    if isinstance(instance, list):
        if not schema.get("minItems", 0) <= len(instance) <= schema.get("maxItems", math.inf):
            problems.append(f"{where}: {len(instance)} items")
        for index, item in enumerate(instance):
            problems += violations(item, schema.get("items", {}), document, f"{where}[{index}]")
    if isinstance(instance, dict):
        problems += [f"{where}: no {key!r}" for key in schema.get("required", []) if key not in instance]
        properties = schema.get("properties", {})
        for key, value in instance.items():
            if key in properties:
                problems += violations(value, properties[key], document, f"{where}.{key}")
            elif "additionalProperties" in schema:
                problems += violations(value, schema["additionalProperties"], document, f"{where}.{key}")
    return problems


@pytest.fixture
def document(client):
    return client.get(reverse("api:openapi")).json()


def component(document: dict, name: str) -> dict:
    return document["components"]["schemas"][name]


def test_the_document_describes_the_scores_and_rows_as_typed(document):
    assert component(document, "Scores") == json_schema(VisibleScoresJSON)
    assert component(document, "LeaderboardRow") == json_schema(LeaderboardRowJSON)
    assert set(component(document, "LeaderboardRow")["properties"]) == set(LeaderboardRowJSON.__annotations__)
    leaderboard = component(document, "Leaderboard")
    assert set(leaderboard["properties"]) == set(LeaderboardJSON.__annotations__)
    assert leaderboard["properties"]["rows"]["items"] == {"$ref": "#/components/schemas/LeaderboardRow"}


def test_the_breakdowns_of_the_scores_may_be_null_and_list_every_outcome(document):
    properties = component(document, "Scores")["properties"]
    for breakdown in ("per_database", "per_hardness", "outcomes"):
        assert properties[breakdown]["type"] == ["object", "null"]
    assert list(properties["outcomes"]["properties"]) == [
        "correct",
        "wrong_result",
        "reads_no_table",
        "syntax_error",
        "runtime_error",
        "timeout",
        "resource_limit",
        "not_submitted",
    ]


def test_a_check_the_owner_is_shown_may_say_that_their_query_reads_no_table(document):
    check = component(document, "Submission")["properties"]["checks"]["items"]["properties"]["check"]
    assert check["enum"] == [
        "submitted",
        "reads_no_table",
        "syntax_error",
        "runtime_error",
        "resource_limit",
        "not_submitted",
    ]


def test_ts_ea_of_a_row_is_a_fraction_or_null(document):
    row = component(document, "LeaderboardRow")["properties"]
    assert row["ts_ea"]["type"] == ["number", "null"] and row["ts_ea_ci95"]["type"] == ["array", "null"]


@pytest.mark.django_db
def test_the_leaderboard_the_api_returns_matches_its_schema(client, document, make_submission, demo_version):
    make_submission(model_name="Alfa", **scored_fields(20, strict=19, ts=17))
    make_submission(model_name="Beta", **scored_fields(12))  # no TS-EA: scored before it existed
    Baseline.objects.create(
        version=demo_version,
        model_name="Dall'articolo",
        per_database={"biblioteca": 0.5},
        source="Un articolo, 2024.",
        date=date(2024, 5, 1),
    )
    answer = client.get(reverse("api:leaderboard")).json()
    assert [row["baseline"] for row in answer["rows"]] == [False, False, True]
    assert violations(answer, component(document, "Leaderboard"), document) == []
    for row in answer["rows"]:
        assert set(row) == set(component(document, "LeaderboardRow")["properties"])


@pytest.mark.django_db
@pytest.mark.parametrize("public", [False, True])
def test_the_scores_the_api_returns_match_their_schema(
    client, document, owner, make_submission, gold, public
):
    submission = make_submission(predictions=dict(list(gold.items())[::2]), is_public=public, dialect="mysql")
    submission_score(submission_id=submission.pk)
    _token, raw = api_token_create(user=owner, name="t")
    url = reverse("api:submission_detail", args=[submission.pk])
    answer = client.get(url, HTTP_AUTHORIZATION=f"Bearer {raw}").json()
    assert (answer["scores"]["per_database"] is None) is not public
    assert set(answer["scores"]) == set(component(document, "Scores")["properties"])
    assert violations(answer, component(document, "Submission"), document) == []


@pytest.mark.django_db
def test_the_scores_the_scorer_writes_match_the_full_type(make_submission, gold):
    submission = make_submission(predictions=gold, dialect="mysql")
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    schema = json_schema(ScoresJSON)
    assert violations(submission.scores, schema, {}) == []
    assert violations({**submission.scores, "per_database": None}, schema, {}) != []


class _Example(TypedDict):
    """An example,
    on two lines."""

    name: str
    size: Annotated[int | None, Schema(description="null when unknown")]
    share: Annotated[float, Schema(minimum=0)] | None
    tags: list[str]
    counts: dict[Literal["a", "b"], int]
    by_name: dict[str, bool]
    kind: Literal["x", "y"]
    note: NotRequired[str]


def test_json_schema_maps_each_kind_of_annotation():
    assert json_schema(_Example) == {
        "type": "object",
        "description": "An example, on two lines.",
        "required": ["name", "size", "share", "tags", "counts", "by_name", "kind"],
        "properties": {
            "name": {"type": "string"},
            "size": {"type": ["integer", "null"], "description": "null when unknown"},
            "share": {"type": ["number", "null"], "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}},
            "counts": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
            "by_name": {"type": "object", "additionalProperties": {"type": "boolean"}},
            "kind": {"type": "string", "enum": ["x", "y"]},
            "note": {"type": "string"},  # described, not required
        },
    }
    assert json_schema(_Example | None) == {**json_schema(_Example), "type": ["object", "null"]}
    assert json_schema(_Example | int) == {"anyOf": [json_schema(_Example), {"type": "integer"}]}
    assert json_schema(list[_Example], refs={_Example: "Example"}) == {
        "type": "array",
        "items": {"$ref": "#/components/schemas/Example"},
    }
    assert json_schema(Literal["x"] | None) == {
        "anyOf": [{"type": "string", "enum": ["x"]}, {"type": "null"}]
    }
    with pytest.raises(TypeError, match="no JSON Schema"):
        json_schema(set[str])


def test_the_validator_of_these_tests_catches_what_it_should():
    schema = json_schema(_Example)
    good = {
        "name": "n",
        "size": None,
        "share": 0.5,
        "tags": [],
        "counts": {"a": 1},
        "by_name": {},
        "kind": "x",
    }
    assert violations(good, schema, {}) == []
    for bad in ({"size": "7"}, {"share": -1}, {"kind": "z"}, {"by_name": {"k": 1}}, {"tags": [1]}):
        assert violations({**good, **bad}, schema, {}), bad
    missing = dict(good)
    del missing["name"]
    assert re.search("no 'name'", violations(missing, schema, {})[0])
    assert violations({**good, "note": "n"}, schema, {}) == []


def test_keys_the_scores_may_lack_are_described_but_not_required(document):
    """Scores made before scorer 1.3.0 have no TS-EA; they match the description all the same."""
    scores = component(document, "Scores")["properties"]
    overall, group = scores["overall"], scores["per_database"]["additionalProperties"]
    assert {"ts_ea", "ts_ea_ci95", "ts_questions"} <= set(overall["properties"]) - set(overall["required"])
    assert "ts_ea" in set(group["properties"]) - set(group["required"])
    older = {"ea": 0.5, "ea_strict": 0.5, "ea_ci95": [0.3, 0.7], "n": 4, "excluded": 0}
    assert violations(older, overall, document) == []
    assert violations({"ea": 0.5, "ea_strict": 0.5, "n": 4}, group, document) == []


def test_a_row_says_whether_when_and_how_it_was_verified(document):
    row = component(document, "LeaderboardRow")["properties"]
    assert row["verified"]["type"] == "boolean"
    assert row["verified_at"]["type"] == ["string", "null"] and row["verified_at"]["format"] == "date"
    assert row["verified_note"]["type"] == ["string", "null"]
    assert "verified_by" not in row
