from django.urls import path

from leaderboard import ranking_views, views

app_name = "leaderboard"

urlpatterns = [
    path("leaderboard/", ranking_views.leaderboard, name="leaderboard"),
    path("leaderboard/compare/", ranking_views.compare, name="compare"),
    path("leaderboard/<str:label>.csv", ranking_views.leaderboard_csv, name="leaderboard_csv"),
    path("teams/<slug:slug>/", ranking_views.team, name="team"),
    path("submissions/", views.submission_list, name="submission_list"),
    path("submissions/new/", views.submission_new, name="submission_new"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission_detail"),
    path("submissions/<int:pk>/status.json", views.submission_status, name="submission_status"),
    path("submissions/<int:pk>/withdraw/", views.submission_withdraw, name="submission_withdraw"),
]
