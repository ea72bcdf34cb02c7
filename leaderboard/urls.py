from django.urls import path

from leaderboard import ranking_views, run_views, views

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
    path("submissions/<int:pk>/card/", views.submission_card_edit, name="submission_card_edit"),
    path("runs/", run_views.run_list, name="run_list"),
    path("runs/new/", run_views.run_new, name="run_new"),
    path("runs/<int:pk>/", run_views.run_detail, name="run_detail"),
    path("runs/<int:pk>/transcript.jsonl", run_views.run_transcript, name="run_transcript"),
    path("runs/<int:pk>/cancel/", run_views.run_cancel, name="run_cancel"),
    path("runs/<int:pk>/delete-key/", run_views.run_delete_key, name="run_delete_key"),
    path("runs/<int:pk>/delete/", run_views.run_delete, name="run_delete"),
    path("runs/<int:pk>/submit/", run_views.run_submit, name="run_submit"),
]
