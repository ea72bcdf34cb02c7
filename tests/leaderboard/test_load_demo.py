"""`manage.py load_demo`: what the README's start command loads, idempotently."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluation.models import BenchmarkVersion
from leaderboard.models import Baseline, Submission
from termite_site.accounts.models import User

pytestmark = pytest.mark.django_db


def test_it_loads_the_demo_benchmark_an_admin_and_a_scored_leaderboard(capsys, client, settings):
    settings.REDIS_URL = ""
    call_command("load_demo")
    out = capsys.readouterr().out
    assert "Demo admin: username 'admin', password '" in out
    assert User.objects.get(username="admin").is_superuser
    assert BenchmarkVersion.objects.get(label="demo-1.0").is_published
    scores = dict(Submission.objects.values_list("model_name", "ea"))
    assert scores["Oracolo (the demo's own answers)"] == 1.0
    assert 0 < scores["Metà e metà"] < 1
    # Its other half are wrong answers that run, not hard-coded ones.
    outcomes = Submission.objects.get(model_name="Metà e metà").scores["outcomes"]
    assert (outcomes["correct"], outcomes["wrong_result"], outcomes["reads_no_table"]) == (12, 11, 0)
    assert "Oracolo" in client.get("/leaderboard/").content.decode()
    assert "Demo baseline: added the paper's GPT-3.5 row, as an example (not measured on the demo)." in out
    assert Baseline.objects.get().model_name == "GPT-3.5"


def test_a_second_run_changes_nothing_and_prints_the_same_password(capsys, settings):
    settings.REDIS_URL = ""
    call_command("load_demo")
    first = capsys.readouterr().out
    call_command("load_demo")
    second = capsys.readouterr().out
    password_line = next(line for line in first.splitlines() if "Demo admin" in line)
    assert password_line in second
    assert "already loaded" in second and "Demo submissions: already there." in second
    assert "Demo baseline: already there." in second
    assert Submission.objects.count() == 3 and Baseline.objects.count() == 1
