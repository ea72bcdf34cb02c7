import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.contrib.auth.signals import user_login_failed
from django.db import connections
from django.test import Client
from django.urls import reverse

from leaderboard import ranking
from tests.processes import evicting_redis

pytestmark = pytest.mark.django_db

LOGIN = reverse("accounts:login")
LEADERBOARD = reverse("leaderboard:leaderboard")


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


@pytest.fixture(params=["file", pytest.param("redis", marks=pytest.mark.processes)])
def page_cache(request, settings, tmp_path) -> int:
    """The page cache of each mode, and how many distinct pages fill it past what it keeps.

    The embedded mode's file cache, at Django's default size: past 300 entries, each 100 more make it cull a
    third of them at random, whatever they hold. 2,000 pages make 17 culls, which an entry survives with odds
    of (2/3)^17, under 1 in 1,000 (10,000 would take the file cache half a minute). A Redis that evicts the
    least recently used keys past its `maxmemory`, as production's does under such a policy: 10,000 pages
    of some 6 KB each, many times its 4 MB."""
    with contextlib.ExitStack() as stack:
        if request.param == "file":
            backend, location, pages = (
                "django.core.cache.backends.filebased.FileBasedCache",
                str(tmp_path),
                2_000,
            )
        else:
            backend, pages = "termite_site.redis_cache.ReusingRedisCache", 10_000
            location = stack.enter_context(evicting_redis(maxmemory="4mb"))
        settings.CACHES = {"default": {"BACKEND": backend, "LOCATION": location}}
        yield pages


def flood_with_pages(*, version, pages: int) -> None:
    """Make the leaderboard keep `pages` distinct whole pages, as as many anonymous visits of distinct
    canonical addresses (`?size=zaN`) would: the page is rendered once, then kept under each address by the
    code that keeps every such page (leaderboard/ranking_views.py)."""
    assert Client().get(LEADERBOARD).status_code == 200
    page, _token = ranking.whole_page(f"en {LEADERBOARD}")
    assert page is not None
    for number in range(pages):
        ranking.whole_page_keep(
            f"en {LEADERBOARD}?size=za{number}", page, label=version.label, kinds=("flood",)
        )


def test_a_locked_account_stays_locked_however_many_pages_are_cached(
    client, owner, password, settings, page_cache, demo_version
):
    # A day's window: the limit counts in fixed windows of the clock, and the flood takes seconds, so that
    # in a window of five minutes it would now and then end in the next window, with a count of its own.
    settings.LOGIN_RATE_LIMIT_PER_ACCOUNT = (5, 86_400)
    for number in range(5):
        client.post(LOGIN, {"username": "ada", "password": "wrong"}, REMOTE_ADDR=f"10.0.3.{number}")
    flood_with_pages(version=demo_version, pages=page_cache)
    response = client.post(LOGIN, {"username": "ada", "password": password}, REMOTE_ADDR="10.0.3.99")
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


@pytest.mark.django_db(
    transaction=True
)  # the attempts run on threads of their own, with connections of their own
def test_attempts_arriving_together_get_no_more_password_checks_than_the_limit(owner, settings):
    settings.LOGIN_RATE_LIMIT_PER_ACCOUNT = (5, 300)
    attempts = 11
    checked: list[str] = []
    statuses: list[int] = []
    turn = threading.Condition()

    def all_checked_or_refused() -> bool:
        return len(checked) + statuses.count(429) == attempts

    def on_failure(sender, credentials, request, **kwargs) -> None:
        # Each checked attempt waits for every other one to be checked or refused: were attempts counted only
        # after their check, none would be counted yet, and all of them would be checked.
        with turn:
            checked.append(credentials["username"])
            turn.notify_all()
            turn.wait_for(all_checked_or_refused, timeout=60)

    def attempt(number: int) -> None:
        try:
            response = Client().post(
                LOGIN, {"username": "ada", "password": "wrong"}, REMOTE_ADDR=f"10.0.1.{number}"
            )
        finally:
            connections.close_all()
        with turn:
            statuses.append(response.status_code)
            turn.notify_all()

    user_login_failed.connect(on_failure)
    try:
        with ThreadPoolExecutor(max_workers=attempts) as pool:
            list(pool.map(attempt, range(attempts)))
    finally:
        user_login_failed.disconnect(on_failure)
    assert len(checked) == 5
    assert sorted(statuses) == [200] * 5 + [429] * 6


def test_the_admin_logs_in_through_the_sites_rate_limited_login(client, staff, password, settings):
    settings.LOGIN_RATE_LIMIT_PER_ACCOUNT = (3, 300)
    login_url = client.get(reverse("admin:index"), follow=True).redirect_chain[-1][0]
    for number in range(30):
        client.post(login_url, {"username": "carla", "password": "wrong"}, REMOTE_ADDR=f"10.0.2.{number}")
    assert client.post(login_url, {"username": "carla", "password": password}).status_code == 429
    client.post(reverse("admin:login"), {"username": "carla", "password": password})
    assert "_auth_user_id" not in client.session


def test_staff_reach_the_admin_after_the_sites_login(client, staff, password):
    login_url = client.get(reverse("admin:index"), follow=True).redirect_chain[-1][0]
    response = client.post(login_url, {"username": "carla", "password": password})
    assert response.status_code == 302 and response.url == reverse("admin:index")
    assert client.get(reverse("admin:index")).status_code == 200


def test_the_client_address_comes_from_the_proxy_header_only_when_proxies_are_trusted(rf, settings):
    from termite_site.ratelimit import client_ip

    request = rf.get("/", REMOTE_ADDR="10.1.1.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.7")
    settings.TERMITE_TRUSTED_PROXIES = 0
    assert client_ip(request) == "10.1.1.1"
    settings.TERMITE_TRUSTED_PROXIES = 1
    assert client_ip(request) == "203.0.113.7"
