from django.urls import path

from evaluation import staff_views

app_name = "staff"

urlpatterns = [
    path("", staff_views.home, name="home"),
    path("import/", staff_views.import_archive, name="import_archive"),
    path("versions/<str:label>/", staff_views.version, name="version"),
    path("versions/<str:label>/databases/new/", staff_views.database_add, name="database_add"),
    path("imports/<int:pk>/", staff_views.database_import, name="database_import"),
    path(
        "versions/<str:label>/databases/<slug:slug>/schema/",
        staff_views.database_schema,
        name="database_schema",
    ),
    path("versions/<str:label>/publish/", staff_views.publish, name="publish"),
    path("versions/<str:label>/feedback/", staff_views.version_feedback, name="version_feedback"),
    path(
        "versions/<str:label>/participants-see/",
        staff_views.version_participants_see,
        name="version_participants_see",
    ),
    path("questions/<int:pk>/exclusion/", staff_views.question_exclusion, name="question_exclusion"),
    path("reports/<int:pk>/", staff_views.report, name="report"),
    path("errata/", staff_views.errata_open, name="errata"),
    path("questions/<int:pk>/errata/", staff_views.question_errata, name="question_errata"),
    path("errata/<int:pk>/resolve/", staff_views.erratum_resolve, name="erratum_resolve"),
]
