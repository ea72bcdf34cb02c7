"""Submissions made on behalf of a team: only by its members (form, API and service), counted towards the
team's quotas as well as the uploader's, and shown, linked and filterable on the leaderboard, its exports
and the team's public page."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import ProtectedError
from django.urls import reverse

from leaderboard.models import Submission
from leaderboard.services import NotTeamMember, QuotaExceeded, Upload, submission_create
from termite_site.accounts.services import api_token_create, team_leave, team_rename
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db

NEW = reverse("leaderboard:submission_new")
API = reverse("api:submissions")
BOARD = reverse("leaderboard:leaderboard")
FILE = b'{"question_id": "biblioteca-001", "sql": "SELECT 1"}'


@pytest.fixture
def team(make_team, other_user):
    """Gruppo Torino: owned by ada (the owner), with bruno (the other user) as a member."""
    return make_team("Gruppo Torino", members=[other_user])


@pytest.fixture
def stranger(django_user_model):
    return django_user_model.objects.create_user("dario", "dario@example.org", "x")


def form(**fields) -> dict:
    return {"model_name": "Llama di squadra", "predictions": SimpleUploadedFile("p.jsonl", FILE), **fields}


def upload(*, user, version, team=None, public=False) -> Submission:
    return submission_create(
        user=user,
        version=version,
        upload=Upload(name="p.jsonl", data=FILE),
        model_card={"model_name": "Modello", "is_public": public},
        team=team,
    )


# Who may submit on behalf of a team.


def test_the_upload_form_offers_the_users_teams_and_none_by_default(client, owner, team, make_team, stranger):
    make_team("Squadra altrui", by=stranger)
    client.force_login(owner)
    field = client.get(NEW).context["form"]["team"]
    assert [str(choice.choice_label) for choice in field] == ["none: just me", "Gruppo Torino"]
    assert field.value() is None


def test_a_member_submits_on_behalf_of_the_team_by_the_form(client, other_user, team, demo_version):
    client.force_login(other_user)
    response = client.post(NEW, form(team="gruppo-torino"))
    submission = Submission.objects.get()
    assert response.status_code == 302 and (submission.user, submission.team) == (other_user, team)
    page = client.get(submission.get_absolute_url()).content.decode()
    assert '<a id="team" href="/teams/gruppo-torino/">Gruppo Torino</a>' in page


def test_a_submission_without_a_team_is_made_by_its_uploader_alone(client, owner, team, demo_version):
    client.force_login(owner)
    client.post(NEW, form())
    assert Submission.objects.get().team is None


def test_someone_not_in_the_team_cannot_submit_on_its_behalf_by_the_form(
    client, stranger, team, demo_version
):
    client.force_login(stranger)
    response = client.post(NEW, form(team="gruppo-torino"))
    assert response.status_code == 400
    assert response.context["form"].errors["team"] == [
        "You are not a member of a team “gruppo-torino”: choose one of your teams, or none."
    ]
    assert not Submission.objects.exists()


def test_the_api_takes_a_team_by_its_slug(client, other_user, team, demo_version):
    raw = api_token_create(user=other_user, name="t")[1]
    response = client.post(API, form(team="gruppo-torino"), HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 201
    assert response.json()["team"] == {"name": "Gruppo Torino", "slug": "gruppo-torino"}
    assert Submission.objects.get().team == team


@pytest.mark.parametrize("slug", ["gruppo-torino", "nessuna-squadra"])
def test_the_api_refuses_a_team_the_user_is_not_in(client, stranger, team, demo_version, slug):
    raw = api_token_create(user=stranger, name="t")[1]
    response = client.post(API, form(team=slug), HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert response.status_code == 400
    assert response.json()["error"]["details"] == [
        f"team: You are not a member of a team “{slug}”: choose one of your teams, or none."
    ]
    assert not Submission.objects.exists()


def test_the_service_checks_membership_again(other_user, team, demo_version):
    team_leave(team=team, user=other_user)  # after the form was filled in, say
    with pytest.raises(NotTeamMember, match="not a member of Gruppo Torino"):
        upload(user=other_user, version=demo_version, team=team)
    assert not Submission.objects.exists()


def test_a_team_with_submissions_cannot_be_deleted(owner, team, demo_version):
    upload(user=owner, version=demo_version, team=team)
    with pytest.raises(ProtectedError):
        team.delete()


# Quotas.


def test_a_team_shares_one_daily_quota_across_its_members(owner, other_user, team, demo_version, settings):
    settings.TERMITE_DAILY_QUOTA = 2
    upload(user=owner, version=demo_version, team=team)
    upload(user=other_user, version=demo_version, team=team)
    with pytest.raises(QuotaExceeded, match="Gruppo Torino has used its 2 submissions of the last 24 hours"):
        upload(user=other_user, version=demo_version, team=team)
    # Their own quota is their own: one left each.
    upload(user=other_user, version=demo_version)
    assert Submission.objects.count() == 3


def test_a_team_shares_one_quota_per_version(owner, other_user, team, demo_version, settings):
    settings.TERMITE_VERSION_QUOTA = 1
    upload(user=owner, version=demo_version, team=team)
    with pytest.raises(QuotaExceeded, match="Gruppo Torino has used all 1 submissions allowed for"):
        upload(user=other_user, version=demo_version, team=team)


def test_a_team_holds_at_most_the_public_submissions_of_one_person(
    owner, other_user, team, demo_version, settings
):
    settings.TERMITE_PUBLIC_PER_VERSION = 1
    upload(user=owner, version=demo_version, team=team, public=True)
    with pytest.raises(QuotaExceeded, match="Gruppo Torino already has 1 public submissions"):
        upload(user=other_user, version=demo_version, team=team, public=True)
    upload(user=other_user, version=demo_version, team=team, public=False)


def test_the_uploaders_own_quota_still_holds_on_behalf_of_a_team(owner, team, demo_version, settings):
    settings.TERMITE_DAILY_QUOTA = 1
    upload(user=owner, version=demo_version)
    with pytest.raises(QuotaExceeded, match="You have used your 1 submissions"):
        upload(user=owner, version=demo_version, team=team)


def test_without_team_quotas_each_member_counts_alone(owner, other_user, team, demo_version, settings):
    settings.TERMITE_TEAM_QUOTAS = False
    settings.TERMITE_DAILY_QUOTA = 1
    upload(user=owner, version=demo_version, team=team)
    upload(user=other_user, version=demo_version, team=team)
    assert team.submissions.count() == 2


def test_the_upload_page_shows_the_teams_quota_left(client, owner, other_user, team, demo_version, settings):
    upload(user=owner, version=demo_version, team=team)
    client.force_login(other_user)
    body = client.get(NEW).content.decode()
    assert 'id="team-quotas"' in body
    assert "On behalf of Gruppo Torino: 4 more today, counting every member's submissions" in body
    settings.TERMITE_TEAM_QUOTAS = False
    assert 'id="team-quotas"' not in client.get(NEW).content.decode()


# Who sees what.


def test_a_teammate_does_not_see_a_private_submission_of_the_team(
    client, owner, other_user, team, demo_version
):
    # One person's private results stay theirs: the team shares its name and its quota, not its probes.
    private = upload(user=owner, version=demo_version, team=team)
    client.force_login(other_user)
    assert client.get(private.get_absolute_url()).status_code == 404


def test_the_team_page_lists_its_members_and_its_public_submissions_only(
    client, team, make_submission, make_team
):
    make_submission(model_name="Pubblico", team=team, **scored_fields(20))
    make_submission(model_name="Privatissimo", team=team, **{**scored_fields(23), "is_public": False})
    make_submission(model_name="Nascostissimo", team=team, is_hidden=True, **scored_fields(23))
    make_submission(model_name="Altrui", team=make_team("Milano"), **scored_fields(23))
    response = client.get(reverse("leaderboard:team", args=["gruppo-torino"]))
    body = response.content.decode()
    assert response.status_code == 200 and "ada" in body and "bruno" in body
    assert "Pubblico" in body and "87.0" in body  # 20 of 23
    for name in ("Privatissimo", "Nascostissimo", "Altrui"):
        assert name not in body
    assert 'href="/leaderboard/?version=demo-1.0&amp;team=gruppo-torino"' in body
    assert client.get(reverse("leaderboard:team", args=["nessuna"])).status_code == 404
    assert client.post(reverse("leaderboard:team", args=["gruppo-torino"])).status_code == 405


# The leaderboard.


@pytest.fixture
def board(make_submission, team, make_team, demo_version):
    make_submission(model_name="Alfa", team=team, **scored_fields(20))
    make_submission(model_name="Beta", team=make_team("Milano"), **scored_fields(15))
    make_submission(model_name="Gamma", **scored_fields(10))
    make_team("Senza righe")


def names(response) -> list[str]:
    return [entry.row.model_name for entry in response.context["entries"] if entry.shown]


def test_the_leaderboard_links_each_team_to_its_page(client, board):
    body = client.get(BOARD).content.decode()
    assert (
        '<td class="team" data-sort="gruppo torino"><a href="/teams/gruppo-torino/">Gruppo Torino</a></td>'
        in (body)
    )
    assert 'data-team="milano"' in body


def test_the_leaderboard_filters_by_team_among_those_with_rows(client, board):
    response = client.get(BOARD, {"team": "gruppo-torino"})
    assert names(response) == ["Alfa"]
    assert response.context["board"].teams == [("gruppo-torino", "Gruppo Torino"), ("milano", "Milano")]
    assert '<option value="gruppo-torino" selected>Gruppo Torino</option>' in response.content.decode()
    assert names(client.get(BOARD, {"team": "senza-righe"})) == []
    assert names(client.get(BOARD, {"team": "not a slug!"})) == ["Alfa", "Beta", "Gamma"]  # ignored


def test_the_search_finds_a_team_by_name(client, board):
    assert names(client.get(BOARD, {"q": "torino"})) == ["Alfa"]


def test_the_exports_carry_the_team_name_and_slug(client, board):
    rows = client.get(reverse("api:leaderboard")).json()["rows"]
    assert [(r["model_name"], r["team"], r["team_slug"]) for r in rows] == [
        ("Alfa", "Gruppo Torino", "gruppo-torino"),
        ("Beta", "Milano", "milano"),
        ("Gamma", "", None),
    ]
    csv = client.get(reverse("leaderboard:leaderboard_csv", args=["demo-1.0"])).content.decode()
    header, first = (line.split(",") for line in csv.splitlines()[:2])
    assert dict(zip(header, first, strict=True))["team_slug"] == "gruppo-torino"


def test_renaming_a_team_drops_the_cached_ranking(client, owner, board, team):
    for url in (BOARD, reverse("api:leaderboard")):
        assert "Gruppo Torino" in client.get(url).content.decode()  # now cached
    team_rename(team=team, name="Gruppo Piemonte", by=owner)
    for url in (BOARD, reverse("api:leaderboard")):
        body = client.get(url).content.decode()
        assert "Gruppo Piemonte" in body and "Gruppo Torino" not in body


def test_renaming_a_team_in_the_admin_drops_the_cached_ranking_too(client, django_user_model, board, team):
    client.get(BOARD)
    admin = django_user_model.objects.create_superuser("capo", "capo@example.org", "x")
    client.force_login(admin)
    client.post(
        reverse("admin:accounts_team_change", args=[team.pk]),
        {
            "name": "Gruppo Piemonte",
            **dict.fromkeys(("memberships-TOTAL_FORMS", "memberships-INITIAL_FORMS"), "0"),
        },
    )
    assert "Gruppo Piemonte" in client.get(BOARD).content.decode()
