"""What every endpoint of the JSON API shares, written once: the API (django-ninja) with its error shape,
its token, its rate limits and size cap, the request schemas it takes from the site's forms, and the pages
that describe it (the OpenAPI document, the docs to try, the index).

Every refusal is `{"error": {"code", "message", "details"}}` (`termite_site.http.ErrorJSON`) with its
status, whichever part refuses: a view raising `ApiError`, the token, a rate limit, the size cap, a wrong
method, a request of the wrong types.

Answers are declared with the JSON contracts' TypedDicts, from which the document is generated. A view
returns its answer as a JsonResponse, which ninja passes on as it is: the type checker holds each producer
to its contract, and no answer is validated again on its way out, so scores stored by an older scorer
reach their owner as they were stored.
"""

from __future__ import annotations

import html
import json
import re
import time
from collections.abc import Callable, Collection, Mapping
from datetime import date
from functools import cache, wraps
from typing import Annotated, Any, ClassVar, TypeVar, cast

from csp.constants import SELF
from csp.decorators import csp_update
from django import forms
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import render
from django.urls import URLPattern, URLResolver, reverse
from django.utils import translation
from ninja import NinjaAPI
from ninja.errors import Throttled, ValidationError
from ninja.openapi.docs import Swagger
from ninja.parser import Parser
from ninja.security.http import HttpAuthBase
from ninja.throttling import BaseThrottle
from ninja.types import DictStrAny
from pydantic import BaseModel, BeforeValidator, Field, create_model, model_validator
from pydantic.json_schema import SkipJsonSchema

from evaluation.models import BenchmarkVersion
from termite_site import ratelimit
from termite_site.accounts.models import User
from termite_site.accounts.services import api_token_authenticate
from termite_site.http import ErrorJSON, api_error, body_too_large


class ApiError(Exception):
    """A refusal, raised wherever an endpoint runs, and answered in the API's error shape."""

    def __init__(self, status: int, code: str, message: str, details: list[str] | None = None) -> None:
        super().__init__(status, code, message, details)


def invalid(message: str, form: forms.BaseForm) -> ApiError:
    """A form's refusal: every problem as "field: message", in the words of the site's own form."""
    return ApiError(
        400, "invalid", message, [f"{name}: {text}" for name, texts in form.errors.items() for text in texts]
    )


def published_version(label: str) -> BenchmarkVersion:
    """The version an upload or a run names by its label: refused unless it exists and is published."""
    version = BenchmarkVersion.objects.filter(label=label).first()
    if version is None:
        raise ApiError(400, "invalid", "Invalid request.", [f"version: no version {label!r}"])
    if not version.is_published:
        raise ApiError(403, "version_closed", f"{version} is not published; it takes no submissions.")
    return version


class BearerToken(HttpAuthBase):
    """`Authorization: Bearer <token>`; never the browser's session, so no CSRF token either.

    `confirmed_email`: the account must have confirmed its e-mail address (`User.must_confirm_email`), as
    the task's web pages require. `optional`: without the header, the anonymous visitor (never the
    session's user), who gets what anyone may see."""

    openapi_scheme = "bearer"

    def __init__(self, *, confirmed_email: bool = False, optional: bool = False) -> None:
        super().__init__()
        self.confirmed_email, self.optional = confirmed_email, optional

    def __call__(self, request: HttpRequest) -> User | AnonymousUser:
        if self.optional and "Authorization" not in request.headers:
            request.user = AnonymousUser()
            return request.user
        scheme, _, raw = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not raw.strip():
            raise ApiError(401, "unauthenticated", "Send an API token: Authorization: Bearer <token>.")
        user = api_token_authenticate(raw=raw.strip())
        if user is None:
            raise ApiError(401, "invalid_token", "The token is unknown or revoked.")
        request.user = user
        if self.confirmed_email and user.must_confirm_email:
            message = f"Confirm your e-mail address first: open the link we sent to {user.email}, or ask for"
            message += " a new one on your profile page. Until then this account gets no questions, errata"
            raise ApiError(403, "email_unconfirmed", message + " or protocol runs.")
        return user


TOKEN = BearerToken()
CONFIRMED = BearerToken(confirmed_email=True)
ANYONE = BearerToken(optional=True)


class RateLimit(BaseThrottle):
    """At most TERMITE_UPLOAD_RATE_LIMIT requests of a kind (`scope`) per account and window, counted where
    the site's forms count theirs (termite_site/ratelimit.py): the API and the web form share one budget."""

    def __init__(self, scope: str) -> None:
        self.scope = scope

    def allow_request(self, request: HttpRequest) -> bool:
        limit, window = settings.TERMITE_UPLOAD_RATE_LIMIT
        return not ratelimit.hit(self.scope, str(request.user.pk), limit=limit, window=window)

    def wait(self) -> float:
        """The seconds until the window ends: windows are fixed stretches of the clock."""
        window: int = settings.TERMITE_UPLOAD_RATE_LIMIT[1]
        return window - time.time() % window


class _JsonParser(Parser):
    """A body that is no JSON at all reaches its schema as null, which refuses it as any non-object."""

    def parse_body(self, request: HttpRequest) -> DictStrAny:
        try:
            parsed: DictStrAny = json.loads(request.body)
        except ValueError:  # UnicodeDecodeError is one
            return None  # type: ignore[return-value]  # ninja passes it on to the schema, which refuses it
        return parsed


def _blank_is_null(value: Any) -> Any:
    """An empty form field (`-F shots=`) says nothing, as on the web form."""
    return None if value == "" else value


class FormFields(BaseModel):
    """A request taken by one of the site's forms: see `from_form`."""

    required_by_form: ClassVar[tuple[str, ...]] = ()
    model_config = {
        "json_schema_extra": lambda schema, model: schema.update(required=list(model.required_by_form))
    }

    @model_validator(mode="before")
    @classmethod
    def _an_object(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"send a JSON object {{{', '.join(map(json.dumps, cls.required_by_form))}}}")
        return data

    def form_data(self) -> dict[str, Any]:
        """What was given, under the form's names: the data to bind the form to."""
        given = self.model_dump(exclude_none=True)
        return {_FORM_NAMES.get(name, name): value for name, value in given.items()}


_S = TypeVar("_S", bound=FormFields)

# Where the API names a form's field otherwise (and takes the form's name too).
_API_NAMES = {"is_public": "public"}
_FORM_NAMES = {api_name: name for name, api_name in _API_NAMES.items()}


def from_form(
    form: type[forms.Form | forms.ModelForm[Any]],
    *,
    defaults: Collection[str] = (),
    optional: Collection[str] = (),
    exclude: Collection[str] = (),
) -> Callable[[type[_S]], type[_S]]:
    """The request schema of the decorated class: the fields it declares, and those of `form` beside them
    (but files, and those in `exclude`), each typed as the form reads it, null or left out when not given.
    The form then checks what is required, choices and bounds, in the site's words; the schema shows them
    in the document. A field in `defaults` takes the form's initial value when left out, as the web form
    shows it; a field in `optional` is not required, as the form makes it when it is built."""

    def derive(declared: type[_S]) -> type[_S]:
        fields: dict[str, Any] = {}
        fields_taken = form.base_fields.items()
        taken = {n: f for n, f in fields_taken if n not in exclude and not isinstance(f, forms.FileField)}
        with translation.override("en"):
            for name, field in taken.items():
                api_name = _API_NAMES.get(name, name)
                if api_name in declared.model_fields:
                    continue
                kind, keywords = _json_type(field)
                typed: Any = Annotated[kind | None, BeforeValidator(_blank_is_null)]
                fields[api_name] = (
                    typed,
                    Field(
                        field.initial if name in defaults else None,
                        description=html.unescape(str(field.help_text or field.label)),
                        json_schema_extra=keywords,
                    ),
                )
                if api_name != name:  # taken under the form's name too (it wins), as it always was
                    fields[name] = (Annotated[typed, SkipJsonSchema()], None)  # type: ignore[type-arg]  # pydantic reads the bare marker
        derived = create_model(
            declared.__name__,
            __base__=declared,
            __doc__=declared.__doc__,
            __module__=declared.__module__,
            **fields,
        )
        required = (name for name, field in taken.items() if field.required and name not in optional)
        derived.required_by_form = tuple(_API_NAMES.get(name, name) for name in required)
        return derived

    return derive


def _json_type(field: forms.Field) -> tuple[type, dict[str, Any]]:
    """The type a form field reads, and the JSON Schema keywords that say its bounds and choices."""
    if isinstance(field, forms.BooleanField):
        return bool, {}
    if isinstance(field, forms.FloatField | forms.IntegerField):  # a FloatField is an IntegerField
        bounds = {"minimum": field.min_value, "maximum": field.max_value}
        kind: type = float if isinstance(field, forms.FloatField) else int
        return kind, {key: value for key, value in bounds.items() if value is not None}
    if isinstance(field, forms.DateField):
        return date, {}
    keywords: dict[str, Any] = {}
    if isinstance(field, forms.URLField):
        keywords["format"] = "uri"
    if isinstance(field, forms.ChoiceField) and not isinstance(field, forms.ModelChoiceField):
        choices = cast(list[tuple[Any, Any]], field.choices)  # normalised by Django, groups and all: a list
        keywords["enum"] = [*(value for value, _label in choices if value != ""), None]
    if isinstance(field, forms.CharField) and field.max_length:
        keywords["maxLength"] = field.max_length
    return str, keywords


def documented(
    summary: str, status: int, body: Any, refusals: Mapping[int, str], **extra: Any
) -> dict[str, Any]:
    """An operation's summary and answers, for its decorator: the answer it gives with its contract, and
    each refusal with what it means there; `extra`: more of the operation's OpenAPI object."""
    described = {code: {"description": text} for code, text in refusals.items()}
    return {
        "summary": summary,
        "response": {status: body} | dict.fromkeys(refusals, ErrorJSON),
        "openapi_extra": {"responses": described, **extra},
    }


# The usual meaning of each refusal; an endpoint says what it means there where it differs.
NO_TOKEN = {401: "No token, or an unknown or revoked token (`unauthenticated`, `invalid_token`)"}
INVALID = "The request is invalid (`invalid`): `details` lists every problem with its field"
LABEL = "A published version's label; default: the latest published"
TOO_LARGE = "The request is too large (`too_large`)"
RATE_LIMITED = "Too many requests of this kind this hour (`rate_limited`): Retry-After says when to try again"
UNCONFIRMED = (
    "The account signed up and has not confirmed its e-mail address yet (`email_unconfirmed`; the link is in"
    " the mail sent at sign-up, and the profile page sends a new one)"
)


api = NinjaAPI(
    title="Termite Portal API",
    version="1.0.0",
    description="Submissions, protocol runs, errata and the leaderboard of the Termite benchmark. Create a"
    " token on your profile page and send it as `Authorization: Bearer <token>` (the Authorize button).",
    urls_namespace="api",
    openapi_url=None,  # served below, under the site's names
    docs_url=None,
    parser=_JsonParser(),
)


@api.exception_handler(ApiError)
def _refused(request: HttpRequest, error: ApiError) -> HttpResponse:
    response = api_error(*error.args)
    if response.status_code == 401:
        response["WWW-Authenticate"] = 'Bearer realm="termite"'
    return response


@api.exception_handler(Http404)
def _missing(request: HttpRequest, error: Http404) -> HttpResponse:
    return api_error(404, "not_found", str(error))


@api.exception_handler(Throttled)
def _throttled(request: HttpRequest, error: Throttled) -> HttpResponse:
    minutes = -(-(error.wait or 0) // 60)
    return api_error(429, "rate_limited", f"Too many requests this hour. Try again in {minutes:.0f} minutes.")


@api.exception_handler(ValidationError)
def _malformed(request: HttpRequest, error: ValidationError) -> HttpResponse:
    return api_error(400, "invalid", "Invalid request.", [_problem(found) for found in error.errors])


# What a value of the wrong type must be, by the first word of pydantic's error type.
_MUST_BE = {
    "missing": "This field is required.",
    "string": "must be a string",
    "int": "must be a whole number",
    "float": "must be a number",
    "bool": "must be true or false",
    "date": "must be a date, YYYY-MM-DD",
}


def _problem(found: Mapping[str, Any]) -> str:
    source, *where = found["loc"]
    if source == "body":  # the parameter's name: the body is the schema itself
        where = where[1:]
    kind = found["type"]
    message = (
        found["ctx"]["error"] if kind == "value_error" else _MUST_BE.get(kind.split("_")[0], found["msg"])
    )
    return f"{'.'.join(map(str, where)) or 'body'}: {message}"


class _Docs(Swagger):
    """Swagger UI from this site's static files (ninja's, as an installed app), under the site's names."""

    def get_openapi_url(self, api: NinjaAPI, path_params: DictStrAny) -> str:
        return reverse("api:openapi")


api.docs = _Docs(settings={"validatorUrl": None})  # Swagger UI would ask a validator on the web otherwise


@cache  # it depends on the code alone, and takes a few tenths of a second to generate
def openapi_document() -> dict[str, Any]:
    """The OpenAPI document, generated from the routes and their contracts."""
    return named_as_contracts(api.get_openapi_schema())


def named_as_contracts(schema: Mapping[str, Any]) -> dict[str, Any]:
    """`schema` with each contract's component named as the contract, less the `JSON` its Python name ends
    with (`ErratumJSON`: `Erratum`)."""
    text = re.sub(r'("|#/components/schemas/)(\w+)JSON"', r'\1\2"', json.dumps(schema))
    return cast(dict[str, Any], json.loads(text))


@api.get("/openapi.json", url_name="openapi", include_in_schema=False)
def openapi(request: HttpRequest) -> HttpResponse:
    return JsonResponse(openapi_document())


# Swagger UI's stylesheet draws its icons as data: images; nothing else of the policy is relaxed.
@api.get("/docs", url_name="docs", include_in_schema=False)
@csp_update({"img-src": [SELF, "data:"]})
def docs(request: HttpRequest) -> HttpResponse:
    return api.docs.render_page(request, api)


@api.get("/", url_name="index", include_in_schema=False)
def index(request: HttpRequest) -> HttpResponse:
    """Every endpoint with what it does, and the way to the docs."""
    paths = openapi_document()["paths"]
    endpoints = [
        {"method": method.upper(), "path": path, "summary": operation["summary"]}
        for path, operations in paths.items()
        for method, operation in operations.items()
    ]
    return render(request, "leaderboard/api_index.html", {"endpoints": endpoints})


def urlpatterns() -> list[URLPattern | URLResolver]:
    """The API's routes, each behind what holds for every one: a body larger than any the API reads is
    refused unread, and a method the route does not take is refused in the API's shape."""
    patterns, _app, _namespace = api.urls
    return [
        URLPattern(route.pattern, _guarded(route.callback), route.default_args, route.name)
        for route in patterns
        if isinstance(route, URLPattern)
    ]


def _guarded(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if body_too_large(request):
            size = settings.TERMITE_MAX_UPLOAD_BYTES // 1024
            return api_error(413, "too_large", f"The request is larger than {size} KB.")
        response = view(request, *args, **kwargs)
        if isinstance(response, HttpResponseNotAllowed):
            allowed = sorted(method.strip() for method in response["Allow"].split(","))
            response = api_error(405, "method_not_allowed", f"Use {' or '.join(allowed)}.")
            response["Allow"] = ", ".join(allowed)
        return response

    return guarded
