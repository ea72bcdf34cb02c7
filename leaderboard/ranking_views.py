"""The public leaderboard: the ranking page, its CSV export, a team's page and the comparison of two
submissions.

These pages are public and indexable. The ranking page and the CSV read from the cache (see
leaderboard/ranking.py), so once warm they cost one query whatever the number of submissions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from django.contrib.auth.models import AnonymousUser
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import get_template
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from evaluation.models import BenchmarkVersion
from evaluation.scoring.scores_json import VisibleScoresJSON
from leaderboard import charts, exports, feedback, presenters, ranking, selectors
from leaderboard.forms import CompareForm, RankingForm, RankingView
from leaderboard.model_card import Approach, Weights
from leaderboard.models import Submission
from termite_site.accounts.models import Team


@dataclass(frozen=True)
class Header:
    column: ranking.Column
    url: str
    aria_sort: str


@dataclass(frozen=True)
class Entry:
    row: ranking.Row
    shown: bool  # False when the visitor's filters hide it: it is sent all the same, hidden


def _published_versions() -> list[BenchmarkVersion]:
    return list(BenchmarkVersion.objects.published().order_by("-published_at", "-pk"))


def _chosen_version(versions: list[BenchmarkVersion], label: str | None) -> BenchmarkVersion | None:
    """The version named by ?version=, else the latest published; 404 for a label not published."""
    if not label:
        return versions[0] if versions else None
    for version in versions:
        if version.label == label:
            return version
    raise Http404("No such published benchmark version.")


@require_GET
def leaderboard(request: HttpRequest) -> HttpResponse:
    versions = _published_versions()
    version = _chosen_version(versions, request.GET.get("version"))
    if version is None:
        return render(request, "leaderboard/ranking.html", {"versions": versions, "version": None})
    page = _page(version)
    board = page.board
    view = RankingForm(request.GET, columns=[column.key for column in board.columns]).view()
    shown = {id(row) for row in ranking.filter_rows(board.rows, **view.filters)}
    html = dict(zip(map(id, board.rows), page.rows_html, strict=True))
    entries = [
        Entry(row, id(row) in shown)
        for row in ranking.sort_rows(board.rows, key=view.sort, descending=view.descending)
    ]
    context = {
        "versions": versions,
        "version": version,
        "board": board,
        "view": view,
        "headers": _headers(request, board, view),
        "entries": entries,
        # Safe: each row was rendered, and escaped, by the row template.
        "tbody": mark_safe("".join(_shown(html[id(e.row)], e.shown) for e in entries)),
        "shown_count": len(shown),
        "groups": list(ranking.COLUMN_GROUPS.items()),
        "weights_choices": Weights.choices,
        "approach_choices": Approach.choices,
        "charts": page.charts,
    }
    return render(request, "leaderboard/ranking.html", context)


def _headers(request: HttpRequest, board: ranking.Leaderboard, view: RankingView) -> list[Header]:
    """Each column's sort link: a click on the sorted column reverses it; scores sort best first."""
    headers = []
    for column in board.columns:
        current = column.key == view.sort
        best_first = column.numeric and column.key != "rank"
        descending = not view.descending if current else best_first
        query = request.GET.copy()
        query["sort"] = column.key
        query["order"] = "desc" if descending else "asc"
        sorted_as = ("descending" if view.descending else "ascending") if current else "none"
        headers.append(Header(column, f"?{query.urlencode()}", sorted_as))
    return headers


@dataclass(frozen=True)
class Page:
    """What every visitor of a version's leaderboard page gets, in one language: the rows, each row's
    <tr> as HTML in ranking order, and the charts. Rendering a thousand rows takes the template engine
    most of a second, so it is done once per version and language and cached; a request only puts the
    rows in its order and marks those its filters hide. One cache entry, so that the HTML always
    matches the rows."""

    board: ranking.Leaderboard
    rows_html: list[str]
    charts: dict


def _page(version: BenchmarkVersion) -> Page:
    def build() -> Page:
        board = ranking.leaderboard_for(version=version)
        template = get_template("leaderboard/_ranking_row.html")
        baseline = _("baseline")
        return Page(
            board=board,
            rows_html=[
                str(template.render({"row": row, "position": i, "after_cutoff": board.shows_after_cutoff}))
                for i, row in enumerate(board.rows)
            ],
            charts={
                "databases": charts.leaderboard_bars(board, baseline_label=baseline),
                "progress": charts.best_over_time(board, best_label=_("best EA"), baseline_label=baseline),
            },
        )

    return ranking.cached(version.label, f"page-{get_language()}", build)


def _shown(html: str, shown: bool) -> str:
    # The row template starts with "<tr" (and says so); the same cached row serves shown and hidden.
    return html if shown else f"<tr hidden{html[3:]}"


@require_GET
def leaderboard_csv(request: HttpRequest, label: str) -> HttpResponse:
    version = get_object_or_404(BenchmarkVersion.objects.published(), label=label)
    body = ranking.cached(label, "csv", lambda: exports.csv_text(ranking.leaderboard_for(version=version)))
    response = HttpResponse(body, content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="termite-leaderboard-{label}.csv"'
    return response


@require_GET
def compare(request: HttpRequest) -> HttpResponse:
    """Two submissions side by side, among those the visitor may open, with a paired test of their EA
    difference where `feedback.paired_comparison` allows one; a picker when none is given."""
    if "a" not in request.GET and "b" not in request.GET:
        return _compare_picker(request, CompareForm(), status=200)
    form = CompareForm(request.GET)
    if not form.is_valid():
        return _compare_picker(request, form, status=400)
    pair = selectors.scored_pair_visible_to(
        viewer=request.user, ids=(form.cleaned_data["a"], form.cleaned_data["b"])
    )
    if pair is None:
        raise Http404("No such scored submission visible to you.")
    first, second = pair
    names = (f"A: {first.model_name} (#{first.pk})", f"B: {second.model_name} (#{second.pk})")
    a, b = (cast(VisibleScoresJSON, feedback.feedback_for(s, request.user).shown) for s in pair)
    comparison = presenters.comparison(a, b)
    context = {
        "first": first,
        "second": second,
        "ci95": (a["overall"]["ea_ci95"], b["overall"]["ea_ci95"]),
        # None where the scores were made before scorer 1.3.0.
        "ts_ci95": (a["overall"].get("ts_ea_ci95"), b["overall"].get("ts_ea_ci95")),
        "comparison": comparison,
        "chart": charts.compare_bars(a, b, names=names) if comparison["per_database"] is not None else None,
        "indexable": all(s.is_public and not s.is_hidden for s in (first, second)),
        # McNemar's test and the paired bootstrap interval, or why there are none.
        "paired": feedback.paired_comparison(first, second, request.user),
    }
    return render(request, "leaderboard/compare.html", context)


def _compare_picker(request: HttpRequest, form: CompareForm, *, status: int) -> HttpResponse:
    """The latest ranking's submissions and the visitor's own scored ones, to choose two from."""
    version = BenchmarkVersion.objects.latest_published()
    choices = []
    if version is not None:
        choices = [
            (row.submission_id, f"#{row.submission_id} {row.model_name} · {version.label}")
            for row in ranking.leaderboard_rows(version=version)
            if not row.baseline
        ]
    if request.user.is_authenticated:
        listed = {pk for pk, _label in choices}
        own = (
            Submission.objects.filter(
                user=request.user, status=Submission.Status.SCORED, withdrawn_at__isnull=True
            )
            .select_related("version")
            .only("pk", "model_name", "version__label", "status", "released_at", "user_id")
        )
        choices += [
            (s.pk, f"#{s.pk} {s.model_name} · {s.version.label}")
            for s in own
            if s.pk not in listed and feedback.visible_status(s, request.user) == Submission.Status.SCORED
        ]
    return render(request, "leaderboard/compare.html", {"form": form, "choices": choices}, status=status)


@require_GET
def team(request: HttpRequest, slug: str) -> HttpResponse:
    """A team's public page: its members' usernames and its public submissions, as anyone sees them
    (a member's private submissions stay theirs alone, even here)."""
    team = get_object_or_404(Team, slug=slug)
    public = (
        Submission.objects.visible_to(AnonymousUser())
        .filter(team=team)
        .select_related("version")
        .defer("predictions", "outcomes")
        .order_by("-created_at", "-pk")
    )
    context = {
        "team": team,
        "members": team.memberships.select_related("user").order_by("joined_at", "pk"),
        "rows": [(submission, feedback.feedback_for(submission, AnonymousUser())) for submission in public],
        "is_member": team.has_member(request.user),
    }
    return render(request, "leaderboard/team.html", context)
