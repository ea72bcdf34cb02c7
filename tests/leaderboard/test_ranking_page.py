"""The public leaderboard page: who may see it, what it shows, sorting, filters, column groups, charts."""

from __future__ import annotations

import html
import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.scoring.score import SCORER_VERSION
from evaluation.services import version_create_draft
from leaderboard.services import submission_score, submission_verify
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.factories import baseline_make, version_make
from tests.leaderboard.page_rows import row_names, row_ranks
from tests.leaderboard.scored import bulk_scored, scored_fields

pytestmark = pytest.mark.django_db

URL = reverse("leaderboard:leaderboard")


@pytest.fixture
def board(make_submission, make_team, other_user, demo_version):
    """Four public systems (20, 15, 14 and 5 right of 23: ranks 1, 1, 1, 4, since only Delta is shown to be
    worse, by the three others), a baseline, and five that must never show."""
    now = timezone.now()
    torino, milano = make_team("Torino", members=[other_user]), make_team("Milano")
    rows = {
        "Alfa": make_submission(
            model_name="Alfa",
            team=torino,
            model_size="70B",
            weights="open",
            spider_dev_ea=85.0,
            created_at=now - timedelta(days=9),
            **scored_fields(20),
        ),
        "Beta": make_submission(
            model_name="Beta",
            team=milano,
            model_size="7B",
            weights="closed",
            approach="fine-tuning",
            created_at=now - timedelta(days=6),
            **scored_fields(15),
        ),
        "Gamma": make_submission(
            model_name="Gamma",
            user=other_user,
            team=torino,
            model_size="7B",
            weights="open",
            created_at=now - timedelta(days=3),
            **scored_fields(14),
        ),
        "Delta": make_submission(model_name="Delta", created_at=now, **scored_fields(5)),
    }
    make_submission(model_name="Privatissimo", **{**scored_fields(23), "is_public": False})
    make_submission(model_name="Nascostissimo", is_hidden=True, **scored_fields(23))
    make_submission(model_name="Ritiratissimo", withdrawn_at=now, **scored_fields(23))
    make_submission(model_name="Incodatissimo", is_public=True)
    make_submission(model_name="Fallitissimo", is_public=True, status="failed")
    baseline_make(
        version=demo_version,
        weights="closed",
        note="temperatura 1",
        source_url="https://example.org/articolo",
    )
    return rows


NEVER_SHOWN = ("Privatissimo", "Nascostissimo", "Ritiratissimo", "Incodatissimo", "Fallitissimo")


def names(response, *, shown_only: bool = True) -> list[str]:
    return row_names(response, shown_only=shown_only)


def test_anyone_sees_the_ranking_of_the_latest_version_without_logging_in(client, board):
    response = client.get(URL)
    assert response.status_code == 200
    assert names(response) == ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]
    assert [e.row.rank for e in response.context["entries"]] == [1, 1, 1, None, 4]
    body = response.content.decode()
    for name in NEVER_SHOWN:
        assert name not in body
    assert f'href="{board["Alfa"].get_absolute_url()}"' in body


def test_the_page_may_be_indexed(client, board):
    response = client.get(URL)
    assert "noindex" not in response.content.decode()
    assert "X-Robots-Tag" not in response


def test_logged_in_people_see_the_same_ranking_and_no_private_rows(client, board, owner, other_user, staff):
    for user in (owner, other_user, staff):
        client.force_login(user)
        response = client.get(URL)
        assert response.status_code == 200
        assert names(response) == ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]
        for name in NEVER_SHOWN:
            assert name not in response.content.decode()


def test_it_answers_only_get(client, board):
    assert client.post(URL).status_code == 405


def test_the_page_shows_every_column_group_and_explains_shared_ranks(client, board):
    body = client.get(URL).content.decode()
    for key in (
        "rank",
        "model_name",
        "team",
        "date",
        "ea",
        "ea_strict",
        "ts_ea",
        "db_biblioteca",
        "db_ciclismo",
    ):
        assert f'data-key="{key}"' in body
    for key in (
        "hardness_easy",
        "hardness_extra",
        "spider_ea",
        "spider_gap",
        "model_size",
        "weights",
        "approach",
    ):
        assert f'data-key="{key}"' in body
    assert 'id="tie-rule"' in body and "1 + the number of rows shown to be better than it" in body
    # Delta's rank says which rows are better, on hover and focus.
    assert 'tabindex="0" title="Significantly better: #' in body and "No row is significantly better." in body
    # Alfa: EA 87.0 with its interval, Spider 85.0 self-reported, so a gap of -2.0 points.
    assert "87.0" in body and "73.9\u2013100.0" in body and "-2.0" in body


def test_a_baseline_row_is_marked_and_unranked(client, board):
    response = client.get(URL)
    body = response.content.decode()
    (baseline,) = [e.row for e in response.context["entries"] if e.row.baseline]
    assert baseline.rank is None
    assert "reported in the paper, not scored here" in body and 'class="baseline"' in body
    assert 'href="https://example.org/articolo"' in body and "temperatura 1" in body


def test_a_row_scored_by_an_older_scorer_is_badged_and_a_current_one_is_not(client, make_submission):
    make_submission(model_name="Nuovo", **scored_fields(10, scorer_version=SCORER_VERSION))
    make_submission(model_name="Vecchio", **scored_fields(5, scorer_version="1.1.0"))
    rows = {
        name: html
        for html in client.get(URL).content.decode().split("<tr")
        for name in ("Nuovo", "Vecchio")
        if f">{name}</a>" in html
    }
    assert 'class="badge older-scorer"' in rows["Vecchio"] and "scored by 1.1.0" in rows["Vecchio"]
    assert 'title="scored by an older scorer; it will be rescored"' in rows["Vecchio"]
    assert "older-scorer" not in rows["Nuovo"] and "scored by" not in rows["Nuovo"]


def test_ts_ea_shows_with_its_interval_and_a_dash_where_it_is_unknown(client, make_submission, demo_version):
    make_submission(model_name="Nuovo", **scored_fields(20, ts=16))
    make_submission(model_name="Vecchio", **scored_fields(15))
    response = client.get(URL)
    rows = {
        name: html
        for html in response.content.decode().split("<tr")
        for name in ("Nuovo", "Vecchio")
        if f">{name}</a>" in html
    }
    low, high = response.context["board"].rows[0].ts_ea_ci95
    assert f'data-sort="{16 / 23!r}">69.6 <span class="ci"' in rows["Nuovo"]
    assert f"{100 * low:.1f}\u2013{100 * high:.1f}</span>" in rows["Nuovo"]
    # Scored before TS-EA existed: unknown until rescored, neither 0 nor its EA.
    assert '<td class="num" data-sort="">—</td>' in rows["Vecchio"]


def test_the_ts_ea_header_sorts_and_links_to_its_explanation(client, board):
    body = client.get(URL).content.decode()
    metrics = reverse("metrics")
    assert '<a href="?sort=ts_ea&amp;order=desc">TS-EA</a>' in body
    assert f'<a class="about" href="{metrics}#ts-ea"' in body
    assert 'id="ts-ea-help"' in body and f'href="{metrics}#ts-ea">test-suite EA</a>' in body


def test_rows_without_ts_ea_sort_last_in_both_orders(client, make_submission, demo_version):
    make_submission(model_name="Alto", **scored_fields(20, ts=12))
    make_submission(model_name="Vecchio", **scored_fields(18))
    make_submission(model_name="Basso", **scored_fields(10, ts=10))
    baseline_make(version=demo_version, per_database={"biblioteca": 0.5})
    assert names(client.get(URL, {"sort": "ts_ea", "order": "desc"})) == [
        "Alto",
        "Basso",
        "Vecchio",
        "Riferimento",
    ]
    assert names(client.get(URL, {"sort": "ts_ea", "order": "asc"})) == [
        "Basso",
        "Alto",
        "Vecchio",
        "Riferimento",
    ]


def test_a_version_is_chosen_with_a_selector_and_the_latest_is_the_default(client, board, make_submission):
    newer = version_make(label="demo-2.0")
    make_submission(version=newer, model_name="Nuovo", **scored_fields(10))
    assert names(client.get(URL)) == ["Nuovo"]
    response = client.get(URL, {"version": "demo-1.0"})
    assert names(response) == ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]
    body = response.content.decode()
    assert '<option value="demo-1.0" selected>' in body and '<option value="demo-2.0">' in body


def test_an_unknown_or_draft_version_is_not_found(client, board):
    version_create_draft(label="bozza", name="Bozza")
    assert client.get(URL, {"version": "nessuna"}).status_code == 404
    assert client.get(URL, {"version": "bozza"}).status_code == 404


def test_without_a_published_version_the_page_says_so(client, db, empty_store):
    response = client.get(URL)
    assert response.status_code == 200 and 'id="no-version"' in response.content.decode()


def test_a_version_without_submissions_says_so(client, demo_version):
    response = client.get(URL)
    assert response.status_code == 200 and 'id="no-rows"' in response.content.decode()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"sort": "ea", "order": "asc"}, ["Delta", "Riferimento", "Gamma", "Beta", "Alfa"]),
        ({"sort": "rank", "order": "desc"}, ["Delta", "Riferimento", "Gamma", "Beta", "Alfa"]),
        ({"sort": "model_name", "order": "asc"}, ["Alfa", "Beta", "Delta", "Gamma", "Riferimento"]),
        ({"sort": "db_ciclismo", "order": "desc"}, ["Alfa", "Beta", "Riferimento", "Gamma", "Delta"]),
        ({"sort": "hardness_hard", "order": "desc"}, ["Alfa", "Beta", "Gamma", "Delta", "Riferimento"]),
        ({"sort": "spider_gap", "order": "desc"}, ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]),
        ({"sort": "model_size", "order": "desc"}, ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]),
        ({"sort": "date", "order": "desc"}, ["Delta", "Gamma", "Beta", "Alfa", "Riferimento"]),
        ({"sort": "nonsense", "order": "sideways"}, ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]),
    ],
)
def test_the_server_sorts_by_any_column(client, board, params, expected):
    response = client.get(URL, params)
    assert names(response) == expected
    # Ranks stay those of the ranking, whatever the order shown.
    assert {e.row.model_name: e.row.rank for e in response.context["entries"]}["Delta"] == 4


def test_a_column_header_links_to_its_sort_and_marks_the_current_one(client, board):
    body = client.get(URL, {"sort": "ea", "order": "desc"}).content.decode()
    assert 'data-key="ea" class="num" title="' in body
    assert 'aria-sort="descending"><a href="?sort=ea&amp;order=asc">' in body
    assert '<a href="?sort=team&amp;order=asc">' in body


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"q": "torino"}, ["Alfa", "Gamma"]),
        ({"q": "GAMMA"}, ["Gamma"]),
        ({"q": "temperatura"}, ["Riferimento"]),
        ({"weights": "open"}, ["Alfa", "Gamma"]),
        ({"weights": "closed"}, ["Beta", "Riferimento"]),
        ({"approach": "fine-tuning"}, ["Beta"]),
        ({"size": "7B"}, ["Beta", "Gamma"]),
        ({"weights": "open", "size": "7B"}, ["Gamma"]),
        ({"q": "nessuno"}, []),
        ({"weights": "strange"}, ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]),
    ],
)
def test_filters_by_text_and_tags(client, board, params, expected):
    response = client.get(URL, params)
    assert names(response) == expected
    assert response.context["shown_count"] == len(expected)
    # Filtered rows are still sent, hidden, so that the browser can show them again without a request.
    assert len(names(response, shown_only=False)) == 5
    assert response.content.decode().count("<tr hidden") == 5 - len(expected)


def row_html(response, *names: str) -> dict[str, str]:
    return {
        name: html
        for html in response.content.decode().split("<tr")
        for name in names
        if f">{name}</a>" in html
    }


def test_a_verified_row_shows_a_badge_with_its_date_and_note_and_the_others_say_self_reported(
    client, board, staff
):
    submission_verify(submission=board["Beta"], verified=True, note="riprodotto dal codice", by=staff)
    response = client.get(URL)
    rows = row_html(response, "Alfa", "Beta")
    today = timezone.localdate().isoformat()
    assert (
        f'class="badge verified" title="Verified on {today}: riprodotto dal codice">verified {today}<'
        in (rows["Beta"])
    )
    assert "self-reported run" not in rows["Beta"]
    assert "self-reported run" in rows["Alfa"] and "badge verified" not in rows["Alfa"]
    body = response.content.decode()
    (baseline,) = [html for html in body.split("<tr") if "Riferimento" in html and 'class="baseline"' in html]
    assert "self-reported run" not in baseline  # a baseline says what it is instead
    assert 'id="verified-help"' in body and f'href="{reverse("metrics")}#verified"' in body
    assert staff.username not in body  # who verified it is for staff only


def test_verifying_a_row_shows_at_once_on_the_cached_page(client, board, staff):
    assert "badge verified" not in client.get(URL).content.decode()  # the page is cached now
    submission_verify(submission=board["Alfa"], verified=True, note="eseguito da noi", by=staff)
    assert "badge verified" in row_html(client.get(URL), "Alfa")["Alfa"]
    submission_verify(submission=board["Alfa"], verified=False, note="", by=staff)
    assert "self-reported run" in row_html(client.get(URL), "Alfa")["Alfa"]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"verified": "1"}, ["Beta", "Delta"]),
        ({"verified": "1", "weights": "closed"}, ["Beta"]),
        ({"verified": "false"}, ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]),
        ({"verified": ""}, ["Alfa", "Beta", "Gamma", "Riferimento", "Delta"]),
    ],
)
def test_the_verified_only_filter_keeps_the_verified_runs(client, board, staff, params, expected):
    for name in ("Beta", "Delta"):
        submission_verify(submission=board[name], verified=True, note="riprodotto", by=staff)
    response = client.get(URL, params)
    assert names(response) == expected
    assert response.content.decode().count("<tr hidden") == 5 - len(expected)
    # The browser filters on the same attribute (static/js/leaderboard.js).
    assert row_html(response, "Beta")["Beta"].count('data-verified="1"') == 1
    assert 'data-verified=""' in row_html(response, "Alfa")["Alfa"]


def test_the_verified_only_box_stays_checked(client, board):
    assert (
        '<input type="checkbox" name="verified" value="1" checked>'
        in client.get(URL, {"verified": "1"}).content.decode()
    )
    assert '<input type="checkbox" name="verified" value="1">' in client.get(URL).content.decode()


def test_the_filter_form_keeps_what_was_asked(client, board):
    body = client.get(URL, {"q": "torino", "weights": "open", "size": "7B", "sort": "ea"}).content.decode()
    assert 'name="q" value="torino"' in body
    assert '<option value="open" selected>' in body and '<option value="7B" selected>' in body
    assert '<input type="hidden" name="sort" value="ea">' in body


def test_column_groups_can_be_hidden(client, board):
    body = client.get(URL, {"hide": ["databases", "tags"]}).content.decode()
    # The table's classes hide the groups' cells (see static/css/leaderboard.css), so the browser can show them again.
    assert '<table class="table leaderboard hide-databases hide-tags" id="leaderboard">' in body
    assert '<input type="checkbox" name="hide" value="databases" checked>' in body
    assert '<input type="checkbox" name="hide" value="hardness">' in body
    assert (
        '<table class="table leaderboard" id="leaderboard">'
        in client.get(URL, {"hide": "none"}).content.decode()
    )


def test_the_groups_per_database_per_hardness_and_of_the_model_card_come_folded_and_one_link_unfolds_them(
    client, board
):
    folded = '<table class="table leaderboard hide-databases hide-hardness hide-tags" id="leaderboard">'
    body = client.get(URL).content.decode()
    assert folded in body
    assert "Folded: EA per database, EA per hardness level, Model card." in body
    assert '<a href="?hide=none" id="unfold">Show every column</a>' in body
    assert folded in client.get(URL, {"hide": "x"}).content.decode()  # anything invalid: the default
    # The filter form always sends `none`, so that unchecking every group shows them all without JavaScript.
    assert '<input type="hidden" name="hide" value="none">' in body
    unfolded = client.get(URL, {"hide": ["none"]}).content.decode()
    assert '<table class="table leaderboard" id="leaderboard">' in unfolded and 'id="unfold"' not in unfolded
    # Sorting an unfolded table keeps it unfolded.
    assert '<th scope="col" data-key="ea" class="num"' in unfolded
    assert '<a href="?sort=ea&amp;order=desc&amp;hide=none">' in unfolded


def test_the_charts_show_the_top_systems_and_the_best_ea_over_time(client, board):
    response = client.get(URL)
    body = response.content.decode()
    assert 'id="databases-chart-data"' in body and 'id="progress-chart-data"' in body
    assert "vendor/plotly-basic.min.js" in body and "js/charts.js" in body and "js/leaderboard.js" in body
    charts = response.context["charts"]
    bars = charts["databases"]["data"]
    assert [trace["name"] for trace in bars] == [
        f"Alfa (#{board['Alfa'].pk})",
        f"Beta (#{board['Beta'].pk})",
        f"Gamma (#{board['Gamma'].pk})",
        f"Delta (#{board['Delta'].pk})",
        "Riferimento (baseline)",
    ]
    assert list(bars[0]["x"]) == ["biblioteca", "ciclismo"]
    best, baseline = charts["progress"]["data"]
    # Alfa came first and is still the best: one step, carried to the latest submission's date.
    assert list(best["y"]) == [pytest.approx(86.96), pytest.approx(86.96)]
    assert baseline["line"]["dash"] == "dot"
    for name in NEVER_SHOWN:
        assert name not in str(charts)


def test_a_baseline_with_only_an_overall_ea_shows_a_dash_per_database_and_draws_no_bar(
    client, make_submission, demo_version
):
    """A paper that reports none of the version's databases (the demo's example baseline)."""
    now = timezone.now()
    make_submission(model_name="Primo", created_at=now - timedelta(days=2), **scored_fields(10))
    make_submission(model_name="Secondo", created_at=now, **scored_fields(16))
    baseline_make(version=demo_version, model_name="Altrove", per_database={}, ea=0.5)
    response = client.get(URL)
    (row,) = [html for html in response.content.decode().split("<tr") if ">Altrove<" in html]
    assert row.count('data-group="databases" data-sort="">—</td>') == 2 and "<strong>50.0</strong>" in row
    charts = response.context["charts"]
    assert [trace["name"].split(" (")[0] for trace in charts["databases"]["data"]] == ["Secondo", "Primo"]
    # Its overall EA is known: it is drawn as a baseline's line over time.
    assert [trace["name"] for trace in charts["progress"]["data"]][1:] == ["Altrove (baseline)"]


def test_the_best_ea_over_time_steps_up_when_a_submission_beats_it(make_submission, demo_version):
    from leaderboard.charts import best_over_time
    from leaderboard.ranking import build_leaderboard

    now = timezone.now()
    make_submission(model_name="Primo", created_at=now - timedelta(days=20), **scored_fields(10))
    make_submission(model_name="Peggiore", created_at=now - timedelta(days=10), **scored_fields(8))
    make_submission(model_name="Migliore", created_at=now, **scored_fields(16))
    figure = best_over_time(build_leaderboard(version=demo_version), best_label="best", baseline_label="b")
    (line,) = figure["data"]
    assert list(line["y"]) == [pytest.approx(43.48), pytest.approx(69.57), pytest.approx(69.57)]
    assert [text.split(" (")[0] for text in line["text"]] == ["Primo", "Migliore", "Migliore"]


def test_there_is_no_best_ea_over_time_until_the_submissions_span_two_days(client, make_submission):
    make_submission(model_name="Primo", **scored_fields(10))
    make_submission(model_name="Secondo", **scored_fields(16))
    response = client.get(URL)
    assert response.context["charts"]["progress"] is None
    assert 'id="progress-chart' not in response.content.decode()
    assert 'id="databases-chart-data"' in response.content.decode()


def test_the_site_navigation_links_to_the_leaderboard(client, db):
    assert f'href="{URL}"' in client.get(reverse("home")).content.decode()


def test_the_page_never_shows_gold(client, make_submission, gold):
    submission = make_submission(predictions={qid: "SELECT 1" for qid in gold}, is_public=True)
    submission_score(submission_id=submission.pk)
    assert_no_gold(client.get(URL).content, gold_texts(), where=URL)


# Pages: with more rows than PAGE_SIZE, the server sends one page of the rows the filters keep, in the
# order asked; ?all=1 sends every row as before, for the browser to sort and filter.


@pytest.fixture
def long_board(owner, demo_version):
    bulk_scored(250, user=owner, version=demo_version)


def link(response, rel: str) -> str:
    return html.unescape(re.search(rf'<a rel="{rel}" href="([^"]*)"', response.content.decode())[1])


def test_a_long_ranking_is_sent_a_hundred_rows_at_a_time_with_global_ranks(client, long_board):
    first, third = client.get(URL), client.get(URL, {"page": 3})
    everything = client.get(URL, {"all": "1"})
    assert (len(names(first)), len(names(third)), len(names(everything))) == (100, 50, 250)
    assert names(first) + names(client.get(URL, {"page": 2})) + names(third) == names(everything)
    # Ranks are the ranking's, whatever the page.
    assert row_ranks(third) == {name: row_ranks(everything)[name] for name in names(third)}
    assert "data-paged" in first.content.decode() and "data-paged" not in everything.content.decode()
    assert 'id="all-rows" href="?all=1"' in first.content.decode()
    assert 'id="rows-by-page" href="?"' in everything.content.decode()
    # Past the last page: the last page.
    assert names(client.get(URL, {"page": 99})) == names(third)


def test_the_server_sorts_and_filters_across_pages_without_javascript(client, long_board):
    query = {"weights": "open", "sort": "model_name", "order": "asc"}
    every = names(client.get(URL, {**query, "all": "1"}))
    assert len(every) == 84  # one system in three has open weights
    pages, response = [], client.get(URL, query)
    while True:
        pages += names(response)
        if 'rel="next"' not in response.content.decode():
            break
        response = client.get(URL + link(response, "next"))
    assert pages == every == sorted(every)
    assert "84" in client.get(URL, query).content.decode().split('id="shown-count">')[1][:3]


def test_page_links_keep_the_filters_and_the_sort(client, long_board):
    response = client.get(
        URL, {"approach": "prompting", "sort": "model_name", "order": "asc", "hide": "tags"}
    )
    assert link(response, "next") == "?approach=prompting&sort=model_name&hide=tags&page=2"
    second = client.get(URL + link(response, "next"))
    assert link(second, "prev") == "?approach=prompting&sort=model_name&hide=tags"
    # A new sort starts from the first page, with the same filters.
    assert (
        '<a href="?approach=prompting&amp;sort=ea&amp;order=desc&amp;hide=tags">' in second.content.decode()
    )
    # The form keeps ?all=1 on the page of every row, so that a filter applied there stays there.
    assert '<input type="hidden" name="all" value="1">' in client.get(URL, {"all": "1"}).content.decode()


def test_a_short_ranking_has_no_pages(client, board):
    body = client.get(URL).content.decode()
    assert "data-paged" not in body and 'id="ranking-pages"' not in body
