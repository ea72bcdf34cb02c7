"""`manage.py create_version LABEL [--from LABEL]`: the staff page's draft, for admins who script imports."""

from __future__ import annotations

import re

import pytest
from django.core.management import CommandError, call_command

from evaluation.models import BenchmarkVersion
from evaluation.services import version_create_draft

pytestmark = pytest.mark.django_db


def test_it_creates_an_empty_sealed_draft(capsys):
    call_command("create_version", "2.0", "--notes", "nuovi database")
    draft = BenchmarkVersion.objects.get(label="2.0")
    assert (draft.is_published, draft.kind, draft.name, draft.notes) == (
        False,
        "sealed",
        "Termite",
        "nuovi database",
    )
    assert not draft.databases.exists()
    assert capsys.readouterr().out == "Draft Termite 2.0 created, empty, sealed.\n"


def test_it_copies_the_version_from_names_as_the_staff_page_does(demo_version, capsys):
    call_command("create_version", "demo-1.1", "--from", demo_version.label, "--name", "Termite demo")
    draft = BenchmarkVersion.objects.get(label="demo-1.1")
    assert draft.derived_from == demo_version and draft.kind == demo_version.kind
    assert draft.questions.count() == demo_version.questions.count() and draft.databases.count() == 2
    assert capsys.readouterr().out == (
        f"Draft Termite demo demo-1.1 created, a copy of {demo_version} (2 databases, "
        f"{demo_version.questions.count()} questions), {draft.get_kind_display()}.\n"
    )


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["taken"], "version 'taken' already exists"),
        (["2.0", "--from", "nope"], "No benchmark version 'nope' to copy (--from)."),
        (["due punto zero"], "'due punto zero' cannot be a version's label: Use letters, digits"),
    ],
    ids=["an existing label", "an unknown --from", "a label with spaces"],
)
def test_it_refuses_with_one_clear_line(arguments, message):
    version_create_draft(label="taken", name="Termite")
    labels = set(BenchmarkVersion.objects.values_list("label", flat=True))
    with pytest.raises(CommandError, match=f"^{re.escape(message)}"):
        call_command("create_version", *arguments)
    assert set(BenchmarkVersion.objects.values_list("label", flat=True)) == labels
