from django.urls import path

from leaderboard import staff_views

app_name = "leaderboard_staff"

urlpatterns = [
    path("versions/<str:label>/rescore/", staff_views.rescore, name="rescore"),
    path("submissions/<int:pk>/verify/", staff_views.submission_verify_view, name="submission_verify"),
]
