from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def released_as_stored(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Scorings stored before: their `scored_at` is the time participants were shown, their release."""
    Scoring = apps.get_model("leaderboard", "Scoring")
    Scoring.objects.update(released_at=models.F("scored_at"))


class Migration(migrations.Migration):

    dependencies = [
        ("leaderboard", "0010_protocol_runs"),
    ]

    operations = [
        migrations.AddField(
            model_name="scoring",
            name="released_at",
            field=models.DateTimeField(null=True),
        ),
        migrations.RunPython(released_as_stored, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="scoring",
            name="released_at",
            field=models.DateTimeField(),
        ),
    ]
