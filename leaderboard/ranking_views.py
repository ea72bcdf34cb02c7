"""The public leaderboard: the ranking page, its CSV export, a team's page and the comparison of two
submissions.

These pages are public and indexable. The ranking page and the CSV read from the cache (see
leaderboard/ranking.py), so once warm they cost one query whatever the number of submissions.
"""

from __future__ import annotations

import functools
import hashlib
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.contrib.auth.models import AnonymousUser
from django.contrib.messages import get_messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template import engines
from django.template.loader import render_to_string
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from evaluation.models import BenchmarkVersion
from evaluation.scoring.scores_json import VisibleScoresJSON
from leaderboard import charts, exports, feedback, jinja_environment, presenters, ranking, selectors
from leaderboard.forms import CompareForm, RankingForm, RankingView
from leaderboard.model_card import Approach, Weights
from leaderboard.models import Submission
from termite_site import cached_page
from termite_site.accounts import known_visitors
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


# Rows per page: a tenth of the HTML for 1,000 submissions; ?all=1 gives every row, for the browser's
# own sorting and filtering.
PAGE_SIZE = 100


@dataclass(frozen=True)
class Pagination:
    paged: bool  # False on the page of every row (?all=1), and when all rows fit on one page
    number: int
    count: int
    first: int  # 1-based, of the rows that match the filters
    last: int
    total: int
    previous_url: str
    next_url: str
    everything_url: str
    by_page_url: str
    page_size: int = PAGE_SIZE


@require_GET
def leaderboard(request: HttpRequest) -> HttpResponse:
    """The ranking, cached whole per version, language and query (see termite_site/cached_page.py), and kept
    per address: for an anonymous visitor the whole answer, served without rendering anything; for another
    visitor the page without its nav, served with their nav alone rendered."""
    anonymous = cached_page.anonymous_visit(request)
    address = f"{get_language()} {request.get_full_path()}"

    def nav() -> str:
        return cached_page.visitor_nav(request)

    kept, token, has_message = _kept_answer(request, address, anonymous=anonymous, nav=nav)
    if kept is not None:
        return kept
    with ranking.staleness() as served_stale:
        versions = _published_versions()
        version = _chosen_version(versions, request.GET.get("version"))
        if version is None:
            return render(request, "leaderboard/ranking.html", {"versions": versions, "version": None})
        # Read (or built) once: after a change, the columns' build makes the page, which the context then
        # needs too; reading it back from the cache would unpickle a thousand rows again.
        page_of_version = functools.cache(functools.partial(_page, version))
        columns = ranking.cached(
            version.label, _COLUMNS, lambda: [c.key for c in page_of_version().board.columns]
        )
        view = RankingForm(request.GET, columns=columns).view()
        # Links keep ?version= only where it was asked for: the latest version's page has one address.
        named = version.label if request.GET.get("version") else ""
        if has_message:
            return render(
                request,
                "leaderboard/ranking.html",
                _context(versions, version, view, named, page_of_version()),
            )

        def build() -> cached_page.CachedPage:
            context = {
                **_context(versions, version, view, named, page_of_version()),
                "nav_marker": mark_safe(cached_page.NAV_MARKER),
            }
            # No request: nothing of this visitor (name, CSRF token, messages) can reach the cached body.
            return cached_page.CachedPage.of(render_to_string("leaderboard/ranking_cached.html", context))

        # Free text would make a cache entry per search typed: a search is rendered each time, from cached
        # rows.
        query = _query(named, view)
        kind = f"response-{get_language()}-{hashlib.sha256(query.encode()).hexdigest()[:32]}"
        page = build() if view.q else ranking.cached(version.label, kind, build)
        response = cached_page.respond(request, page, nav=nav)
        # Kept only at the page's one address (any other spelling of the query would be an entry per
        # spelling), and only when made of the current ranking.
        canonical = request.get_full_path() == request.path + (f"?{query}" if query else "")
        if not view.q and canonical and not served_stale():
            # Made of these: while a request builds any of them after a change, the page kept before it is
            # served, rather than made again, from stale parts, by every request meanwhile.
            made_of = (kind, _COLUMNS, _page_kind(), ranking.ROWS)
            if anonymous:
                whole = cached_page.WholePage.of(response, token=token)
                ranking.whole_page_keep(address, whole, label=version.label, kinds=made_of)
            else:
                ranking.visitor_page_keep(address, page, token=token, label=version.label, kinds=made_of)
        return response


def _kept_answer(
    request: HttpRequest, address: str, *, anonymous: bool, nav: Callable[[], str]
) -> tuple[HttpResponse | None, str, bool]:
    """The answer from the page kept at `address`, if one holds and may be served; the token to keep a new
    one under; and whether the visitor has a message waiting, which is for them alone: never in a kept
    page. A signed-in visitor is recognised in the same read of the cache as the page, when known."""
    if anonymous:
        whole, token = ranking.whole_page(address)
        return (cached_page.serve_whole(request, whole) if whole is not None else None), token, False
    kept, token, stamps = ranking.visitor_page(address, also=known_visitors.stamp_keys(request))
    known_visitors.recognise(request, stamps)
    if known_visitors.may_have_messages(request) and get_messages(request):
        return None, "", True
    return (cached_page.respond(request, kept, nav=nav) if kept is not None else None), token, False


def _context(
    versions: list[BenchmarkVersion], version: BenchmarkVersion, view: RankingView, named: str, page: Page
) -> dict[str, Any]:
    board = page.board
    shown = {id(row) for row in ranking.filter_rows(board.rows, **view.filters)}
    ordered = ranking.sort_rows(board.rows, key=view.sort, descending=view.descending)
    html = dict(zip(map(id, board.rows), page.rows_html, strict=True))
    pagination = _pagination(named, view, total=len(board.rows), matching=len(shown))
    if pagination.paged:
        matching = [row for row in ordered if id(row) in shown]
        entries = [Entry(row, True) for row in matching[pagination.first - 1 : pagination.last]]
    else:  # every row, those the filters hide sent hidden, so that the browser can show them again
        entries = [Entry(row, id(row) in shown) for row in ordered]
    return {
        "versions": versions,
        "version": version,
        "board": board,
        "view": view,
        "headers": _headers(named, board, view),
        "entries": entries,
        # Safe: each row was rendered, and escaped, by the row template.
        "tbody": mark_safe("".join(_shown(html[id(e.row)], e.shown) for e in entries)),
        "shown_count": len(shown),
        "pagination": pagination,
        "groups": list(ranking.COLUMN_GROUPS.items()),
        "folded": [label for group, label in ranking.COLUMN_GROUPS.items() if group in view.hidden],
        "folded_by_default": " ".join(ranking.FOLDED_GROUPS),
        "unfold_url": f"?{_query(named, view, hide=ranking.NO_GROUP_HIDDEN)}",
        "weights_choices": Weights.choices,
        "approach_choices": Approach.choices,
        "charts": page.charts,
    }


def _query(named: str, view: RankingView, **changes: str) -> str:
    """The query string of `view`, with `changes`: its parameters in one order, defaults left out, so that
    a page has one address and one cache entry."""
    values: dict[str, str | list[str]] = {
        "version": named,
        "q": view.q,
        "weights": view.weights,
        "approach": view.approach,
        "size": view.size,
        "verified": "1" if view.verified else "",
        "portal_run": "1" if view.portal_run else "",
        "team": view.team,
        "sort": "" if view.sort == "rank" and not view.descending else view.sort,
        "order": "desc" if view.descending else "",
        "hide": _hide_parameter(view.hidden),
        "all": "1" if view.everything else "",
        "page": str(view.page) if view.page > 1 else "",
        **changes,
    }
    return urlencode(
        [(name, value) for name, values_ in values.items() for value in _listed(values_) if value]
    )


def _hide_parameter(hidden: tuple[str, ...]) -> list[str]:
    """`?hide=`: nothing for the folded default, `none` for every group shown."""
    if hidden == ranking.FOLDED_GROUPS:
        return []
    return list(hidden) or [ranking.NO_GROUP_HIDDEN]


def _listed(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def _pagination(named: str, view: RankingView, *, total: int, matching: int) -> Pagination:
    paged = total > PAGE_SIZE and not view.everything
    count = max(1, -(-matching // PAGE_SIZE)) if paged else 1
    number = min(view.page, count) if paged else 1
    first, last = (
        ((number - 1) * PAGE_SIZE + 1, min(number * PAGE_SIZE, matching)) if paged else (1, matching)
    )

    def url(**changes: str) -> str:
        return f"?{_query(named, view, **changes)}"

    return Pagination(
        paged=paged,
        number=number,
        count=count,
        first=first,
        last=last,
        total=matching,
        previous_url=url(page=str(number - 1) if number > 2 else "") if paged and number > 1 else "",
        next_url=url(page=str(number + 1)) if paged and number < count else "",
        everything_url=url(all="1", page="") if total > PAGE_SIZE else "",
        by_page_url=url(all="", page="") if total > PAGE_SIZE else "",
    )


def _headers(named: str, board: ranking.Leaderboard, view: RankingView) -> list[Header]:
    """Each column's sort link: a click on the sorted column reverses it; scores sort best first. A new
    order starts again from the first page."""
    headers = []
    for column in board.columns:
        current = column.key == view.sort
        best_first = column.numeric and column.key != "rank"
        descending = not view.descending if current else best_first
        query = _query(named, view, sort=column.key, order="desc" if descending else "asc", page="")
        sorted_as = ("descending" if view.descending else "ascending") if current else "none"
        headers.append(Header(column, f"?{query}", sorted_as))
    return headers


@dataclass(frozen=True)
class Page:
    """What every visitor of a version's leaderboard page gets, in one language: the rows, each row's
    <tr> as HTML in ranking order, and the charts. The rows are the largest part of a render (Jinja2, in
    one pass: templates/jinja2/leaderboard/_ranking_rows.html), so they are rendered once per version and
    language and cached; a request only puts the rows in its order and marks those its filters hide. One
    cache entry, so that the HTML always matches the rows."""

    board: ranking.Leaderboard
    rows_html: list[str]
    charts: dict[str, dict[str, Any] | None]


def _page(version: BenchmarkVersion) -> Page:
    def build() -> Page:
        board = ranking.leaderboard_for(version=version)
        baseline = _("baseline")
        return Page(
            board=board,
            rows_html=rows_html(board),
            charts={
                "databases": charts.leaderboard_bars(board, baseline_label=baseline),
                "progress": charts.best_over_time(board, best_label=_("best EA"), baseline_label=baseline),
            },
        )

    return ranking.cached(version.label, _page_kind(), build)


def _page_kind() -> str:
    return f"page-{get_language()}"


_COLUMNS = "columns"


def rows_html(board: ranking.Leaderboard) -> list[str]:
    """Each row's <tr>, in the board's order, in the active language. A row rendered before, in this
    process, with the same content and the same rows better than it, is not rendered again: a change of
    the ranking (one new row, most often) renders the rows it changed, not a thousand."""
    better = board.better_names()
    context = (get_language(), board.shows_after_cutoff)
    keys = [_row_key(context, row, better.get(row.submission_id or 0, [])) for row in board.rows]
    found = {key: _ROWS_RENDERED.get(key) for key in keys}
    missing = [row for key, row in zip(keys, board.rows, strict=True) if found[key] is None]
    if missing:
        rendered = (
            engines["jinja2"]
            .get_template("leaderboard/_ranking_rows.html")
            .render(
                {
                    "rows": missing,
                    "better_names": better,
                    "after_cutoff": board.shows_after_cutoff,
                    "position": mark_safe(_POSITION),
                    "separator": mark_safe(_ROW_END),
                    "submission_url": jinja_environment.per_row_url("leaderboard:submission_detail"),
                    "team_url": jinja_environment.per_row_url("leaderboard:team"),
                }
            )
        )
        new = dict(
            zip((key for key in keys if found[key] is None), rendered.split(_ROW_END)[:-1], strict=True)
        )
        found.update(new)
        if len(_ROWS_RENDERED) + len(new) > _ROWS_KEPT:
            _ROWS_RENDERED.clear()
        _ROWS_RENDERED.update(new)
    return [cast(str, found[key]).replace(_POSITION, str(place), 1) for place, key in enumerate(keys)]


def _row_key(context: tuple[object, ...], row: ranking.Row, better: list[str]) -> bytes:
    """The key of `row`'s <tr> among the rows rendered: the page's context, everything the row holds and
    the names of the rows better than it, pickled, which tells apart what the page does (1 is not 1.0,
    True is not 1). For a thousand rows all rendered before, `rows_html` takes 9 to 12 ms so, against 26 ms
    with a tuple of each field's type and value as the key, which cost as much to hash as to make."""
    return pickle.dumps((context, vars(row), better), pickle.HIGHEST_PROTOCOL)


# The rows rendered in this process, by their content: a thousand rows in two languages are a few MB.
_ROWS_RENDERED: dict[bytes, str] = {}
_ROWS_KEPT = 5000
# Where a row's place goes. No row can hold it, nor the separator below: every text a row shows is
# escaped, and "<" with it.
_POSITION = "<!--position-->"
_ROW_END = "<!--row end-->"


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
        "paired": feedback.paired_comparison(
            first, second, request.user, rule=ranking.rank_rule_for(first, second)
        ),
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
