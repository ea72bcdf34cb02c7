"""The machine-readable description of the JSON API (OpenAPI 3.1), served at /api/v1/openapi.json."""

from __future__ import annotations

from evaluation.scoring.vocabulary import DIALECTS, OUTCOMES, STATIC_OUTCOMES
from leaderboard.model_card import Approach, Weights

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
_ACCURACY = {
    "type": "object",
    "properties": {"ea": {"type": "number"}, "ea_strict": {"type": "number"}, "n": {"type": "integer"}},
}
_SCORES = {
    "type": "object",
    "properties": {
        "version": {"type": "string"},
        "scorer_version": {"type": "string"},
        "overall": {
            "type": "object",
            "properties": {
                "ea": {"type": "number", "minimum": 0, "maximum": 1},
                "ea_strict": {"type": "number", "minimum": 0, "maximum": 1},
                "ea_ci95": {"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2},
                "n": {"type": "integer"},
                "excluded": {"type": "integer"},
            },
        },
        "per_database": {"type": ["object", "null"], "additionalProperties": _ACCURACY},
        "per_hardness": {"type": ["object", "null"], "additionalProperties": _ACCURACY},
        "outcomes": {
            "type": ["object", "null"],
            "properties": {name: {"type": "integer"} for name in OUTCOMES},
        },
    },
    "description": "The breakdowns are null on a private submission (see `breakdowns_hidden`).",
}
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
        "status": {"type": "string", "enum": ["queued", "running", "scored", "failed"]},
        "model_name": {"type": "string"},
        "public": {"type": "boolean"},
        "receipt": {"type": ["object", "null"]},
        "error": {"type": ["string", "null"]},
        "scores": {"oneOf": [{"type": "null"}, _SCORES]},
        "breakdowns_hidden": {"type": ["string", "null"], "description": "Why the breakdowns are null."},
        "checks": {"type": "array", "items": _CHECK, "description": "The owner's only, once scored."},
        "status_url": {"type": "string", "format": "uri"},
        "results_url": {"type": "string", "format": "uri"},
    },
}
_FRACTION = {"type": ["number", "null"], "minimum": 0, "maximum": 1}
_LEADERBOARD_ROW = {
    "type": "object",
    "description": "A public scored submission, or a baseline reported in a paper and not scored here.",
    "required": [
        "rank",
        "submission_id",
        "model_name",
        "team",
        "date",
        "ea",
        "ea_strict",
        "ea_ci95",
        "per_database",
        "per_hardness",
        "spider_ea",
        "baseline",
    ],
    "properties": {
        "rank": {
            "type": ["integer", "null"],
            "description": "Shared by rows whose EA lies within each other's 95% CI (1, 1, 3); null for baselines",
        },
        "submission_id": {"type": ["integer", "null"], "description": "null for baselines"},
        "model_name": {"type": "string"},
        "team": {"type": "string"},
        "date": {"type": "string", "format": "date", "description": "Submitted, or published for a baseline"},
        "ea": {"type": "number", "minimum": 0, "maximum": 1},
        "ea_strict": _FRACTION,
        "ea_ci95": {
            "type": ["array", "null"],
            "items": {"type": "number"},
            "minItems": 2,
            "maxItems": 2,
            "description": "95% bootstrap interval of EA; null for baselines",
        },
        "per_database": {
            "type": "object",
            "additionalProperties": _FRACTION,
            "description": "EA per database slug; null where nothing was scored",
        },
        "per_hardness": {"type": "object", "additionalProperties": _FRACTION},
        "spider_ea": {**_FRACTION, "description": "Self-reported Spider dev EA, as a fraction"},
        "spider_gap": {"type": ["number", "null"], "description": "spider_ea minus ea"},
        "model_size": {"type": "string"},
        "weights": {"type": "string", "enum": Weights.values},
        "approach": {"type": "string", "enum": Approach.values},
        "baseline": {"type": "boolean"},
        "source": {"type": "string", "description": "A baseline's citation; empty for submissions"},
    },
}
_LEADERBOARD = {
    "type": "object",
    "required": ["version", "rows"],
    "properties": {
        "version": {"type": "string"},
        "databases": {"type": "array", "items": {"type": "string"}},
        "hardness_levels": {"type": "array", "items": {"type": "string"}},
        "rows": {"type": "array", "items": {"$ref": "#/components/schemas/LeaderboardRow"}},
    },
}


def _errors(*codes: int) -> dict:
    return {
        str(code): {
            "description": description,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
        for code, description in {
            400: "The request or the predictions file is invalid; `details` lists every problem with its line",
            401: "No token, or an unknown or revoked token",
            403: "The benchmark version takes no submissions",
            404: "Not found: no such submission visible to you, or no such published version",
            413: "The upload is too large",
            429: "Quota or rate limit exceeded",
        }.items()
        if code in codes
    }


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def openapi_document(*, server_url: str) -> dict:
    bearer = [{"token": []}]
    return {
        "openapi": "3.1.0",
        "info": {"title": "Termite Portal API", "version": "1.0.0"},
        "servers": [{"url": server_url}],
        "components": {
            "securitySchemes": {"token": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": _ERROR,
                "Submission": _SUBMISSION,
                "Scores": _SCORES,
                "Leaderboard": _LEADERBOARD,
                "LeaderboardRow": _LEADERBOARD_ROW,
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
                                    "properties": {
                                        "predictions": {"type": "string", "format": "binary"},
                                        "model_name": {"type": "string"},
                                        "version": {
                                            "type": "string",
                                            "description": "Default: the latest published",
                                        },
                                        "public": {"type": "boolean"},
                                        "team": {"type": "string"},
                                        "description": {"type": "string"},
                                        "model_size": {"type": "string"},
                                        "weights": {"type": "string", "enum": Weights.values},
                                        "approach": {"type": "string", "enum": Approach.values},
                                        "dialect": {"type": "string", "enum": list(DIALECTS)},
                                        "paper_url": {"type": "string", "format": "uri"},
                                        "code_url": {"type": "string", "format": "uri"},
                                        "spider_dev_ea": {"type": "number", "minimum": 0, "maximum": 100},
                                    },
                                }
                            }
                        },
                    },
                    "responses": {
                        "201": _json(
                            {"$ref": "#/components/schemas/Submission"}, "Accepted and queued for scoring"
                        ),
                        **_errors(400, 401, 403, 413, 429),
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
