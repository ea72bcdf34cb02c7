"""HTTP contracts shared by the site's middleware and the JSON API."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from typing_extensions import TypedDict

# Room for the model card's fields beside the predictions file in one upload.
FORM_FIELDS_ALLOWANCE = 64 * 1024


class ErrorDetailJSON(TypedDict):
    code: str
    message: str
    details: list[str]


class ErrorJSON(TypedDict):
    """Every refusal of the API: a code to branch on, a sentence to show, and every problem found (a field
    or a line of the file, and what is wrong with it)."""

    error: ErrorDetailJSON


def api_error(status: int, code: str, message: str, details: list[str] | None = None) -> JsonResponse:
    """Every API error: `{"error": {"code": ..., "message": ..., "details": [...]}}` with the matching status."""
    body: ErrorJSON = {"error": {"code": code, "message": message, "details": details or []}}
    return JsonResponse(body, status=status)


def body_too_large(request: HttpRequest) -> bool:
    """Whether the request declares a body larger than any the site reads: one to refuse without reading it."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:  # Django reads no body then either
        declared = 0
    return declared > settings.TERMITE_MAX_UPLOAD_BYTES + FORM_FIELDS_ALLOWANCE
