"""The OpenAPI document is generated from the routes and from the TypedDicts the answers are annotated
with (the scores, a leaderboard row, ...): it describes every route of the API, and what the API returns
matches what it says."""

from __future__ import annotations

import math
import re
from datetime import date
from typing import Annotated, Literal, NotRequired

import pytest
from django.urls import URLPattern, get_resolver, reverse
from ninja.openapi.schema import REF_TEMPLATE
from ninja.schema import NinjaGenerateJsonSchema
from pydantic import TypeAdapter
from typing_extensions import TypedDict

from evaluation.scoring.scores_json import Schema, ScoresJSON, VisibleScoresJSON
from leaderboard.api_common import named_as_contracts
from leaderboard.citation import CitationJSON
from leaderboard.exports import LeaderboardJSON, LeaderboardRowJSON
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create
from tests.factories import baseline_make
from tests.leaderboard.scored import scored_fields


def json_schema(contract) -> dict:
    """The component the document gives a contract: its JSON Schema as the API generates it, the contracts
    it holds referred to as their components."""
    schema = TypeAdapter(contract).json_schema(
        ref_template=REF_TEMPLATE, schema_generator=NinjaGenerateJsonSchema, mode="serialization"
    )
    schema.pop("$defs", None)
    return named_as_contracts(schema)


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def is_json_type(instance, json_type: str) -> bool:
    if json_type in ("integer", "number"):
        kinds = int if json_type == "integer" else int | float
        return isinstance(instance, kinds) and not isinstance(instance, bool)
    return isinstance(instance, _TYPES[json_type])


def violations(instance, schema: dict | bool, document: dict, where: str = "$") -> list[str]:
    """Where `instance` breaks `schema`: the keywords the document uses, checked as JSON Schema does."""
    if schema is True:  # anything (the values of a dict[str, Any])
        return []
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
        names = schema.get("propertyNames", {}).get("enum")
        problems += [f"{where}: key {key!r} not in {names}" for key in instance if names and key not in names]
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


def nullable(schema: dict) -> list[str]:
    """The JSON types a property of the document takes, null among them where it may be null."""
    return [branch.get("type", "$ref") for branch in schema.get("anyOf", [schema])]


def test_the_document_describes_every_route_of_the_api(document):
    """Each route of /api/v1/, with each method it takes: the pages that describe the API aside."""
    (api,) = [route for route in get_resolver().url_patterns if str(route.pattern) == "api/v1/"]
    described = {
        path: {method.upper() for method in operations} for path, operations in document["paths"].items()
    }
    routed = {}
    for route in api.url_patterns:
        assert isinstance(route, URLPattern)
        if route.name in ("openapi", "docs", "index", "api-root"):
            continue
        path = "/api/v1/" + re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(route.pattern))
        allowed = route.callback(_request_of("OPTIONS"))["Allow"]
        routed[path] = {method.strip() for method in allowed.split(",")}
    assert routed == described
    assert {"/api/v1/versions", "/api/v1/versions/{label}/questions", "/api/v1/runs/{id}/submit"} <= set(
        routed
    )


def _request_of(method: str):
    from django.test import RequestFactory

    return RequestFactory().generic(method, "/")


def test_the_document_describes_the_scores_and_rows_as_typed(document):
    assert component(document, "VisibleScores") == json_schema(VisibleScoresJSON)
    assert component(document, "LeaderboardRow") == json_schema(LeaderboardRowJSON)
    assert set(component(document, "LeaderboardRow")["properties"]) == set(LeaderboardRowJSON.__annotations__)
    leaderboard = component(document, "Leaderboard")
    assert set(leaderboard["properties"]) == set(LeaderboardJSON.__annotations__)
    assert leaderboard["properties"]["rows"]["items"] == {"$ref": "#/components/schemas/LeaderboardRow"}
    assert set(component(document, "Citation")["properties"]) == set(CitationJSON.__annotations__)


def test_the_breakdowns_of_the_scores_may_be_null_and_list_every_outcome(document):
    properties = component(document, "VisibleScores")["properties"]
    for breakdown in ("per_database", "per_hardness", "outcomes"):
        assert nullable(properties[breakdown]) == ["object", "null"]
    assert properties["outcomes"]["anyOf"][0]["propertyNames"]["enum"] == [
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
    check = component(document, "Check")["properties"]["check"]
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
    assert nullable(row["ts_ea"]) == ["number", "null"] and nullable(row["ts_ea_ci95"]) == ["array", "null"]


@pytest.mark.django_db
def test_the_leaderboard_the_api_returns_matches_its_schema(client, document, make_submission, demo_version):
    make_submission(model_name="Alfa", **scored_fields(20, strict=19, ts=17))
    make_submission(model_name="Beta", **scored_fields(12))  # no TS-EA: scored before it existed
    baseline_make(version=demo_version, model_name="Dall'articolo", per_database={"biblioteca": 0.5})
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
    assert set(answer["scores"]) == set(component(document, "VisibleScores")["properties"])
    assert (answer["citation"] is None) is not public
    if public:
        assert set(answer["citation"]) == set(component(document, "Citation")["properties"])
    assert violations(answer, component(document, "Submission"), document) == []


@pytest.mark.django_db
def test_the_scores_the_scorer_writes_match_the_full_type(client, make_submission, gold):
    submission = make_submission(predictions=gold, dialect="mysql")
    submission_score(submission_id=submission.pk)
    submission.refresh_from_db()
    schema = json_schema(ScoresJSON)  # its parts are the document's components, as the scores' parts
    document = client.get(reverse("api:openapi")).json()
    assert violations(submission.scores, schema, document) == []
    assert violations({**submission.scores, "per_database": None}, schema, document) != []


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


def test_a_contract_is_described_with_its_docstring_and_the_schema_keywords_of_its_annotations():
    schema = json_schema(_Example)
    assert schema["description"] == "An example,\non two lines."
    assert schema["required"] == ["name", "size", "share", "tags", "counts", "by_name", "kind"]
    properties = schema["properties"]
    assert nullable(properties["size"]) == ["integer", "null"]
    assert properties["size"]["description"] == "null when unknown"
    assert properties["share"]["anyOf"][0] == {"type": "number", "minimum": 0}
    assert properties["counts"]["propertyNames"] == {"enum": ["a", "b"]}
    assert properties["kind"]["enum"] == ["x", "y"]


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
    overall, group = component(document, "Overall"), component(document, "Accuracy")
    assert {"ts_ea", "ts_ea_ci95", "ts_questions"} <= set(overall["properties"]) - set(overall["required"])
    assert "ts_ea" in set(group["properties"]) - set(group["required"])
    older = {"ea": 0.5, "ea_strict": 0.5, "ea_ci95": [0.3, 0.7], "n": 4, "excluded": 0}
    assert violations(older, overall, document) == []
    assert violations({"ea": 0.5, "ea_strict": 0.5, "n": 4}, group, document) == []


def test_a_row_says_whether_when_and_how_it_was_verified(document):
    row = component(document, "LeaderboardRow")["properties"]
    assert row["verified"]["type"] == "boolean"
    assert nullable(row["verified_at"]) == ["string", "null"] and row["verified_at"]["format"] == "date"
    assert nullable(row["verified_note"]) == ["string", "null"]
    assert "verified_by" not in row
