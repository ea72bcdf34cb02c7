"""The staff page that watches a version for probing: who may see it, what it shows, and its three
actions (hide rows, lower a quota, disable an account), each validated, confirmed and recorded."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.messages import get_messages
from django.test import Client
from django.urls import reverse

from leaderboard.models import Submission, SubmissionQuota
from leaderboard.selectors import quota_for
from termite_site.accounts.models import ApiToken
from termite_site.accounts.services import api_token_authenticate, api_token_create
from tests.leaderboard.scored import QUESTION_IDS, outcome_lines, scored_fields

pytestmark = pytest.mark.django_db


def real_file() -> dict[str, str]:
    return {qid: f"SELECT titolo FROM libri WHERE id = {n}" for n, qid in enumerate(QUESTION_IDS)}


@pytest.fixture
def probed(make_submission, owner, other_user):
    """The owner edits one prediction of a scored file; the other user uploads `SELECT 1` throughout."""
    first = make_submission(predictions=real_file(), **scored_fields(10, outcomes=outcome_lines(range(10))))
    second = make_submission(
        predictions={**real_file(), "ciclismo-002": "SELECT nome FROM corridori WHERE squadra = 'Rossa'"},
        **scored_fields(11, outcomes=outcome_lines([*range(10), QUESTION_IDS.index("ciclismo-002")])),
    )
    trivial = make_submission(user=other_user, predictions={qid: "SELECT 1" for qid in QUESTION_IDS})
    return {"first": first, "second": second, "trivial": trivial}


@pytest.fixture
def as_staff(client, staff):
    client.force_login(staff)
    return client


def url(name: str, version) -> str:
    return reverse(f"leaderboard_staff:{name}", args=[version.label])


def said(response) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


# The page.


def test_anonymous_visitors_are_sent_to_log_in(client, demo_version):
    response = client.get(url("probing", demo_version))
    assert response.status_code == 302 and response.url.startswith(reverse("accounts:login"))


def test_participants_may_not_see_it(client, owner, demo_version, probed):
    client.force_login(owner)
    assert client.get(url("probing", demo_version)).status_code == 403


def test_an_unknown_version_is_not_found(as_staff):
    assert as_staff.get(reverse("leaderboard_staff:probing", args=["nessuna"])).status_code == 404


def test_the_staff_page_of_a_version_links_to_it(as_staff, demo_version):
    page = as_staff.get(reverse("staff:version", args=[demo_version.label])).content.decode()
    assert url("probing", demo_version) in page


def test_staff_see_each_account_with_its_evidence_and_actions(
    as_staff, owner, other_user, demo_version, probed
):
    page = as_staff.get(url("probing", demo_version)).content.decode()
    mine = page.split(f'id="account-{owner.pk}"')[1].split("</section>")[0]
    assert f"#{probed['second'].pk}" in mine and f"#{probed['first'].pk}" in mine
    assert "ciclismo-002" in mine and "SELECT nome FROM corridori WHERE squadra = &#x27;Rossa&#x27;" in mine
    assert "(wrong_result)" in mine and "(correct)" in mine  # what scoring said, before and after
    assert "43.5 → 47.8" in mine and "Δ +4.3" in mine  # EA of 10 and 11 of 23
    theirs = page.split(f'id="account-{other_user.pk}"')[1].split("</section>")[0]
    assert f"#{probed['trivial'].pk}" in theirs and "23 / 23" in theirs and "reads no table: 23" in theirs
    for form in ("probing_hide", "probing_quota", "probing_disable"):
        assert f'action="{url(form, demo_version)}"' in mine
    assert f'data-confirm="Disable {owner.username}? Its API tokens are revoked for good."' in mine
    assert 'name="csrfmiddlewaretoken"' in page


def test_a_version_without_findings_says_so(as_staff, demo_version):
    page = as_staff.get(url("probing", demo_version)).content.decode()
    assert 'id="no-findings"' in page


def test_staff_are_offered_no_button_to_disable_a_staff_account(
    as_staff, staff, make_submission, demo_version
):
    make_submission(user=staff, predictions={qid: "SELECT 1" for qid in QUESTION_IDS})
    page = as_staff.get(url("probing", demo_version)).content.decode()
    assert f'id="account-{staff.pk}"' in page and "probing/disable/" not in page


# Hiding rows.


def test_staff_hide_chosen_rows_with_a_public_reason(as_staff, staff, demo_version, probed):
    chosen = [probed["first"].pk, probed["second"].pk]
    response = as_staff.post(
        url("probing_hide", demo_version),
        {"submissions": chosen, "reason": " Modifiche a una risposta per volta. "},
    )
    assert response.status_code == 302
    assert response.url == url("probing", demo_version) + f"#account-{probed['first'].user_id}"
    assert said(response) == [f"Hidden from the public pages: #{chosen[0]}, #{chosen[1]}."]
    for submission in Submission.objects.filter(pk__in=chosen):
        assert submission.is_hidden and submission.moderation_reason == "Modifiche a una risposta per volta."
    assert not Submission.objects.get(pk=probed["trivial"].pk).is_hidden
    entries = LogEntry.objects.filter(user=staff, object_id__in=[str(pk) for pk in chosen])
    assert entries.count() == 2
    assert all("Hid the submission: Modifiche" in entry.change_message for entry in entries)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"reason": "Sonda"}, "Choose the submissions to hide."),
        ({"submissions": ["FIRST"]}, "Give the reason shown on the hidden rows."),
        ({"submissions": ["FIRST"], "reason": "x" * 501}, "at most 500 characters"),
        ({"submissions": ["abc"], "reason": "Sonda"}, "“abc” is not a submission number."),
        ({"submissions": ["999999"], "reason": "Sonda"}, "Submission 999999 is not one of this version's."),
    ],
)
def test_hiding_refuses_bad_input_with_a_clear_message(as_staff, demo_version, probed, data, message):
    data = {
        key: [str(probed["first"].pk) if v == "FIRST" else v for v in value]
        if key == "submissions"
        else value
        for key, value in data.items()
    }
    response = as_staff.post(url("probing_hide", demo_version), data)
    assert response.status_code == 302
    assert any(message in text for text in said(response)), said(response)
    assert not Submission.objects.filter(is_hidden=True).exists()


def test_a_submission_of_another_version_cannot_be_hidden_from_this_page(as_staff, demo_version, probed):
    from evaluation.services import version_create_draft

    other = version_create_draft(label="demo-1.1", name="Termite demo", derived_from=demo_version)
    response = as_staff.post(
        url("probing_hide", other), {"submissions": [probed["first"].pk], "reason": "Sonda"}
    )
    assert said(response) == [f"Submission {probed['first'].pk} is not one of this version's."]
    assert not Submission.objects.filter(is_hidden=True).exists()


# Lowering a quota.


def test_staff_lower_a_users_quota(as_staff, staff, owner, demo_version, probed):
    response = as_staff.post(
        url("probing_quota", demo_version), {"user": owner.pk, "per_day": 1, "per_version": 10}
    )
    assert response.status_code == 302 and response.url.endswith(f"#account-{owner.pk}")
    assert said(response) == ["ada may now submit 1 times a day and 10 times per version."]
    quota = quota_for(user=owner, version=demo_version)
    assert (quota.per_day, quota.per_version) == (1, 10)
    entry = LogEntry.objects.get(user=staff, object_id=str(owner.pk))
    assert (
        entry.change_message == "Lowered the submission quota to 1 a day and 10 per version (from 5 and 100)."
    )


def test_lowering_one_limit_keeps_the_other_and_an_own_quota_is_lowered_from_its_value(
    as_staff, owner, demo_version
):
    SubmissionQuota.objects.create(user=owner, per_day=20, per_version=200)
    as_staff.post(url("probing_quota", demo_version), {"user": owner.pk, "per_day": 20, "per_version": 150})
    owner.submission_quota.refresh_from_db()
    assert (owner.submission_quota.per_day, owner.submission_quota.per_version) == (20, 150)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            {"per_day": 5, "per_version": 100},
            "must be lower than ada's current one (5 a day, 100 per version)",
        ),
        ({"per_day": 6, "per_version": 10}, "must be lower than ada's current one"),
        ({"per_day": -1, "per_version": 10}, "greater than or equal to 0"),
        ({"per_day": "tanti", "per_version": 10}, "Enter a whole number."),
        ({"per_version": 10}, "This field is required."),
        ({"user": 999999, "per_day": 1, "per_version": 10}, "There is no such account."),
        ({"user": "ada", "per_day": 1, "per_version": 10}, "There is no such account."),
    ],
)
def test_lowering_a_quota_refuses_bad_input_with_a_clear_message(
    as_staff, owner, demo_version, data, message
):
    response = as_staff.post(url("probing_quota", demo_version), {"user": owner.pk, **data})
    assert response.status_code == 302
    assert any(message in text for text in said(response)), said(response)
    assert not SubmissionQuota.objects.exists()
    assert not LogEntry.objects.exists()


# Disabling an account.


def test_staff_disable_an_account_and_revoke_its_tokens(
    as_staff, staff, owner, password, demo_version, probed
):
    _token, raw = api_token_create(user=owner, name="script")
    response = as_staff.post(url("probing_disable", demo_version), {"user": owner.pk})
    assert response.status_code == 302 and response.url.endswith(f"#account-{owner.pk}")
    assert said(response) == ["ada is disabled: it can no longer log in, and its 1 API token is revoked."]
    owner.refresh_from_db()
    assert not owner.is_active
    assert not ApiToken.objects.active().filter(user=owner).exists()
    assert api_token_authenticate(raw=raw) is None
    assert not Client().login(username=owner.username, password=password)
    entry = LogEntry.objects.get(user=staff, object_id=str(owner.pk))
    assert entry.change_message == "Disabled the account and revoked 1 API token(s)."


def test_a_disabled_accounts_open_session_ends(as_staff, owner, demo_version):
    session = Client()
    session.force_login(owner)
    assert session.get(reverse("accounts:profile")).status_code == 200
    as_staff.post(url("probing_disable", demo_version), {"user": owner.pk})
    assert session.get(reverse("accounts:profile")).status_code == 302


def test_staff_cannot_disable_themselves(as_staff, staff, demo_version):
    response = as_staff.post(url("probing_disable", demo_version), {"user": staff.pk})
    assert said(response) == ["You cannot disable your own account."]
    staff.refresh_from_db()
    assert staff.is_active


def test_staff_cannot_disable_a_staff_account(as_staff, django_user_model, demo_version):
    colleague = django_user_model.objects.create_user(
        username="dario", email="dario@example.org", password="x", is_staff=True
    )
    response = as_staff.post(url("probing_disable", demo_version), {"user": colleague.pk})
    assert said(response) == ["dario is a staff account: take its staff status away in the admin first."]
    colleague.refresh_from_db()
    assert colleague.is_active


@pytest.mark.parametrize(
    ("user", "message"), [("999999", "There is no such account."), ("", "Choose an account.")]
)
def test_disabling_refuses_an_unknown_account(as_staff, demo_version, user, message):
    assert said(as_staff.post(url("probing_disable", demo_version), {"user": user})) == [message]


def test_disabling_an_account_twice_says_it_already_is(as_staff, owner, demo_version):
    as_staff.post(url("probing_disable", demo_version), {"user": owner.pk})
    response = as_staff.post(url("probing_disable", demo_version), {"user": owner.pk})
    assert said(response)[-1] == "ada is already disabled."


# Only staff act, by POST, with the CSRF token.


@pytest.mark.parametrize("action", ["probing_hide", "probing_quota", "probing_disable"])
def test_participants_cannot_act(client, owner, other_user, demo_version, probed, action):
    client.force_login(other_user)
    data = {
        "submissions": [probed["first"].pk],
        "reason": "x",
        "user": owner.pk,
        "per_day": 0,
        "per_version": 0,
    }
    assert client.post(url(action, demo_version), data).status_code == 403
    owner.refresh_from_db()
    assert owner.is_active and not SubmissionQuota.objects.exists()
    assert not Submission.objects.filter(is_hidden=True).exists()


@pytest.mark.parametrize("action", ["probing_hide", "probing_quota", "probing_disable"])
def test_actions_take_only_post(as_staff, demo_version, action):
    assert as_staff.get(url(action, demo_version)).status_code == 405


def test_actions_need_the_csrf_token(staff, owner, demo_version):
    client = Client(enforce_csrf_checks=True)
    client.force_login(staff)
    assert client.post(url("probing_disable", demo_version), {"user": owner.pk}).status_code == 403
    owner.refresh_from_db()
    assert owner.is_active
