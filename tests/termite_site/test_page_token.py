"""The CSRF token of a cached page's nav (termite_site/page_token.py): Django's token, drawn at less cost,
and the visitor's cookie left as it came."""

from __future__ import annotations

import re

from django.conf import settings
from django.middleware.csrf import CSRF_ALLOWED_CHARS, _get_new_csrf_string, _unmask_cipher_token
from django.test import Client, RequestFactory
from django.urls import reverse

from termite_site.page_token import page_token
from tests.leaderboard.scored import scored_fields

PAGE = reverse("leaderboard:leaderboard")
TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


def request_with_secret(secret: str):
    request = RequestFactory().get(PAGE)
    request.META["CSRF_COOKIE"] = secret  # as CsrfViewMiddleware sets it from the request's cookie
    return request


def test_a_token_unmasks_to_the_visitors_secret_under_a_new_mask_each_time():
    secret = _get_new_csrf_string()
    request = request_with_secret(secret)
    tokens = {page_token(request) for _ in range(100)}
    assert len(tokens) == 100
    for token in tokens:
        assert len(token) == 64 and set(token) <= set(CSRF_ALLOWED_CHARS)
        assert _unmask_cipher_token(token) == secret


def test_each_character_of_the_mask_is_drawn_from_the_whole_alphabet():
    # A character missed at a place in 3,000 draws of a uniform mask: (61/62)**3000, about 1e-21.
    request = request_with_secret(_get_new_csrf_string())
    masks = [page_token(request)[:32] for _ in range(3000)]
    for place in range(32):
        assert {mask[place] for mask in masks} == set(CSRF_ALLOWED_CHARS), place


def test_a_request_without_a_secret_gets_a_new_one_as_django_gives_it():
    request = RequestFactory().get(PAGE)
    token = page_token(request)
    assert _unmask_cipher_token(token) == request.META["CSRF_COOKIE"]
    assert request.META["CSRF_COOKIE_NEEDS_UPDATE"] is True  # its cookie goes with the answer


def test_the_nav_of_a_cached_page_sets_the_cookie_once_and_its_token_passes_the_csrf_check(
    owner, make_submission
):
    make_submission(model_name="Prima", **scored_fields(12))
    visitor = Client(enforce_csrf_checks=True)
    visitor.force_login(owner)
    first = visitor.get(PAGE)
    assert settings.CSRF_COOKIE_NAME in first.cookies
    for _rendered_then_cached in range(2):
        again = visitor.get(PAGE)
        assert settings.CSRF_COOKIE_NAME not in again.cookies
    token = TOKEN.search(again.content.decode())[1]
    forged = token[:32] + token[32:][::-1]
    assert visitor.post(reverse("accounts:logout"), {"csrfmiddlewaretoken": forged}).status_code == 403
    signed_out = visitor.post(reverse("accounts:logout"), {"csrfmiddlewaretoken": token})
    assert signed_out.status_code == 302 and "_auth_user_id" not in visitor.session
