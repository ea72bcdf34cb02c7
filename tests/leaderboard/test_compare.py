"""Comparing two submissions side by side: /leaderboard/compare/?a=<id>&b=<id>, among those the visitor
may open, per database and per hardness level, with a paired test of their EA (and its API)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.scoring.significance import RANK_RULE, Pairs, paired_bootstrap_ci
from leaderboard.feedback import ComparisonJSON
from leaderboard.services import submission_score
from termite_site.accounts.services import api_token_create
from tests.evaluation.gold_leaks import assert_no_gold, gold_texts
from tests.factories import version_make
from tests.leaderboard.scored import QUESTION_IDS, outcome_lines, scored_fields
from tests.leaderboard.test_openapi import json_schema, violations

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


# The paired test: McNemar's exact test and a paired bootstrap interval of the EA difference, from the
# verdicts stored per question, never showing which questions differ.

API = reverse("api:compare")
RIGHT_A = range(20)  # questions 0-19
RIGHT_B = [*range(9), 20, 21]  # 0-8 as A, and two A misses: both 9, A only 11, B only 2, neither 1
DIFFERING = [QUESTION_IDS[i] for i in (*range(9, 20), 20, 21)]


@pytest.fixture
def tested(make_submission, other_user):
    first = make_submission(model_name="Alfa", **scored_fields(20, outcomes=outcome_lines(RIGHT_A)))
    second = make_submission(
        model_name="Beta", user=other_user, **scored_fields(11, outcomes=outcome_lines(RIGHT_B))
    )
    return first, second


def api_get(client, query: dict, user=None):
    headers = {}
    if user is not None:
        _token, raw = api_token_create(user=user, name=f"t{user.pk}-{len(query)}-{sorted(query.items())}")
        headers["HTTP_AUTHORIZATION"] = f"Bearer {raw}"
    return client.get(API, query, **headers)


def significance_block(response) -> str:
    return response.content.decode().split('id="significance"')[1].split("</section>")[0]


def test_two_public_submissions_get_mcnemars_test_and_the_paired_interval(client, tested):
    first, second = tested
    response = client.get(URL, {"a": first.pk, "b": second.pk})
    paired = response.context["paired"]
    low, high = paired_bootstrap_ci(Pairs(both=9, only_a=11, only_b=2, neither=1))
    assert paired.shown == {
        "a": first.pk,
        "b": second.pk,
        "version": first.version.label,
        "n": 23,
        "ea_a": pytest.approx(20 / 23),
        "ea_b": pytest.approx(11 / 23),
        "difference": pytest.approx(9 / 23),
        "difference_ci95": [low, high],
        "mcnemar_p": pytest.approx(2 * (1 + 13 + 78) / 2**13),  # 0.0225
        "right_only_a": 11,
        "right_only_b": 2,
        # Two ranked rows, the only two: one pair, judged as the leaderboard ranks them.
        "significant": True,
        "significantly_better": "a",
        "comparisons": 1,
        "threshold": 1.0,
        "rule": RANK_RULE,
    }
    assert paired.significant and low <= 9 / 23 <= high and low > 0
    block = significance_block(response)
    assert '<td class="num" id="paired-difference">+39.1</td>' in block
    assert f'<td class="num" id="paired-ci95">[{100 * low:+.1f}, {100 * high:+.1f}]</td>' in block
    assert '<td class="num" id="mcnemar-p">0.0225</td>' in block
    assert '<td class="num" id="right-only">11 / 2</td>' in block
    assert "A is significantly better than B." in block
    assert "Holm's threshold over its 1 pairs of ranked rows" in block
    assert f'href="{reverse("leaderboard:leaderboard")}?version=demo-1.0"' in block
    assert f'href="{reverse("metrics")}#significance"' in block


def test_the_page_and_the_api_never_name_a_question(client, tested):
    first, second = tested
    page = client.get(URL, {"a": first.pk, "b": second.pk}).content.decode()
    answer = api_get(client, {"a": first.pk, "b": second.pk}).content.decode()
    for text in (page, answer):
        assert not [qid for qid in QUESTION_IDS if qid in text]
    assert DIFFERING  # the questions that differ are among those, and none is named


def test_a_difference_within_chance_is_not_significant(client, make_submission, other_user):
    # 10 questions each alone answers right: b = c, p = 1, whatever the EAs.
    first = make_submission(**scored_fields(10, outcomes=outcome_lines(range(10))))
    second = make_submission(user=other_user, **scored_fields(10, outcomes=outcome_lines(range(10, 20))))
    response = client.get(URL, {"a": first.pk, "b": second.pk})
    paired = response.context["paired"]
    assert paired.shown["mcnemar_p"] == 1.0 and paired.shown["difference"] == 0.0
    assert not paired.significant
    block = significance_block(response)
    assert "The difference is not significant." in block
    assert '<td class="num" id="mcnemar-p">1</td>' in block


def test_only_questions_scored_for_both_count_and_not_submitted_ones_are_wrong(
    client, make_submission, other_user
):
    first = make_submission(**scored_fields(5, outcomes=outcome_lines(range(5), excluded=[22])))
    second = make_submission(
        user=other_user, **scored_fields(1, outcomes=outcome_lines([0], not_submitted=range(1, 23)))
    )
    shown = client.get(URL, {"a": first.pk, "b": second.pk}).context["paired"].shown
    assert shown["n"] == 22
    assert (shown["right_only_a"], shown["right_only_b"]) == (4, 0)
    assert shown["ea_a"] == pytest.approx(5 / 22) and shown["ea_b"] == pytest.approx(1 / 22)


@pytest.mark.parametrize(
    "stored",
    [
        None,  # no per-question lines at all
        [],
        # Lines of an older shape, without the EA verdict.
        [{"question_id": qid, "outcome": "correct", "error": None} for qid in QUESTION_IDS],
    ],
)
def test_scores_without_a_verdict_per_question_cannot_be_tested(client, make_submission, other_user, stored):
    current = make_submission(**scored_fields(20, outcomes=outcome_lines(RIGHT_A)))
    older = make_submission(user=other_user, **{**scored_fields(11), "outcomes": stored})
    response = client.get(URL, {"a": current.pk, "b": older.pk})
    assert response.status_code == 200 and response.context["paired"].shown is None
    assert response.context["paired"].refusal == "not_computable"
    assert 'id="significance-unavailable"' in significance_block(response)
    assert "The paired test cannot be computed" in significance_block(response)
    answer = api_get(client, {"a": current.pk, "b": older.pk})
    assert answer.status_code == 422 and answer.json()["error"]["code"] == "not_computable"


def test_submissions_on_different_versions_are_not_tested(client, make_submission, other_user, tested):
    newer = version_make(label="demo-2.0")
    other = make_submission(
        version=newer, user=other_user, **scored_fields(11, outcomes=outcome_lines(RIGHT_B))
    )
    response = client.get(URL, {"a": tested[0].pk, "b": other.pk})
    assert response.status_code == 200 and response.context["paired"].refusal == "different_versions"
    assert "needs two submissions scored on the same benchmark version" in significance_block(response)
    answer = api_get(client, {"a": tested[0].pk, "b": other.pk})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "different_versions"
    assert set(answer.json()["error"]) == {"code", "message", "details"}


def test_the_owner_of_a_private_submission_compares_it_without_the_paired_test(
    client, owner, make_submission, tested
):
    """Pair after pair of one's own private files, the counts would tell which answers are right."""
    private = make_submission(
        model_name="Privato", **{**scored_fields(11, outcomes=outcome_lines(RIGHT_B)), "is_public": False}
    )
    query = {"a": tested[0].pk, "b": private.pk}
    client.force_login(owner)
    response = client.get(URL, query)
    assert response.status_code == 200 and response.context["paired"].refusal == "not_public"
    assert 'id="paired-test"' not in response.content.decode()
    assert "shown for two public submissions only" in significance_block(response)
    answer = api_get(client, query, user=owner)
    assert answer.status_code == 403 and answer.json()["error"]["code"] == "not_public"
    assert "right_only_a" not in answer.content.decode()


def test_others_cannot_compare_a_private_or_unreleased_submission(
    client, owner, other_user, make_submission, tested
):
    private = make_submission(**{**scored_fields(11, outcomes=outcome_lines(RIGHT_B)), "is_public": False})
    unreleased = make_submission(
        released_at=timezone.now() + timedelta(minutes=5),
        **scored_fields(11, outcomes=outcome_lines(RIGHT_B)),
    )
    for hidden in (private, unreleased):
        query = {"a": tested[0].pk, "b": hidden.pk}
        assert client.get(URL, query).status_code == 404
        assert api_get(client, query).status_code == 404
        assert api_get(client, query, user=other_user).status_code == 404
        assert api_get(client, query, user=other_user).json()["error"]["code"] == "not_found"
    # The owner sees an unreleased submission neither: when it appears would time its scoring.
    assert api_get(client, {"a": tested[0].pk, "b": unreleased.pk}, user=owner).status_code == 404


def test_staff_get_the_paired_test_of_private_submissions(client, staff, make_submission, tested):
    private = make_submission(**{**scored_fields(11, outcomes=outcome_lines(RIGHT_B)), "is_public": False})
    query = {"a": tested[0].pk, "b": private.pk}
    client.force_login(staff)
    assert client.get(URL, query).context["paired"].shown["right_only_a"] == 11
    answer = api_get(client, query, user=staff)
    assert answer.status_code == 200 and answer.json()["mcnemar_p"] == pytest.approx(0.0224609375)


def test_the_api_answers_anyone_for_public_submissions_with_the_documented_keys(client, tested):
    first, second = tested
    answer = api_get(client, {"a": first.pk, "b": second.pk})
    assert answer.status_code == 200
    body = answer.json()
    assert set(body) == {
        "a",
        "b",
        "version",
        "n",
        "ea_a",
        "ea_b",
        "difference",
        "difference_ci95",
        "mcnemar_p",
        "right_only_a",
        "right_only_b",
        "significant",
        "significantly_better",
        "comparisons",
        "threshold",
        "rule",
    }
    assert body == client.get(URL, {"a": first.pk, "b": second.pk}).context["paired"].shown
    document = client.get(reverse("api:openapi")).json()
    schema = document["components"]["schemas"]["Comparison"]
    assert schema == json_schema(ComparisonJSON) and set(schema["properties"]) == set(body)
    assert violations(body, schema, document) == []
    path = document["paths"]["/api/v1/compare"]["get"]
    assert path["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Comparison"
    }
    assert {"400", "401", "403", "404", "422"} <= set(path["responses"])


def test_the_api_checks_its_token_and_its_request(client, tested):
    first, second = tested
    query = {"a": first.pk, "b": second.pk}
    refused = client.get(API, query, HTTP_AUTHORIZATION="Bearer not-a-token")
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_token"
    for bad in ({"a": first.pk}, {"a": "uno", "b": second.pk}, {"a": -1, "b": second.pk}):
        answer = client.get(API, bad)
        assert answer.status_code == 400 and answer.json()["error"]["code"] == "invalid"
    assert client.post(API, query).status_code == 405
    assert client.get(API, {"a": first.pk, "b": 999999}).status_code == 404


def test_the_api_ignores_the_session(client, owner, make_submission, tested):
    """As every API endpoint: a browser's session is not a token."""
    private = make_submission(**{**scored_fields(11, outcomes=outcome_lines(RIGHT_B)), "is_public": False})
    client.force_login(owner)
    assert client.get(API, {"a": tested[0].pk, "b": private.pk}).status_code == 404


def test_really_scored_submissions_get_the_paired_test_and_no_gold_or_question(client, make_submission, gold):
    wrong = make_submission(predictions={qid: "SELECT 1" for qid in gold}, is_public=True)
    right = make_submission(predictions=gold, is_public=True)
    for submission in (wrong, right):
        submission_score(submission_id=submission.pk)
    query = {"a": wrong.pk, "b": right.pk}
    shown = client.get(URL, query).context["paired"].shown
    answer = api_get(client, query)
    assert answer.json() == shown
    assert shown["right_only_a"] == 0 and shown["right_only_b"] == shown["n"] > 0
    assert shown["mcnemar_p"] < 0.05 and shown["difference_ci95"][1] < 0
    for text in (client.get(URL, query).content, answer.content):
        assert_no_gold(text, gold_texts(), where=API)
        assert not [qid for qid in gold if qid in text.decode()]
