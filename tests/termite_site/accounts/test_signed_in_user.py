"""Who is signed in is known without reading their row on every request, and never as they were before a
change (termite_site/accounts/backends.py, stamps.py)."""

from __future__ import annotations

from unittest import mock

import pytest
from django.contrib.auth import SESSION_KEY
from django.db import transaction

from termite_site.accounts import stamps
from termite_site.accounts.backends import RememberingModelBackend
from termite_site.accounts.models import User
from termite_site.accounts.services import users_mark_email_confirmed

pytestmark = pytest.mark.django_db


@pytest.fixture
def backend() -> RememberingModelBackend:
    return RememberingModelBackend()


def test_a_users_row_is_read_once_and_each_request_gets_a_new_object_of_it(
    backend, owner, django_assert_num_queries
):
    with django_assert_num_queries(1):
        first = backend.get_user(owner.pk)
    first._perm_cache = {"leaderboard.view_everything"}  # what a request may cache on its user
    with django_assert_num_queries(0):
        second = backend.get_user(owner.pk)
    assert second is not first and second == owner and not hasattr(second, "_perm_cache")
    assert (second.username, second.email, second.affiliation, second.password) == (
        owner.username,
        owner.email,
        owner.affiliation,
        owner.password,
    )
    assert second._state.db == "default" and not second._state.adding


def test_a_saved_change_is_seen_at_the_next_request(backend, staff, django_assert_num_queries):
    assert backend.get_user(staff.pk).is_staff
    staff.is_staff = False
    staff.save()
    with django_assert_num_queries(1):
        assert not backend.get_user(staff.pk).is_staff


def test_a_disabled_or_deleted_user_is_signed_in_no_more(backend, owner, other_user):
    assert backend.get_user(owner.pk) and backend.get_user(other_user.pk)
    owner.is_active = False
    owner.save(update_fields=["is_active"])
    other_pk = other_user.pk
    other_user.delete()
    assert backend.get_user(owner.pk) is None
    assert backend.get_user(other_pk) is None


def test_an_update_that_sends_no_signal_is_seen_too(backend, owner, other_user):
    User.objects.filter(pk__in=[owner.pk, other_user.pk]).update(email_confirmed_at=None)
    stamps.forget([stamps.of_user(owner.pk), stamps.of_user(other_user.pk)])
    assert backend.get_user(owner.pk).must_confirm_email
    owner.refresh_from_db()
    assert owner.confirm_email(email=owner.email)
    assert not backend.get_user(owner.pk).must_confirm_email
    assert backend.get_user(other_user.pk).must_confirm_email
    assert users_mark_email_confirmed(users=User.objects.filter(pk=other_user.pk)) == 1
    assert not backend.get_user(other_user.pk).must_confirm_email


def test_a_row_read_before_a_change_commits_is_not_used_after_it(
    backend, owner, django_capture_on_commit_callbacks, django_assert_num_queries
):
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        owner.first_name = "Ada"
        owner.save()
        # Another request, while the change is not committed yet, reads the row under the new stamp.
        backend.get_user(owner.pk)
    with django_assert_num_queries(1):  # the commit replaced that stamp
        assert backend.get_user(owner.pk).first_name == "Ada"


def test_without_the_cache_the_row_is_read_each_time(backend, owner, django_assert_num_queries):
    with mock.patch("termite_site.accounts.stamps.cache.get", side_effect=ConnectionError):
        for _ in range(2):
            with django_assert_num_queries(1):
                assert backend.get_user(owner.pk) == owner


def test_a_password_changed_elsewhere_still_signs_out_every_other_session(client, owner, password):
    client.force_login(owner)
    assert client.get("/accounts/profile/").status_code == 200
    owner.set_password("another-long-test-passphrase")
    owner.save()
    answer = client.get("/accounts/profile/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]
    assert SESSION_KEY not in client.session
