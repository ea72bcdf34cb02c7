"""Staff pages: draft versions, adding databases, excluding questions, reports, publishing, errata."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from evaluation import errata, imports, services
from evaluation.forms import (
    AddDatabaseForm,
    DraftVersionForm,
    ErratumResolveForm,
    ExcludeQuestionForm,
    ImportArchiveForm,
    ParticipantsSeeForm,
    SchemaShownForm,
)
from evaluation.models import (
    BenchmarkVersion,
    Database,
    DatabaseImport,
    Erratum,
    Question,
    ValidationReport,
)
from evaluation.selectors import database_summaries, questions_with_open_errata
from evaluation.sources import SourceError, database_source_from_files
from termite_site.accounts.http import AuthenticatedHttpRequest
from termite_site.decorators import staff_required


def _reference_url() -> str | None:
    return os.environ.get("TERMITE_REFERENCE_MYSQL_URL") or None


def _render_home(
    request: HttpRequest,
    *,
    draft_form: DraftVersionForm | None = None,
    import_form: ImportArchiveForm | None = None,
    status: int = 200,
) -> HttpResponse:
    context = {
        "versions": BenchmarkVersion.objects.all(),
        "draft_form": draft_form or DraftVersionForm(prefix="draft"),
        "import_form": import_form or ImportArchiveForm(prefix="import"),
        "reports": ValidationReport.objects.select_related("version")[:20],
        "open_errata": Erratum.objects.open().count(),
    }
    return render(request, "evaluation/staff/home.html", context, status=status)


@staff_required
def home(request: AuthenticatedHttpRequest) -> HttpResponse:
    draft_form = DraftVersionForm(request.POST or None, prefix="draft")
    if request.method == "POST" and draft_form.is_valid():
        try:
            version = services.version_create_draft(**draft_form.cleaned_data)
        except services.VersionStateError as error:
            draft_form.add_error(None, str(error))
        else:
            messages.success(request, _("Draft %(version)s created.") % {"version": version})
            return redirect("staff:version", label=version.label)
    return _render_home(request, draft_form=draft_form)


@staff_required
@require_POST
def import_archive(request: AuthenticatedHttpRequest) -> HttpResponse:
    form = ImportArchiveForm(request.POST, request.FILES, prefix="import")
    if not form.is_valid():
        return _render_home(request, import_form=form, status=400)
    upload = form.cleaned_data["archive"]
    with tempfile.TemporaryDirectory(prefix="termite-upload-", dir=settings.DATA_DIR) as folder:
        path = Path(folder) / "archive.zip"
        with path.open("wb") as handle:
            for chunk in upload.chunks():
                handle.write(chunk)
        try:
            result = services.benchmark_import(
                archive=path,
                password=form.cleaned_data["password"],
                label=form.cleaned_data["label"],
                publish=form.cleaned_data["publish"],
                reference_url=_reference_url(),
                added_on=form.cleaned_data["added_on"],
                participants_see=form.cleaned_data["participants_see"],
            )
        except SourceError as error:
            # Name the file as the admin knows it, not the temporary copy.
            form.add_error(None, str(error).replace(str(path), upload.name))
            return _render_home(request, import_form=form, status=400)
    if not result.created:
        messages.info(request, _("This archive is already imported; nothing changed."))
    if result.report is not None:
        return redirect("staff:report", pk=result.report.pk)
    return redirect("staff:version", label=result.version.label)


@staff_required
def version(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    version = get_object_or_404(BenchmarkVersion, label=label)
    questions = version.questions.select_related("database").order_by("database__slug", "position")
    return render(
        request,
        "evaluation/staff/version.html",
        {
            "version": version,
            "databases": database_summaries(version=version),
            "questions": questions,
            "reports": version.reports.all(),
            "imports": version.database_imports.select_related("requested_by")[:20],
            "participants_form": ParticipantsSeeForm(initial={"participants_see": version.participants_see}),
        },
    )


@staff_required
def database_add(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    """The upload is read here, so that a bad file is refused at once; building, checking and storing the
    database is a job, whose page shows its progress and its report."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    form = AddDatabaseForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            database, questions = database_source_from_files(
                dump=data["dump"].read(),
                dump_name=data["dump"].name,
                questions=data["questions"].read(),
                questions_name=data["questions"].name,
                schema=data["schema"].read() if data["schema"] else None,
                slug=data["slug"] or None,
                display_name=data["display_name"] or None,
                dialect=data["dialect"],
                description=data["description"],
            )
            job = imports.database_import_create(
                version=version, database=database, questions=questions, requested_by=request.user
            )
        except (SourceError, services.VersionStateError) as error:
            form.add_error(None, str(error))
        else:
            messages.info(
                request, _("Adding %(slug)s: this page shows how far it got.") % {"slug": database.slug}
            )
            return redirect("staff:database_import", pk=job.pk)
    status = 400 if form.errors else 200
    return render(
        request, "evaluation/staff/database_add.html", {"version": version, "form": form}, status=status
    )


@staff_required
def database_import(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    # Without Redis no worker sweeps: a page that reloads until its job ends must see a lost one end.
    imports.database_imports_sweep()
    job = get_object_or_404(DatabaseImport.objects.select_related("version", "report", "requested_by"), pk=pk)
    response = render(request, "evaluation/staff/database_import.html", {"job": job})
    response["Cache-Control"] = "no-store"  # it changes while the job runs
    return response


@staff_required
def report(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    report = get_object_or_404(ValidationReport.objects.select_related("version"), pk=pk)
    return render(request, "evaluation/staff/report.html", {"report": report, "version": report.version})


@staff_required
@require_http_methods(["GET", "POST"])
def publish(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    """GET: the confirmation, since publishing cannot be undone (a page, so that it asks without
    JavaScript too); POST: publish."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    if request.method == "GET":
        return render(request, "evaluation/staff/publish.html", {"version": version})
    try:
        services.version_publish(version=version, carry_submissions=request.POST.get("carry") == "on")
    except services.VersionStateError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, _("%(version)s is published.") % {"version": version})
    return redirect("staff:version", label=version.label)


@staff_required
@require_POST
def version_feedback(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    """Open or close the breakdowns of private submissions: a feedback rule, so published versions too."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    shown = request.POST.get("private_breakdowns") == "on"
    version.set_private_breakdowns(shown)
    if shown:
        messages.success(
            request,
            _("Owners of private submissions on %(version)s now see the breakdowns.") % {"version": version},
        )
    else:
        messages.success(
            request, _("Private submissions on %(version)s show overall scores only.") % {"version": version}
        )
    return redirect("staff:version", label=version.label)


@staff_required
@require_POST
def version_participants_see(request: AuthenticatedHttpRequest, label: str) -> HttpResponse:
    """What participants see of each database: on a published version it may widen to the data, no more."""
    version = get_object_or_404(BenchmarkVersion, label=label)
    form = ParticipantsSeeForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
        return redirect("staff:version", label=version.label)
    try:
        version = services.version_set_participants_see(
            version=version, participants_see=form.cleaned_data["participants_see"]
        )
    except services.VersionStateError as error:
        messages.error(request, str(error))
    else:
        messages.success(
            request,
            _("What participants of %(version)s see of each database: %(what)s.")
            % {"version": version, "what": version.get_participants_see_display()},
        )
    return redirect("staff:version", label=version.label)


@staff_required
@require_POST
def question_exclusion(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    question = get_object_or_404(Question.objects.select_related("version"), pk=pk)
    form = ExcludeQuestionForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
    else:
        try:
            services.question_set_excluded(
                question=question, excluded=form.cleaned_data["excluded"], reason=form.cleaned_data["reason"]
            )
        except services.VersionStateError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, _exclusion_message(question))
    back = request.POST.get("next", "")
    if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}, require_https=False):
        return redirect(back)
    return redirect("staff:version", label=question.version.label)


def _exclusion_message(question: Question) -> str:
    if question.is_scored:
        return _("%(id)s is scored again.") % {"id": question.public_id}
    return _("%(id)s is left out of scoring: %(reason)s") % {
        "id": question.public_id,
        "reason": question.status_reason,
    }


@staff_required
def database_schema(request: AuthenticatedHttpRequest, label: str, slug: str) -> HttpResponse:
    """Which schema participants see of one database: the choice, every difference, the gold it affects."""
    database = get_object_or_404(Database.objects.select_related("version"), version__label=label, slug=slug)
    form = SchemaShownForm(request.POST or None, initial={"shown": database.schema_shown})
    if request.method == "POST" and form.is_valid():
        try:
            report = services.database_schema_choose(database=database, shown=form.cleaned_data["shown"])
        except services.VersionStateError as error:
            messages.error(request, str(error))
        else:
            messages.success(request, report.title)
        return redirect("staff:database_schema", label=label, slug=slug)
    gaps = database.authors_schema_gaps
    affected = database.questions.filter(public_id__in=gaps).order_by("position")
    context = {
        "version": database.version,
        "database": database,
        "form": form,
        "affected": [(question, gaps[question.public_id]) for question in affected],
    }
    return render(
        request, "evaluation/staff/database_schema.html", context, status=400 if form.errors else 200
    )


@staff_required
def errata_open(request: AuthenticatedHttpRequest) -> HttpResponse:
    return render(request, "evaluation/staff/errata.html", {"questions": questions_with_open_errata()})


@staff_required
def question_errata(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """One question's errata, with what staff need to judge them: its gold and its validation findings."""
    question = get_object_or_404(Question.objects.select_related("version", "database"), pk=pk)
    context = {
        "question": question,
        "version": question.version,
        # Staff only: the one page that shows a gold query, so that staff can judge a report against it.
        "gold": question.decrypt_gold(),
        "errata": question.errata.select_related("reporter", "resolved_by"),
        "resolve_form": ErratumResolveForm(),
    }
    response = render(request, "evaluation/staff/question_errata.html", context)
    response["Cache-Control"] = "no-store"
    return response


@staff_required
@require_POST
def erratum_resolve(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    erratum = get_object_or_404(Erratum.objects.select_related("question__version"), pk=pk)
    question = erratum.question
    form = ErratumResolveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "; ".join(str(e) for errors in form.errors.values() for e in errors))
        return redirect("staff:question_errata", pk=question.pk)
    reason = form.cleaned_data["reason"]
    try:
        if form.cleaned_data["decision"] == Erratum.Status.DECLINED:
            errata.erratum_decline(erratum=erratum, by=request.user, staff_reason=reason)
            messages.success(request, _("Declined; the reporter sees your reason."))
        else:
            drafts = errata.erratum_accept(erratum=erratum, by=request.user, public_reason=reason)
            messages.success(request, _accepted_message(question, drafts))
    except errata.ErratumResolvedError as error:
        messages.error(request, str(error))
    return redirect("staff:question_errata", pk=question.pk)


def _accepted_message(question: Question, drafts: list[BenchmarkVersion]) -> str:
    names = ", ".join(str(draft) for draft in drafts)
    if question.version.is_published:
        message = _(
            "Accepted. %(version)s is published and stays as it is; the next draft derived from it leaves "
            "%(id)s out of scoring."
        ) % {"version": question.version, "id": question.public_id}
        if drafts:
            message += " " + _("Left out already in: %(drafts)s.") % {"drafts": names}
        return message
    if drafts:
        return _("Accepted: %(id)s is out of scoring in %(drafts)s.") % {
            "id": question.public_id,
            "drafts": names,
        }
    return _("Accepted: %(id)s was out of scoring already.") % {"id": question.public_id}
