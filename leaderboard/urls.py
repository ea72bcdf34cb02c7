from django.urls import path

from leaderboard import views

app_name = "leaderboard"

urlpatterns = [
    path("submissions/", views.submission_list, name="submission_list"),
    path("submissions/new/", views.submission_new, name="submission_new"),
    path("submissions/<int:pk>/", views.submission_detail, name="submission_detail"),
    path("submissions/<int:pk>/status.json", views.submission_status, name="submission_status"),
    path("submissions/<int:pk>/withdraw/", views.submission_withdraw, name="submission_withdraw"),
]
