from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from leaderboard import views as leaderboard_views
from termite_site import views
from termite_site.rq_dashboard import dashboard_urlpatterns

urlpatterns = [
    path("", views.home, name="home"),
    path("metrics/", leaderboard_views.metrics, name="metrics"),
    path("about/", views.about, name="about"),
    path("changelog/", leaderboard_views.changelog, name="changelog"),
    path("errata/", include("evaluation.errata_urls")),
    path("robots.txt", views.robots_txt, name="robots_txt"),
    path("healthz", views.healthz, name="healthz"),
    path("accounts/", include("termite_site.accounts.urls")),
    path("benchmark/", include("evaluation.urls")),
    path("staff/", include("evaluation.staff_urls")),
    path("staff/", include("leaderboard.staff_urls")),
    path("api/v1/", include("leaderboard.api_urls")),
    path("", include("leaderboard.urls")),
    path("i18n/setlang/", views.set_language, name="set_language"),
    path("admin/rq/", include((dashboard_urlpatterns(), "django_rq"))),
    # The admin logs in through the site's login, so that its rate limits hold there too (keeping ?next=).
    path("admin/login/", RedirectView.as_view(pattern_name="accounts:login", query_string=True)),
    path("admin/", admin.site.urls),
]
