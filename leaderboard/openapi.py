"""The machine-readable description of the JSON API (OpenAPI 3.1), served at /api/v1/openapi.json."""

from __future__ import annotations

import inspect
import types
from collections.abc import Mapping
from typing import (
    Annotated,
    Any,
    Literal,
    NotRequired,
    Required,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from evaluation.models import Erratum
from evaluation.scoring.scores_json import Schema, VisibleScoresJSON
from evaluation.scoring.vocabulary import DIALECTS, STATIC_OUTCOMES
from leaderboard.errata_json import ErratumJSON
from leaderboard.exports import LeaderboardJSON, LeaderboardRowJSON
from leaderboard.feedback import ComparisonJSON, PortalRunJSON, ScoreHistoryJSON
from leaderboard.model_card import (
    PUBLIC_REQUIRED,
    RUN_SAYS,
    Approach,
    InstructionLanguage,
    Sampling,
    SchemaFormat,
    Weights,
)
from leaderboard.models import ProtocolRun, Submission
from leaderboard.protocols import catalogue
from leaderboard.protocols.catalogue import DEFAULT_PROTOCOL

_JSON_TYPES = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def json_schema(annotation: Any, *, refs: Mapping[type, str] | None = None) -> dict[str, Any]:
    """The JSON Schema of a type, for the types the JSON objects here are annotated with: a TypedDict (its
    keys required but those marked NotRequired; its docstring, if any, the description), str, int, float,
    bool, None, X | Y, list[X], dict[str, X] (an object with any keys), dict[Literal[...], X] (an object
    with these keys), a Literal of strings, and Annotated[X, Schema(...)], whose keywords are added. A
    TypedDict named in `refs` is referred to as that component instead of written out."""
    refs = refs or {}
    origin, args = get_origin(annotation), get_args(annotation)
    if origin in (NotRequired, Required):  # whether a key is required is the TypedDict's to say
        return json_schema(args[0], refs=refs)
    if origin is Annotated:
        schema = json_schema(args[0], refs=refs)
        for metadata in args[1:]:
            if isinstance(metadata, Schema):
                schema.update(metadata.keywords)
        return schema
    if is_typeddict(annotation):
        if annotation in refs:
            return {"$ref": f"#/components/schemas/{refs[annotation]}"}
        hints = get_type_hints(annotation, include_extras=True)
        schema = {"type": "object"}
        if annotation.__doc__:
            schema["description"] = " ".join(inspect.cleandoc(annotation.__doc__).split())
        schema["required"] = [key for key, hint in hints.items() if _required(annotation, key, hint)]
        schema["properties"] = {key: json_schema(hint, refs=refs) for key, hint in hints.items()}
        return schema
    if origin in (Union, types.UnionType):
        return _union([json_schema(arg, refs=refs) for arg in args])
    if origin is Literal and all(isinstance(arg, str) for arg in args):
        return {"type": "string", "enum": list(args)}
    if origin is list:
        return {"type": "array", "items": json_schema(args[0], refs=refs)}
    if origin is dict:
        key, value = args
        if get_origin(key) is Literal:
            return {
                "type": "object",
                "properties": {name: json_schema(value, refs=refs) for name in get_args(key)},
            }
        return {"type": "object", "additionalProperties": json_schema(value, refs=refs)}
    if annotation in _JSON_TYPES:
        return {"type": _JSON_TYPES[annotation]}
    raise TypeError(f"no JSON Schema for {annotation!r}")


def _required(typed_dict: Any, key: str, hint: Any) -> bool:
    """Whether `key` of `typed_dict` is required. Its marker first: under `from __future__ import
    annotations` Python 3.11 cannot see NotRequired and Required in `__required_keys__`, which then only
    says whether the TypedDict is total; the hints, resolved, still carry the markers."""
    marker = get_origin(hint)
    if marker in (NotRequired, Required):
        return marker is Required
    return key in typed_dict.__required_keys__


def _union(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    """`X | None` as X with "null" added to its type where X has one type and no enum; anyOf otherwise."""
    null = {"type": "null"}
    others = [schema for schema in schemas if schema != null]
    if (
        len(others) == 1
        and len(schemas) == 2
        and isinstance(others[0].get("type"), str)
        and "enum" not in others[0]
    ):
        return {**others[0], "type": [others[0]["type"], "null"]}
    return {"anyOf": schemas}


# The model card's fields as the upload takes them (leaderboard/model_card.py says what each means).
_MODEL_CARD: dict[str, dict[str, Any]] = {
    "model_name": {"type": "string", "maxLength": 120},
    "description": {"type": "string"},
    "model_size": {
        "type": "string",
        "description": 'e.g. "7B"; "unknown" for a closed model whose size is not published',
    },
    "weights": {
        "type": "string",
        "enum": Weights.values,
        "description": '"unknown" (not said) is accepted on a private submission only',
    },
    "approach": {"type": "string", "enum": Approach.values},
    "training_cutoff": {
        "type": "string",
        "description": "The model's training-data cutoff: YYYY-MM-DD (YYYY-MM means the month's last day),"
        ' or "unknown"',
    },
    "shots": {
        "type": "integer",
        "minimum": 0,
        "maximum": 1000,
        "description": "Examples in the prompt: 0 for zero-shot",
    },
    "schema_format": {
        "type": "string",
        "enum": SchemaFormat.values,
        "description": "How the prompt gave the schema: MySQL DDL, SQLite DDL, Spider's tables.json, the full"
        " dump with its data, or another form",
    },
    "instruction_language": {
        "type": "string",
        "enum": InstructionLanguage.values,
        "description": "The language of the prompt's instructions",
    },
    "sampling": {
        "type": "string",
        "enum": Sampling.values,
        "description": "How the output was decoded: greedy, sampling with top-p, beam search, or otherwise",
    },
    "temperature": {
        "type": "number",
        "minimum": 0,
        "maximum": 10,
        "description": "May be left out when sampling is greedy or beam",
    },
    "decoding_note": {
        "type": "string",
        "maxLength": 200,
        "description": "Free text, e.g. top-p 0.95, beam width 4, self-consistency over 5 samples",
    },
    "run_date": {"type": "string", "format": "date", "description": "When the predictions were generated"},
    "dialect": {"type": "string", "enum": list(DIALECTS)},
    "paper_url": {"type": "string", "format": "uri"},
    "code_url": {"type": "string", "format": "uri"},
    "model_url": {"type": "string", "format": "uri"},
    "spider_dev_ea": {"type": "number", "minimum": 0, "maximum": 100},
}


def _or_null(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema`, or null: what a card says when a field was left empty."""
    schema = dict(schema)
    schema["type"] = [schema["type"], "null"]
    if "enum" in schema:
        schema["enum"] = [*schema["enum"], None]
    return schema


_ERROR = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string"},
                "message": {"type": "string"},
                "details": {"type": "array", "items": {"type": "string"}},
            },
        }
    },
}
_SCORES = json_schema(VisibleScoresJSON)
_CHECK = {
    "type": "object",
    "description": "What a static check of the owner's query found; never what running it did.",
    "properties": {
        "question_id": {"type": "string"},
        "check": {"type": "string", "enum": ["submitted", *STATIC_OUTCOMES]},
        "message": {"type": ["string", "null"]},
    },
}
_SUBMISSION = {
    "type": "object",
    "required": ["id", "status", "model_name", "receipt", "error", "scores"],
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": Submission.Status.values},
        "model_name": {"type": "string"},
        "team": {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["name", "slug"],
                    "properties": {"name": {"type": "string"}, "slug": {"type": "string"}},
                },
            ],
            "description": "The team it was made on behalf of; null for none.",
        },
        "public": {"type": "boolean"},
        "model_card": {
            "type": "object",
            "description": "The model card as uploaded; null where a field was left empty.",
            "properties": {
                name: _or_null(schema) if name != "model_name" else schema
                for name, schema in _MODEL_CARD.items()
            },
        },
        "receipt": {"type": ["object", "null"]},
        "error": {"type": ["string", "null"]},
        "scores": {"oneOf": [{"type": "null"}, _SCORES]},
        "score_history": {
            "type": "array",
            "items": json_schema(ScoreHistoryJSON),
            "description": "Every scoring, oldest first; the latest is `scores`.",
        },
        "carried_from": {
            "type": ["integer", "null"],
            "description": "The submission this one was carried over from, on the version this one derives from.",
        },
        "breakdowns_hidden": {"type": ["string", "null"], "description": "Why the breakdowns are null."},
        "portal_run": {
            "oneOf": [{"type": "null"}, json_schema(PortalRunJSON)],
            "description": "How the portal made it by running a protocol; null for an upload",
        },
        "checks": {"type": "array", "items": _CHECK, "description": "The owner's only, once scored."},
        "status_url": {"type": "string", "format": "uri"},
        "results_url": {"type": "string", "format": "uri"},
    },
}
_INTEGER_OR_NULL = {"type": ["integer", "null"]}
_RUN = {
    "type": "object",
    "description": "A protocol run, as its owner and staff see it: never its API key nor its transcript's content.",
    "required": ["id", "status", "protocol", "progress", "submission_id"],
    "properties": {
        "id": {"type": "integer"},
        "status": {"type": "string", "enum": ProtocolRun.Status.values},
        "message": {"type": ["string", "null"], "description": "Why it stopped, or why it was not submitted"},
        "version": {"type": "string"},
        "protocol": {"type": "string", "enum": list(catalogue.protocols())},
        "model": {"type": "string"},
        "endpoint_host": {"type": "string"},
        "decoding": {
            "type": "object",
            "properties": {
                "temperature": {"type": "number"},
                "top_p": {"type": ["number", "null"]},
                "max_tokens": _INTEGER_OR_NULL,
                "seed": _INTEGER_OR_NULL,
            },
        },
        "budget": {
            "type": "object",
            "properties": {
                "max_requests": {"type": "integer"},
                "max_total_tokens": _INTEGER_OR_NULL,
                "max_seconds": {"type": "integer"},
            },
        },
        "concurrency": {"type": "integer"},
        "progress": {
            "type": "object",
            "description": "Steps are each database's first turn and each question",
            "properties": {
                name: {"type": "number" if name == "seconds" else "integer"}
                for name in (
                    "steps_done",
                    "steps_total",
                    "percent",
                    "requests",
                    "errors",
                    "tokens",
                    "seconds",
                )
            },
        },
        "has_key": {"type": "boolean"},
        "created_at": {"type": "string", "format": "date-time"},
        "started_at": {"type": ["string", "null"], "format": "date-time"},
        "finished_at": {"type": ["string", "null"], "format": "date-time"},
        "submission_id": {
            "type": ["integer", "null"],
            "description": "The submission it became, once submitted",
        },
        "transcript_sha256": {"type": ["string", "null"]},
        "status_url": {"type": "string", "format": "uri"},
        "transcript_url": {
            "type": "string",
            "format": "uri",
            "description": "The transcript as canonical JSONL, on the site (a logged-in session, owner or staff)",
        },
    },
}
_RUN_REQUEST = {
    "type": "object",
    "required": ["endpoint_url", "model", "model_name"],
    "properties": {
        "endpoint_url": {
            "type": "string",
            "format": "uri",
            "description": "An OpenAI-compatible /v1/chat/completions",
        },
        "api_key": {"type": "string", "description": "Sent as Bearer; stored encrypted, never shown again"},
        "delete_key_when_done": {"type": "boolean", "default": True},
        "model": {"type": "string", "description": "The model name the endpoint expects"},
        "protocol": {"type": "string", "enum": list(catalogue.protocols()), "default": DEFAULT_PROTOCOL},
        "version": {"type": "string", "description": "A published version's label; default: the latest"},
        "temperature": {"type": "number", "minimum": 0, "maximum": 2, "default": 1.0},
        "top_p": {"type": "number", "minimum": 0, "maximum": 1},
        "max_tokens": {"type": "integer", "minimum": 1},
        "seed": {"type": "integer"},
        "max_requests": {
            "type": "integer",
            "minimum": 1,
            "description": "Budget (TERMITE_PROTOCOL_MAX_REQUESTS at most)",
        },
        "max_total_tokens": {"type": "integer", "minimum": 1},
        "max_seconds": {
            "type": "integer",
            "minimum": 1,
            "description": "Budget (TERMITE_PROTOCOL_MAX_SECONDS at most)",
        },
        "concurrency": {
            "type": "integer",
            "minimum": 1,
            "description": "TERMITE_PROTOCOL_MAX_CONCURRENCY at most",
        },
        "team": {"type": "string", "description": "One of your teams, by slug"},
        "public": {"type": "boolean"},
        **{name: schema for name, schema in _MODEL_CARD.items() if name not in RUN_SAYS},
    },
}
_RUN_ID = [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}]
_COMPARISON = json_schema(ComparisonJSON)
_ERRATUM = json_schema(ErratumJSON)
_LEADERBOARD_ROW = json_schema(LeaderboardRowJSON)
_LEADERBOARD = json_schema(LeaderboardJSON, refs={LeaderboardRowJSON: "LeaderboardRow"})


# Why an account may not upload, report or run yet (termite_site.decorators.api_confirmed_email_required).
_UNCONFIRMED = (
    "The account signed up and has not confirmed its e-mail address yet (`email_unconfirmed`; the link is in"
    " the mail sent at sign-up, and the profile page sends a new one)"
)


def _errors(*codes: int, described: Mapping[int, str] | None = None) -> dict[str, Any]:
    """The error responses `codes`, each with its usual description unless `described` gives another."""
    usual = {
        400: "The request or the predictions file is invalid; `details` lists every problem with its field or line",
        401: "No token, or an unknown or revoked token",
        403: "The benchmark version takes no submissions",
        404: "Not found: no such submission visible to you, or no such published version",
        413: "The upload or the request is too large",
        429: "Quota or rate limit exceeded",
    }
    descriptions = {**usual, **(described or {})}
    return {
        str(code): {
            "description": descriptions[code],
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code in codes
    }


def _json(schema: dict[str, Any], description: str) -> dict[str, Any]:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def openapi_document(*, server_url: str) -> dict[str, Any]:
    bearer: list[dict[str, list[str]]] = [{"token": []}]
    return {
        "openapi": "3.1.0",
        "info": {"title": "Termite Portal API", "version": "1.0.0"},
        "servers": [{"url": server_url}],
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": _ERROR,
                "Submission": _SUBMISSION,
                "Erratum": _ERRATUM,
                "Scores": _SCORES,
                "Leaderboard": _LEADERBOARD,
                "LeaderboardRow": _LEADERBOARD_ROW,
                "Comparison": _COMPARISON,
                "Run": _RUN,
            },
        },
        "paths": {
            "/api/v1/leaderboard": {
                "get": {
                    "summary": "The public ranking of a published benchmark version; no token needed",
                    "description": (
                        "Rows in ranking order: EA, then EA-strict, then the earlier submission; baselines"
                        " sit below every row with at least their EA. Accuracies are fractions in [0, 1]."
                    ),
                    "security": [],
                    "parameters": [
                        {
                            "name": "version",
                            "in": "query",
                            "required": False,
                            "schema": {"type": "string"},
                            "description": "A published version's label; default: the latest published",
                        }
                    ],
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/Leaderboard"}, "The ranking"),
                        **_errors(400, 404),
                    },
                }
            },
            "/api/v1/compare": {
                "get": {
                    "summary": "Whether two submissions' EA differ significantly: a paired test",
                    "description": (
                        "McNemar's exact test and a paired bootstrap 95% interval of EA(A) - EA(B), over"
                        " the questions scored for both, as on the compare page. Both must be scored on"
                        " the same version and public (staff may compare any two). Without a token, public"
                        " submissions only. Only counts are returned, never which questions differ."
                    ),
                    "security": [{}, *bearer],
                    "parameters": [
                        {
                            "name": name,
                            "in": "query",
                            "required": True,
                            "schema": {"type": "integer", "minimum": 1},
                            "description": f"Submission {name.upper()}'s id",
                        }
                        for name in ("a", "b")
                    ],
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/Comparison"}, "The paired test"),
                        **_errors(
                            400,
                            401,
                            403,
                            404,
                            422,
                            described={
                                400: "A missing or malformed id (`invalid`), or two submissions scored on"
                                " different benchmark versions (`different_versions`)",
                                403: "Not both public (`not_public`): the paired test of private submissions"
                                " is not shown, to their owners either",
                                404: "Not found: either submission is not scored, or not visible to you",
                                422: "Scores stored without a verdict per question (`not_computable`):"
                                " rescoring them makes the test possible",
                            },
                        ),
                    },
                }
            },
            "/api/v1/submissions": {
                "get": {
                    "summary": "Your own submissions",
                    "security": bearer,
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "submissions": {
                                        "type": "array",
                                        "items": {"$ref": "#/components/schemas/Submission"},
                                    }
                                },
                            },
                            "Your submissions, newest first",
                        ),
                        **_errors(401),
                    },
                },
                "post": {
                    "summary": "Upload predictions with a model card",
                    "security": bearer,
                    "requestBody": {
                        "required": True,
                        "content": {
                            "multipart/form-data": {
                                "schema": {
                                    "type": "object",
                                    "required": ["predictions", "model_name"],
                                    "description": (
                                        "A public submission must give the whole model card: "
                                        + ", ".join(PUBLIC_REQUIRED)
                                        + "; weights open or closed, and the temperature unless sampling"
                                        " is greedy or beam. Each one missing is named in the error's"
                                        " `details`."
                                        " A private submission needs the model name only."
                                    ),
                                    "properties": {
                                        "predictions": {"type": "string", "format": "binary"},
                                        "version": {
                                            "type": "string",
                                            "description": "Default: the latest published",
                                        },
                                        "public": {"type": "boolean"},
                                        "team": {
                                            "type": "string",
                                            "description": "The slug of one of your teams, to submit on its"
                                            " behalf (it counts towards the team's quota too); default: none",
                                        },
                                        **_MODEL_CARD,
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "201": _json(
                            {"$ref": "#/components/schemas/Submission"}, "Accepted and queued for scoring"
                        ),
                        **_errors(
                            400,
                            401,
                            403,
                            413,
                            429,
                            described={
                                403: "The benchmark version takes no submissions (`version_closed`). "
                                + _UNCONFIRMED
                                + ". You left the team meanwhile (`not_a_member`)"
                            },
                        ),
                    },
                },
            },
            "/api/v1/errata": {
                "get": {
                    "summary": "Your own reports that a question is wrong, with staff's answers",
                    "security": bearer,
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "errata": {
                                        "type": "array",
                                        "items": {"$ref": "#/components/schemas/Erratum"},
                                    }
                                },
                            },
                            "Your reports, newest first",
                        ),
                        **_errors(401),
                    },
                },
                "post": {
                    "summary": "Report that a question is wrong",
                    "description": (
                        "Staff read the report; only you and they see its description. At most"
                        " TERMITE_ERRATA_LIMIT_PER_DAY reports a day (20 by default)."
                    ),
                    "security": bearer,
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["question_id", "description"],
                                    "properties": {
                                        "question_id": {"type": "string", "maxLength": 80},
                                        "description": {
                                            "type": "string",
                                            "maxLength": Erratum.MAX_DESCRIPTION_CHARS,
                                            "description": "What you believe is wrong, in words",
                                        },
                                        "version": {
                                            "type": "string",
                                            "description": "A published version's label; default: the latest published",
                                        },
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "201": _json({"$ref": "#/components/schemas/Erratum"}, "Filed"),
                        **_errors(400, 401, 403, 413, 429, described={403: _UNCONFIRMED}),
                    },
                },
            },
            "/api/v1/runs": {
                "get": {
                    "summary": "Your protocol runs, newest first",
                    "security": bearer,
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {
                                    "runs": {"type": "array", "items": {"$ref": "#/components/schemas/Run"}}
                                },
                            },
                            "Your runs",
                        ),
                        **_errors(401),
                    },
                },
                "post": {
                    "summary": "Start a protocol run: the portal asks your endpoint every question, then submits",
                    "description": (
                        "The run goes on the protocol queue; follow it at its status_url. When every question is"
                        " answered it becomes a submission, marked as run by the portal, through the same checks"
                        " and quotas as an upload. A public run needs the model card's size, weights and"
                        " training-data cutoff; the run itself says how it prompted and decoded."
                    ),
                    "security": bearer,
                    "requestBody": {
                        "required": True,
                        "content": {"application/json": {"schema": _RUN_REQUEST}},
                    },
                    "responses": {
                        "201": _json({"$ref": "#/components/schemas/Run"}, "Started"),
                        **_errors(
                            400,
                            401,
                            403,
                            413,
                            429,
                            described={
                                403: "The benchmark version takes no submissions (`version_closed`). "
                                + _UNCONFIRMED
                            },
                        ),
                    },
                },
            },
            "/api/v1/runs/{id}": {
                "get": {
                    "summary": "One run's progress: status, steps, requests, errors, tokens, seconds",
                    "security": bearer,
                    "parameters": _RUN_ID,
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/Run"}, "The run"),
                        **_errors(401, 404),
                    },
                },
                "delete": {
                    "summary": "Delete the run, its key and its transcript (cancelled first if it is going)",
                    "security": bearer,
                    "parameters": _RUN_ID,
                    "responses": {
                        "200": _json(
                            {
                                "type": "object",
                                "properties": {"id": {"type": "integer"}, "deleted": {"type": "boolean"}},
                            },
                            "Deleted",
                        ),
                        **_errors(401, 404),
                    },
                },
            },
            "/api/v1/runs/{id}/cancel": {
                "post": {
                    "summary": "Cancel a queued or running run; what was answered stays",
                    "security": bearer,
                    "parameters": _RUN_ID,
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/Run"}, "Cancelled"),
                        **_errors(401, 404, 409, described={409: "The run has already ended"}),
                    },
                },
            },
            "/api/v1/runs/{id}/submit": {
                "post": {
                    "summary": "Submit what an ended run answered (a run stopped by its budget, cancelled, or refused by a quota)",
                    "security": bearer,
                    "parameters": _RUN_ID,
                    "responses": {
                        "201": _json({"$ref": "#/components/schemas/Run"}, "Submitted: see submission_id"),
                        **_errors(
                            401,
                            403,
                            404,
                            409,
                            described={
                                403: _UNCONFIRMED,
                                409: "Not submitted: the message says why (a quota, no SQL, already submitted)",
                            },
                        ),
                    },
                },
            },
            "/api/v1/submissions/{id}": {
                "get": {
                    "summary": "One submission: status, receipt and, once scored, the scores",
                    "security": bearer,
                    "parameters": [
                        {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}
                    ],
                    "responses": {
                        "200": _json({"$ref": "#/components/schemas/Submission"}, "The submission"),
                        **_errors(401, 404),
                    },
                }
            },
        },
    }
