import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

LOGIN = reverse("accounts:login")


def test_logging_in_with_the_right_password_opens_the_profile(client, owner, password):
    response = client.post(LOGIN, {"username": "ada", "password": password})
    assert response.status_code == 302
    assert response.url == reverse("accounts:profile")


def test_a_wrong_password_is_refused_with_a_message(client, owner):
    response = client.post(LOGIN, {"username": "ada", "password": "nope"})
    assert response.status_code == 200
    assert "_auth_user_id" not in client.session
    assert response.context["form"].non_field_errors()


def test_logging_out_takes_a_post_and_ends_the_session(client, owner):
    client.force_login(owner)
    assert client.get(reverse("accounts:logout")).status_code == 405
    response = client.post(reverse("accounts:logout"))
    assert response.status_code == 302
    assert "_auth_user_id" not in client.session


def test_an_account_is_locked_after_too_many_failures_even_with_the_right_password(
    client, owner, password, settings
):
    settings.LOGIN_RATE_LIMIT_PER_ACCOUNT = (3, 300)
    for _ in range(3):
        client.post(LOGIN, {"username": "ada", "password": "wrong"}, REMOTE_ADDR=f"10.0.0.{_}")
    response = client.post(LOGIN, {"username": "ADA", "password": password}, REMOTE_ADDR="10.0.0.99")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_an_address_is_limited_across_accounts(client, owner, other_user, password, settings):
    settings.LOGIN_RATE_LIMIT_PER_IP = (4, 300)
    for name in ["x1", "x2", "x3", "x4"]:
        assert client.post(LOGIN, {"username": name, "password": "wrong"}).status_code == 200
    response = client.post(LOGIN, {"username": "bruno", "password": password})
    assert response.status_code == 429
    assert b"Too many login attempts" in response.content


def test_a_successful_login_clears_the_failure_count(client, owner, password, settings):
    settings.LOGIN_RATE_LIMIT_PER_ACCOUNT = (3, 300)
    client.post(LOGIN, {"username": "ada", "password": "wrong"})
    client.post(LOGIN, {"username": "ada", "password": "wrong"})
    assert client.post(LOGIN, {"username": "ada", "password": password}).status_code == 302
    client.logout()
    client.post(LOGIN, {"username": "ada", "password": "wrong"})
    assert client.post(LOGIN, {"username": "ada", "password": password}).status_code == 302


def test_the_client_address_comes_from_the_proxy_header_only_when_proxies_are_trusted(rf, settings):
    from termite_site.ratelimit import client_ip

    request = rf.get("/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    settings.TERMITE_TRUSTED_PROXIES = 0
    assert client_ip(request) == "10.1.1.1"
    settings.TERMITE_TRUSTED_PROXIES = 1
    assert client_ip(request) == "203.0.113.7"
