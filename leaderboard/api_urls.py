from django.urls import path

from leaderboard import api, run_api

app_name = "api"

urlpatterns = [
    path("submissions", api.submissions, name="submissions"),
    path("submissions/<int:pk>", api.submission_detail, name="submission_detail"),
    path("runs", run_api.runs, name="runs"),
    path("runs/<int:pk>", run_api.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel", run_api.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/submit", run_api.run_submit, name="run_submit"),
    path("errata", api.errata, name="errata"),
    path("leaderboard", api.leaderboard, name="leaderboard"),
    path("compare", api.compare, name="compare"),
    path("openapi.json", api.openapi, name="openapi"),
]
