from django.urls import path

from evaluation import views

app_name = "errata"

urlpatterns = [
    path("", views.errata_list, name="list"),
    path("new/", views.erratum_new, name="new"),
    path("mine/", views.errata_mine, name="mine"),
]
