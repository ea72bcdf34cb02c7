from django.urls import path

from leaderboard import api

app_name = "api"

urlpatterns = [
    path("submissions", api.submissions, name="submissions"),
    path("submissions/<int:pk>", api.submission_detail, name="submission_detail"),
    path("errata", api.errata, name="errata"),
    path("leaderboard", api.leaderboard, name="leaderboard"),
    path("compare", api.compare, name="compare"),
    path("openapi.json", api.openapi, name="openapi"),
]
