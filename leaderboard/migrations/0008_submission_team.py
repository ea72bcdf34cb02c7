"""A submission's team becomes a team of the portal, instead of text.

Each distinct non-empty team text of the existing submissions (compared ignoring case and spacing, as
team names are) becomes a Team, named as its earliest submission spelt it: owned by the earliest
submitter of it, with every other submitter of it a member from their first submission of it. Baselines
keep their text team. Going back, each submission gets its team's name as text again; the teams stay.
"""

from typing import Any

import django.db.models.deletion
from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps
from django.utils.text import slugify


def _slug(name: str, taken: set[str]) -> str:
    # As the app makes them (termite_site.accounts.services), frozen here.
    base = slugify(name)[:120] or "team"
    slug, n = base, 1
    while slug in taken:
        n += 1
        slug = f"{base}-{n}"
    taken.add(slug)
    return slug


def teams_from_text(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Submission = apps.get_model("leaderboard", "Submission")
    Team = apps.get_model("accounts", "Team")
    Membership = apps.get_model("accounts", "TeamMembership")
    taken = set(Team.objects.values_list("slug", flat=True))
    existing = {" ".join(name.split()).casefold(): pk for pk, name in Team.objects.values_list("pk", "name")}
    # key -> {"name", "texts", "members": {user_id: first created_at}, "first": (created_at, user_id)}
    found: dict[str, dict[str, Any]] = {}
    rows = (
        Submission.objects.exclude(team_text="")
        .order_by("created_at", "pk")
        .values_list("team_text", "user_id", "created_at")
    )
    for text, user_id, created_at in rows.iterator():
        name = " ".join(text.split())
        if not name:
            continue
        entry = found.setdefault(
            name.casefold(), {"name": name, "texts": set(), "members": {}, "first": (created_at, user_id)}
        )
        entry["texts"].add(text)
        entry["members"].setdefault(user_id, created_at)
    for key, entry in found.items():
        created_at, owner_id = entry["first"]
        team_id = existing.get(key)
        if team_id is None:
            team_id = Team.objects.create(
                name=entry["name"], slug=_slug(entry["name"], taken), created_by_id=owner_id, created_at=created_at
            ).pk
        already = set(Membership.objects.filter(team_id=team_id).values_list("user_id", flat=True))
        Membership.objects.bulk_create(
            Membership(
                team_id=team_id,
                user_id=user_id,
                role="owner" if user_id == owner_id and team_id not in existing.values() else "member",
                joined_at=joined_at,
            )
            for user_id, joined_at in entry["members"].items()
            if user_id not in already
        )
        for text in entry["texts"]:
            Submission.objects.filter(team_text=text).update(team_id=team_id)


def text_from_teams(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    Submission = apps.get_model("leaderboard", "Submission")
    Team = apps.get_model("accounts", "Team")
    for team_id, name in Team.objects.filter(submissions__isnull=False).distinct().values_list("pk", "name"):
        Submission.objects.filter(team_id=team_id).update(team_text=name[:120])


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0003_teams"),
        ("leaderboard", "0007_submission_verified"),
    ]

    operations = [
        migrations.RenameField(model_name="submission", old_name="team", new_name="team_text"),
        migrations.AddField(
            model_name="submission",
            name="team",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="submissions",
                to="accounts.team",
                verbose_name="team",
            ),
        ),
        migrations.RunPython(teams_from_text, text_from_teams),
        migrations.RemoveField(model_name="submission", name="team_text"),
    ]
