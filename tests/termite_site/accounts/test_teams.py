"""Teams: a user creates one and owns it; owners invite people by single-use links that expire, remove
members and make them owners; a member may leave, but a team always keeps an owner."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from termite_site.accounts.models import Team, TeamInvitation, TeamMembership, hash_token
from termite_site.accounts.services import (
    InvitationRefused,
    TeamError,
    team_create,
    team_invitation_create,
    team_join,
    team_leave,
    team_rename,
)

pytestmark = pytest.mark.django_db

TEAMS = reverse("accounts:team_list")


def detail(team: Team) -> str:
    return reverse("accounts:team_detail", args=[team.slug])


def join_url(raw: str) -> str:
    return reverse("accounts:team_join", args=[raw])


@pytest.fixture
def team(make_team):
    return make_team("Gruppo Torino")


@pytest.fixture
def member(team, other_user):
    TeamMembership.objects.create(team=team, user=other_user)
    return other_user


@pytest.fixture
def link(team, owner) -> str:
    return team_invitation_create(team=team, by=owner)[1]


# Creating a team.


def test_the_profile_links_to_your_teams(client, owner):
    client.force_login(owner)
    assert f'href="{TEAMS}"' in client.get(reverse("accounts:profile")).content.decode()


def test_creating_a_team_makes_its_creator_its_owner(client, owner):
    client.force_login(owner)
    response = client.post(TEAMS, {"name": "  Gruppo   Torino "})
    team = Team.objects.get()
    assert response.status_code == 302 and response.url == detail(team)
    assert (team.name, team.slug, team.created_by) == ("Gruppo Torino", "gruppo-torino", owner)
    assert team.memberships.get().role == TeamMembership.Role.OWNER
    body = client.get(TEAMS).content.decode()
    assert "Gruppo Torino" in body and "owner" in body


def test_a_team_name_is_taken_whatever_its_case(client, owner, other_user, team):
    client.force_login(other_user)
    response = client.post(TEAMS, {"name": "GRUPPO torino"})
    assert response.status_code == 400
    assert response.context["form"].errors["name"] == ["A team named “GRUPPO torino” already exists."]
    with pytest.raises(TeamError, match="already exists"):
        team_create(user=other_user, name="gruppo TORINO")
    assert Team.objects.count() == 1


def test_a_team_needs_a_name(client, owner):
    client.force_login(owner)
    assert client.post(TEAMS, {"name": "   "}).status_code == 400
    with pytest.raises(TeamError, match="Give the team a name"):
        team_create(user=owner, name=" ")
    assert not Team.objects.exists()


def test_two_names_that_slugify_alike_get_two_slugs(owner):
    assert team_create(user=owner, name="Università").slug == "universita"
    assert team_create(user=owner, name="Universita!").slug == "universita-2"
    assert team_create(user=owner, name="!!!").slug == "team"


def test_team_pages_need_a_login(client, team):
    for url in (TEAMS, detail(team), join_url("x" * 43)):
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("accounts:login"))


def test_a_teams_page_is_for_its_members_only(client, team, other_user):
    client.force_login(other_user)
    assert client.get(detail(team)).status_code == 404


def test_a_member_sees_the_members_but_no_invitation_links(client, team, member, link):
    client.force_login(member)
    body = client.get(detail(team)).content.decode()
    assert "ada" in body and "bruno" in body
    assert 'id="invitations"' not in body and "Leave the team" in body


# Invitation links.


def test_an_owner_makes_a_link_shown_once_and_stored_as_a_hash(client, owner, team, settings):
    settings.TERMITE_TEAM_INVITATION_DAYS = 2
    client.force_login(owner)
    response = client.post(reverse("accounts:team_invitation_create", args=[team.slug]))
    link = response.context["new_link"]
    assert response.status_code == 200 and link.startswith("http://testserver/accounts/teams/join/")
    raw = link.rstrip("/").rsplit("/", 1)[1]
    invitation = TeamInvitation.objects.get()
    assert invitation.token_hash == hash_token(raw) and raw not in invitation.token_hash
    assert invitation.expires_at - invitation.created_at == timedelta(days=2)
    again = client.get(detail(team)).content.decode()
    assert raw not in again and invitation.expires_at.strftime("%Y-%m-%d") in again


def test_only_an_owner_makes_links_renames_and_manages_members(client, team, member, owner):
    client.force_login(member)
    assert client.post(reverse("accounts:team_invitation_create", args=[team.slug])).status_code == 403
    assert (
        client.post(reverse("accounts:team_rename", args=[team.slug]), {"name": "Altro"}).status_code == 403
    )
    for action in ("team_member_remove", "team_member_make_owner"):
        assert client.post(reverse(f"accounts:{action}", args=[team.slug, owner.pk])).status_code == 403
    assert not TeamInvitation.objects.exists() and team.is_owner(owner) and not team.is_owner(member)
    team.refresh_from_db()
    assert team.name == "Gruppo Torino"


def test_the_team_actions_take_a_post(client, owner, team):
    client.force_login(owner)
    for name, args in (
        ("team_rename", [team.slug]),
        ("team_leave", [team.slug]),
        ("team_member_remove", [team.slug, owner.pk]),
    ):
        assert client.get(reverse(f"accounts:{name}", args=args)).status_code == 405


def test_opening_a_link_says_which_team_and_joining_takes_a_post(client, link, other_user, team):
    client.force_login(other_user)
    page = client.get(join_url(link))
    assert page.status_code == 200 and "You are invited to join <strong>Gruppo Torino</strong>" in (
        page.content.decode()
    )
    assert not team.has_member(other_user)  # a mail client's preview of the link joins nobody
    response = client.post(join_url(link))
    assert response.status_code == 302 and response.url == detail(team)
    membership = team.memberships.get(user=other_user)
    assert membership.role == TeamMembership.Role.MEMBER
    invitation = TeamInvitation.objects.get()
    assert invitation.used_by == other_user and invitation.used_at == membership.joined_at


def test_a_link_lets_one_person_in(client, link, other_user, django_user_model, team):
    team_join(raw=link, user=other_user)
    third = django_user_model.objects.create_user("carlo", "carlo@example.org", "x")
    client.force_login(third)
    response = client.post(join_url(link))
    assert response.status_code == 410
    assert "already used: each link lets one person in" in response.context["refusal"]
    assert not team.has_member(third)


def test_an_expired_link_says_when_it_expired(client, link, other_user, team):
    TeamInvitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    client.force_login(other_user)
    for response in (client.get(join_url(link)), client.post(join_url(link))):
        assert response.status_code == 410
        assert "expired on" in response.context["refusal"] and "Ask its owners" in response.context["refusal"]
    assert not team.has_member(other_user)


def test_an_owner_withdraws_a_link(client, owner, link, other_user, team):
    client.force_login(owner)
    invitation = TeamInvitation.objects.get()
    response = client.post(reverse("accounts:team_invitation_revoke", args=[team.slug, invitation.pk]))
    assert response.status_code == 302
    assert "No unused invitation link." in client.get(detail(team)).content.decode()
    client.force_login(other_user)
    response = client.post(join_url(link))
    assert response.status_code == 410 and "was withdrawn by its owners" in response.context["refusal"]
    assert not team.has_member(other_user)


def test_a_link_of_another_team_cannot_be_withdrawn_here(client, owner, team, make_team, other_user):
    theirs = make_team("Milano", by=other_user)
    team_invitation_create(team=theirs, by=other_user)
    client.force_login(owner)
    url = reverse("accounts:team_invitation_revoke", args=[team.slug, theirs.invitations.get().pk])
    assert client.post(url).status_code == 404
    assert theirs.invitations.get().revoked_at is None


def test_an_unknown_link_is_a_404_that_says_so(client, other_user, team):
    client.force_login(other_user)
    response = client.get(join_url("not-a-real-token"))
    assert response.status_code == 404 and "not valid" in response.context["refusal"]


def test_a_member_opening_a_link_is_told_so_and_leaves_it_unused(client, link, owner, team):
    client.force_login(owner)
    response = client.post(join_url(link))
    assert response.status_code == 409
    assert response.context["refusal"] == "You are already a member of Gruppo Torino."
    assert TeamInvitation.objects.get().used_at is None


def test_reopening_the_page_of_a_new_link_shows_the_teams_links_instead_of_an_error(client, owner, team):
    client.force_login(owner)
    url = reverse("accounts:team_invitation_create", args=[team.slug])
    client.post(url)
    response = client.get(url)  # a reload, or the address opened again
    assert response.status_code == 302 and response.url == detail(team) + "#invitations"
    body = client.get(response.url).content.decode()
    assert "An invitation link is shown once, when it is made." in body and 'id="invitations"' in body
    assert TeamInvitation.objects.count() == 1


def test_reloading_a_link_after_joining_names_the_team_one_is_in(client, link, other_user, team):
    client.force_login(other_user)
    client.post(join_url(link))
    response = client.get(join_url(link))
    assert response.status_code == 409
    assert response.context["refusal"] == "You are already a member of Gruppo Torino."
    assert f'href="{detail(team)}"' in response.content.decode()


def test_an_invitee_not_logged_in_is_told_of_the_team_and_comes_back_to_the_link_after_logging_in(
    client, link, other_user, password, team
):
    response = client.get(join_url(link))
    assert response.status_code == 302
    login_page = client.get(response.url).content.decode()
    assert "You are invited to join the team <strong>Gruppo Torino</strong>" in login_page
    signup = f"{reverse('accounts:signup')}?next={join_url(link)}"
    assert f'href="{signup}"' in login_page
    logged_in = client.post(response.url, {"username": other_user.username, "password": password})
    assert logged_in.status_code == 302 and logged_in.url == join_url(link)


def test_an_invitee_without_an_account_signs_up_and_comes_back_to_the_link(client, link, team):
    signup = f"{reverse('accounts:signup')}?next={join_url(link)}"
    page = client.get(signup).content.decode()
    assert "You are invited to join the team <strong>Gruppo Torino</strong>" in page
    assert f'name="next" value="{join_url(link)}"' in page
    form = {
        "username": "dario",
        "email": "dario@example.org",
        "affiliation": "Politecnico di Milano",
        "password1": "correct-horse-battery-staple",
        "password2": "correct-horse-battery-staple",
        "next": join_url(link),
    }
    response = client.post(signup, form)
    assert response.status_code == 302 and response.url == join_url(link)
    assert client.post(join_url(link)).url == detail(team)  # joining needs no confirmed address
    assert team.members.filter(username="dario").exists()


def test_the_login_page_names_no_team_for_a_link_that_no_longer_lets_anyone_in(client, link):
    TeamInvitation.objects.update(expires_at=timezone.now() - timedelta(minutes=1))
    page = client.get(f"{reverse('accounts:login')}?next={join_url(link)}").content.decode()
    assert 'id="invited-to"' not in page and "Gruppo Torino" not in page


def test_refusals_carry_a_code_for_each_case(link, owner, other_user):
    with pytest.raises(InvitationRefused) as refused:
        team_join(raw=link, user=owner)
    assert refused.value.code == "member"
    with pytest.raises(InvitationRefused) as refused:
        team_join(raw="", user=other_user)
    assert refused.value.code == "unknown"


# Members.


def test_an_owner_removes_a_member(client, owner, team, member):
    client.force_login(owner)
    response = client.post(reverse("accounts:team_member_remove", args=[team.slug, member.pk]))
    assert response.status_code == 302 and not team.has_member(member)


def test_a_member_leaves(client, team, member):
    client.force_login(member)
    response = client.post(reverse("accounts:team_leave", args=[team.slug]))
    assert response.status_code == 302 and response.url == TEAMS
    assert not team.has_member(member)


def test_the_only_owner_cannot_leave_until_another_member_is_owner(client, owner, team, member):
    client.force_login(owner)
    response = client.post(reverse("accounts:team_leave", args=[team.slug]), follow=True)
    assert "You are the only owner of Gruppo Torino" in response.content.decode()
    assert team.is_owner(owner)
    client.post(reverse("accounts:team_member_make_owner", args=[team.slug, member.pk]))
    assert team.is_owner(member)
    team_leave(team=team, user=owner)
    assert not team.has_member(owner) and team.is_owner(member)


def test_leaving_a_team_one_is_not_in_is_refused(team, other_user):
    with pytest.raises(TeamError, match="not a member"):
        team_leave(team=team, user=other_user)


# Renaming.


def test_an_owner_renames_the_team_and_its_slug_stays(client, owner, team, make_team):
    make_team("Milano")
    client.force_login(owner)
    taken = client.post(reverse("accounts:team_rename", args=[team.slug]), {"name": "MILANO"})
    assert taken.status_code == 400 and "already exists" in taken.content.decode()
    response = client.post(reverse("accounts:team_rename", args=[team.slug]), {"name": "Gruppo Piemonte"})
    assert response.status_code == 302
    team.refresh_from_db()
    assert (team.name, team.slug) == ("Gruppo Piemonte", "gruppo-torino")


def test_renaming_a_team_to_another_case_of_its_own_name_is_allowed(owner, team):
    team_rename(team=team, name="GRUPPO TORINO", by=owner)
    assert Team.objects.get().name == "GRUPPO TORINO"


# The admin.


def test_staff_see_teams_their_members_and_links_in_the_admin(client, django_user_model, team, link):
    admin = django_user_model.objects.create_superuser("capo", "capo@example.org", "x")
    client.force_login(admin)
    for name in ("team", "teammembership", "teaminvitation"):
        assert client.get(reverse(f"admin:accounts_{name}_changelist")).status_code == 200
    assert client.get(reverse("admin:accounts_team_change", args=[team.pk])).status_code == 200
    response = client.post(
        reverse("admin:accounts_team_change", args=[team.pk]),
        {
            "name": "Gruppo Piemonte",
            "memberships-TOTAL_FORMS": "0",
            "memberships-INITIAL_FORMS": "0",
            "memberships-MIN_NUM_FORMS": "0",
            "memberships-MAX_NUM_FORMS": "1000",
        },
    )
    assert response.status_code == 302
    assert Team.objects.get().name == "Gruppo Piemonte"
