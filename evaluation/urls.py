from django.urls import path

from evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("", views.version_list, name="version_list"),
    path("<str:label>/", views.version_detail, name="version_detail"),
    path("<str:label>/task-bundle.zip", views.task_bundle, name="task_bundle"),
    path("<str:label>/<str:slug>/", views.database_detail, name="database_detail"),
]
