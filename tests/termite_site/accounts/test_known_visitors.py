"""A signed-in visitor a process resolved before is known from their session cookie, with neither their
session nor their user read, until anything of theirs changes (termite_site/accounts/known_visitors.py)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.core.cache import cache
from django.test import Client

from termite_site.accounts import stamps
from termite_site.accounts.services import account_disable
from termite_site.accounts.sessions import SessionStore

pytestmark = pytest.mark.django_db

PAGE = "/accounts/profile/"


@pytest.fixture
def session_reads():
    """How many times a session is read from the cache or the database."""
    with mock.patch.object(SessionStore, "load", autospec=True, side_effect=SessionStore.load) as load:
        yield load


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    assert client.get(PAGE).status_code == 200  # the process resolves them once
    return client


def test_a_known_visitor_is_signed_in_with_no_read_of_their_session_or_row(
    owner, session_reads, django_assert_num_queries
):
    client = signed_in(owner)
    session_reads.reset_mock()
    with django_assert_num_queries(0):
        assert client.get("/").context["user"] == owner
    assert session_reads.call_count == 0


def test_a_changed_session_is_read_again(owner, session_reads):
    client = signed_in(owner)
    session = client.session
    session["ultima_pagina"] = "/leaderboard/"
    session.save()
    session_reads.reset_mock()
    assert client.get("/").context["user"] == owner
    assert session_reads.call_count == 1


def test_a_change_of_the_user_is_seen_at_their_next_request(staff):
    client = signed_in(staff)
    assert "/staff/" in client.get("/").content.decode()
    staff.is_staff = False
    staff.save()
    assert "/staff/" not in client.get("/").content.decode()


def test_a_known_visitor_disabled_by_staff_is_signed_out_at_their_next_request(owner, staff):
    client = signed_in(owner)
    account_disable(user=owner, by=staff)
    assert client.get(PAGE).status_code == 302


def test_a_new_password_elsewhere_signs_out_a_known_session(owner):
    client = signed_in(owner)
    owner.set_password("another-long-test-passphrase")
    owner.save()
    assert client.get(PAGE).status_code == 302


def test_a_session_cookie_kept_after_logging_out_signs_in_nobody(owner):
    client = signed_in(owner)
    kept = client.cookies["sessionid"].value
    client.post("/accounts/logout/")
    replayed = Client()
    replayed.cookies["sessionid"] = kept
    assert replayed.get(PAGE).status_code == 302


def test_a_session_whose_stamp_is_gone_is_read_again(owner, session_reads):
    """A saved session's stamp lasts as long as the session: past it, the session is read, and found gone
    if it expired."""
    client = signed_in(owner)
    cache.delete(stamps.of_session(client.cookies["sessionid"].value))
    session_reads.reset_mock()
    assert client.get(PAGE).status_code == 200
    assert session_reads.call_count == 1


def test_a_saved_session_stamp_lasts_as_long_as_the_session(owner, settings):
    settings.SESSION_COOKIE_AGE = 2
    client = signed_in(owner)
    key = stamps.of_session(client.cookies["sessionid"].value)
    with mock.patch.object(cache, "set_many", wraps=cache.set_many) as set_many:
        client.session.save()
    assert set_many.call_args.args[0].keys() == {key} and set_many.call_args.kwargs == {"timeout": 2}


def test_without_the_cache_a_visitor_is_resolved_as_django_does(owner, session_reads):
    client = signed_in(owner)
    session_reads.reset_mock()
    with mock.patch.object(stamps, "read", side_effect=ConnectionError("cache down")):
        assert client.get(PAGE).status_code == 200
    assert session_reads.call_count == 1
