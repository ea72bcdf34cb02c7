"""Comparing two submissions side by side: /leaderboard/compare/?a=<id>&b=<id>, among those the visitor
may open, per database and per hardness level."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.services import submission_score
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db

URL = reverse("leaderboard:compare")


@pytest.fixture
def pair(make_submission, other_user):
    first = make_submission(model_name="Alfa", **scored_fields(20, strict=18))
    second = make_submission(model_name="Beta", user=other_user, **scored_fields(11))
    return first, second


def lines(response, part: str) -> dict[str, tuple]:
    return {
        line["name"]: (line["a"], line["b"], line["difference"])
        for line in response.context["comparison"][part]
    }


def test_anyone_compares_two_public_submissions_per_database_and_per_hardness(client, pair):
    first, second = pair
    response = client.get(URL, {"a": first.pk, "b": second.pk})
    assert response.status_code == 200
    assert lines(response, "overall") == {
        "EA": (pytest.approx(20 / 23), pytest.approx(11 / 23), pytest.approx(9 / 23)),
        "EA-strict": (pytest.approx(18 / 23), pytest.approx(11 / 23), pytest.approx(7 / 23)),
        "TS-EA": (None, None, None),  # both scored before TS-EA existed: unknown, not 0
    }
    assert lines(response, "per_database") == {
        "biblioteca": (1.0, pytest.approx(11 / 12), pytest.approx(1 / 12)),
        "ciclismo": (pytest.approx(8 / 11), 0.0, pytest.approx(8 / 11)),
    }
    assert list(lines(response, "per_hardness")) == ["easy", "medium", "hard", "extra"]
    assert lines(response, "per_hardness")["extra"] == (0.25, 0.0, 0.25)
    body = response.content.decode()
    assert 'id="comparison"' in body and "+39.1" in body  # EA: 87.0 against 47.8
    assert f'href="{first.get_absolute_url()}"' in body and f'href="{second.get_absolute_url()}"' in body
    assert 'id="compare-chart-data"' in body and "noindex" not in body
    bars = response.context["chart"]["data"]
    assert [trace["name"] for trace in bars] == [f"A: Alfa (#{first.pk})", f"B: Beta (#{second.pk})"]
    assert list(bars[0]["x"]) == ["biblioteca", "ciclismo", "easy", "medium", "hard", "extra"]


def ts_lines(response, part: str) -> dict[str, tuple]:
    return {
        line["name"]: (line["ts_ea"]["a"], line["ts_ea"]["b"], line["ts_ea"]["difference"])
        for line in response.context["comparison"][part]
    }


def test_ts_ea_is_compared_overall_with_its_interval_and_per_group(client, make_submission, other_user):
    first = make_submission(model_name="Alfa", **scored_fields(20, ts=16))
    second = make_submission(model_name="Beta", user=other_user, **scored_fields(11, ts=9))
    response = client.get(URL, {"a": first.pk, "b": second.pk})
    assert lines(response, "overall")["TS-EA"] == (
        pytest.approx(16 / 23),
        pytest.approx(9 / 23),
        pytest.approx(7 / 23),
    )
    assert ts_lines(response, "per_database") == {
        "biblioteca": (1.0, 0.75, 0.25),
        "ciclismo": (pytest.approx(4 / 11), 0.0, pytest.approx(4 / 11)),
    }
    assert ts_lines(response, "per_hardness")["hard"] == (pytest.approx(3 / 6), 0.0, pytest.approx(3 / 6))
    body = response.content.decode()
    metrics = reverse("metrics")
    assert f'<th scope="row"><a href="{metrics}#ts-ea">TS-EA</a></th>' in body
    assert f'<th scope="row">ciclismo · <a href="{metrics}#ts-ea">TS-EA</a></th>' in body
    (low_a, high_a), (low_b, high_b) = (s.scores["overall"]["ts_ea_ci95"] for s in (first, second))
    ci_row = body.split('id="ts-ea-ci95"')[1].split("</tr>")[0]
    assert f"{100 * low_a:.1f}\u2013{100 * high_a:.1f}" in ci_row
    assert f"{100 * low_b:.1f}\u2013{100 * high_b:.1f}" in ci_row


def test_a_side_scored_before_ts_ea_compares_it_as_unknown(client, make_submission, other_user):
    current = make_submission(model_name="Alfa", **scored_fields(20, ts=16))
    older = make_submission(model_name="Beta", user=other_user, **scored_fields(11))
    response = client.get(URL, {"a": current.pk, "b": older.pk})
    assert lines(response, "overall")["TS-EA"] == (pytest.approx(16 / 23), None, None)
    assert ts_lines(response, "per_database")["biblioteca"] == (1.0, None, None)
    ci_row = response.content.decode().split('id="ts-ea-ci95"')[1].split("</tr>")[0]
    assert ci_row.endswith('<td class="num">—</td><td></td>')


def test_a_private_submission_cannot_be_compared_by_others(client, other_user, make_submission, pair):
    private = make_submission(model_name="Privato", **{**scored_fields(23), "is_public": False})
    query = {"a": private.pk, "b": pair[1].pk}
    assert client.get(URL, query).status_code == 404
    client.force_login(other_user)
    assert client.get(URL, query).status_code == 404


def test_owners_compare_their_own_private_submission_on_a_page_kept_out_of_search_engines(
    client, owner, make_submission, pair
):
    private = make_submission(model_name="Privato", **{**scored_fields(23), "is_public": False})
    client.force_login(owner)
    response = client.get(URL, {"a": private.pk, "b": pair[1].pk})
    assert response.status_code == 200
    assert '<meta name="robots" content="noindex, nofollow">' in response.content.decode()


def test_staff_compare_a_hidden_submission(client, staff, make_submission, pair):
    hidden = make_submission(model_name="Nascosto", is_hidden=True, **scored_fields(5))
    assert client.get(URL, {"a": hidden.pk, "b": pair[0].pk}).status_code == 404
    client.force_login(staff)
    assert client.get(URL, {"a": hidden.pk, "b": pair[0].pk}).status_code == 200


def test_unscored_or_withdrawn_submissions_are_not_found(client, owner, make_submission, pair):
    from django.utils import timezone

    queued = make_submission(model_name="In coda", is_public=True)
    withdrawn = make_submission(model_name="Ritirato", withdrawn_at=timezone.now(), **scored_fields(5))
    client.force_login(owner)
    for other in (queued, withdrawn):
        assert client.get(URL, {"a": pair[0].pk, "b": other.pk}).status_code == 404
    assert client.get(URL, {"a": pair[0].pk, "b": 999999}).status_code == 404


@pytest.mark.parametrize("query", [{"a": "uno", "b": "2"}, {"a": "1"}, {"b": "1"}, {"a": "-3", "b": "1"}])
def test_a_malformed_request_is_a_400_with_the_picker(client, pair, query):
    response = client.get(URL, query)
    assert response.status_code == 400
    assert 'id="compare-form"' in response.content.decode()


def test_without_ids_the_page_offers_the_ranked_submissions_and_the_visitors_own(
    client, owner, other_user, make_submission, pair
):
    mine = make_submission(model_name="Mio privato", **{**scored_fields(3), "is_public": False})
    response = client.get(URL)
    assert response.status_code == 200
    offered = [pk for pk, _label in response.context["choices"]]
    assert offered == [pair[0].pk, pair[1].pk]
    client.force_login(owner)
    assert [pk for pk, _label in client.get(URL).context["choices"]] == [pair[0].pk, pair[1].pk, mine.pk]
    client.force_login(other_user)
    assert mine.pk not in [pk for pk, _label in client.get(URL).context["choices"]]


def test_it_answers_only_get(client, pair):
    assert client.post(URL, {"a": pair[0].pk, "b": pair[1].pk}).status_code == 405


def test_the_comparison_never_shows_gold(client, make_submission, gold):
    first = make_submission(predictions={qid: "SELECT 1" for qid in gold}, is_public=True)
    second = make_submission(predictions=gold, is_public=True)
    for submission in (first, second):
        submission_score(submission_id=submission.pk)
    response = client.get(URL, {"a": first.pk, "b": second.pk})
    assert response.status_code == 200
    assert_no_gold(response.content, gold_texts(), where=URL)
