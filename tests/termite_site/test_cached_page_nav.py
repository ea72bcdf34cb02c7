"""A visitor's nav on a cached page: rendered once per visitor, language and address, with a fresh CSRF
token each time (termite_site/cached_page.py, `visitor_nav`)."""

from __future__ import annotations

import re

import pytest
from django.middleware.csrf import _unmask_cipher_token
from django.test import RequestFactory
from django.utils import translation

from termite_site.cached_page import visitor_nav

TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')


@pytest.fixture
def request_of(rf: RequestFactory):
    def make(user, path="/leaderboard/"):
        request = rf.get(path)
        request.user = user
        request.session = {}
        return request

    return make


def test_each_request_gets_a_fresh_token_of_the_same_secret_in_the_nav_rendered_once(
    request_of, owner, django_assert_num_queries
):
    request = request_of(owner)
    first = visitor_nav(request)
    with django_assert_num_queries(0):
        second = visitor_nav(request)
    tokens = [TOKEN.search(nav)[1] for nav in (first, second)]
    assert tokens[0] != tokens[1]  # masked anew, as {% csrf_token %} does
    assert _unmask_cipher_token(tokens[0]) == _unmask_cipher_token(tokens[1])
    assert TOKEN.sub("", first) == TOKEN.sub("", second) and owner.username in first


def test_a_nav_is_never_anothers_whatever_changed(request_of, owner, other_user, staff):
    navs = {user.username: visitor_nav(request_of(user)) for user in (owner, other_user, staff)}
    assert owner.username in navs[owner.username] and other_user.username not in navs[owner.username]
    assert "/staff/" in navs[staff.username] and "/staff/" not in navs[owner.username]
    owner.username = "rinominato"
    assert "rinominato" in visitor_nav(request_of(owner))
    with translation.override("it"):
        assert "Esci" in visitor_nav(request_of(owner))
    assert "?page=2" in visitor_nav(request_of(owner, "/leaderboard/?page=2"))
