"""The public site pages: home, metrics, about, changelog, robots.txt, health."""

from __future__ import annotations

import pytest
from django.urls import reverse

from evaluation.scoring.vocabulary import OUTCOMES
from evaluation.services import version_create_draft

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("name", ["home", "metrics", "about", "changelog"])
def test_public_pages_render_for_anyone_and_may_be_indexed(client, name):
    response = client.get(reverse(name))
    assert response.status_code == 200
    assert "X-Robots-Tag" not in response
    assert b'name="robots"' not in response.content


@pytest.mark.parametrize("name", ["home", "metrics", "about", "changelog"])
def test_public_pages_only_take_get(client, name):
    assert client.post(reverse(name)).status_code == 405


def test_the_home_page_explains_how_to_take_part_and_the_rules(client):
    body = client.get(reverse("home")).content.decode()
    for phrase in ["How to take part", "Rules", "no hand-written", "One account per person", "quotas"]:
        assert phrase in body


def test_the_metrics_page_explains_every_metric(client):
    body = client.get(reverse("metrics")).content.decode()
    for anchor in ['id="ea"', 'id="ea-strict"', 'id="ts-ea"', 'id="hardness"', 'id="ci"', 'id="outcomes"']:
        assert anchor in body
    assert "1e-06" in body and "1000 resamples" in body
    assert "quirks" in body


def test_the_metrics_page_explains_test_suite_ea_and_cites_its_method(client):
    body = client.get(reverse("metrics")).content.decode()
    section = body.split('<h2 id="ts-ea">')[1].split("<h2")[0]
    assert section.startswith("Test-suite EA (TS-EA)</h2>")
    # Why one database is not enough, what the neighbours are, how the gold is checked on them.
    assert "<code>&gt;=</code>" in section and "boundary value" in section
    assert "neighbour databases" in section and "at most 8" in section and "near misses" in section
    assert "in SQLite and" in section and "MariaDB" in section and "returns no rows" in section
    assert "never above EA" in section and "EA stays the headline" in section
    citation = section.split('id="ts-ea-citation"')[1]
    assert "Ruiqi Zhong, Tao Yu, Dan Klein." in citation and "EMNLP 2020." in citation
    assert "Semantic Evaluation for Text-to-SQL with Distilled Test Suites" in citation
    assert 'href="https://aclanthology.org/2020.emnlp-main.29/"' in citation
    assert 'href="https://github.com/taoyds/test-suite-sql-eval">test-suite-sql-eval</a>' in citation


def test_the_metrics_page_explains_the_paired_test_and_the_rule_the_ranking_uses(client):
    body = client.get(reverse("metrics")).content.decode()
    section = body.split('<h2 id="significance">')[1].split("<h2")[0]
    assert "McNemar's exact test" in section and "paired bootstrap interval" in section
    assert "2000 resamples" in section and "fixed seed" in section
    assert "never which" in section and "two public submissions" in section
    # The rank rule is the same paired test, corrected by Holm's procedure, with a worked example.
    ranks = section.split('id="ranks"')[1]
    assert (
        "1 + the number of rows shown to be better than it" in ranks and "Holm's step-down procedure" in ranks
    )
    assert "p = 0.0022" in ranks and "0.05 / 3 = 0.0167" in ranks and "C is rank 2" in ranks
    citations = section.split('id="significance-citations"')[1]
    for reference in (
        "Quinn McNemar.",
        "Psychometrika 12(2), 1947.",
        "Statistical Significance Tests for Machine Translation Evaluation",
        "EMNLP 2004.",
        "The Hitchhiker's Guide to Testing Statistical Significance in Natural Language Processing",
        "ACL 2018.",
        "A simple sequentially rejective multiple test procedure",
    ):
        assert reference in citations


def test_the_about_page_gives_the_bibtex(client):
    body = client.get(reverse("about")).content.decode()
    assert "@misc{ranaldi2024contamination" in body and "2402.08100" in body


def test_the_changelog_lists_published_versions_only(client, demo_version):
    version_create_draft(label="bozza-7", name="Termite", derived_from=demo_version)
    body = client.get(reverse("changelog")).content.decode()
    assert 'id="version-demo-1.0"' in body and "23 questions, 23 scored" in body
    assert "bozza-7" not in body


def test_robots_txt_keeps_crawlers_off_everything_private(client):
    body = client.get("/robots.txt").content.decode()
    for prefix in ["/benchmark/", "/accounts/", "/submissions/", "/api/", "/admin/", "/staff/"]:
        assert f"Disallow: {prefix}" in body


def test_the_metrics_page_says_what_every_badge_and_every_outcome_means(client):
    body = client.get(reverse("metrics")).content.decode()
    for badge in ("verified", "badge-team", "badge-baseline", "badge-older-scorer", "badge-carried"):
        assert f'id="{badge}"' in body
    assert "Self-reported run" in body and "EA after the training cutoff" in body
    assert "the portal checks that they are given, not that they are true" in body
    outcomes = body.split('<h2 id="outcomes">')[1].split("<h2")[0]
    for outcome in OUTCOMES:
        assert f"<dt>{outcome}</dt>" in outcomes or f'">{outcome}</dt>' in outcomes
