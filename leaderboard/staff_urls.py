from django.urls import path

from leaderboard import staff_views

app_name = "leaderboard_staff"

urlpatterns = [
    path("versions/<str:label>/rescore/", staff_views.rescore, name="rescore"),
    path("versions/<str:label>/probing/", staff_views.probing, name="probing"),
    path("versions/<str:label>/probing/hide/", staff_views.probing_hide, name="probing_hide"),
    path("versions/<str:label>/probing/quota/", staff_views.probing_quota, name="probing_quota"),
    path("versions/<str:label>/probing/disable/", staff_views.probing_disable, name="probing_disable"),
    path("submissions/<int:pk>/verify/", staff_views.submission_verify_view, name="submission_verify"),
]
