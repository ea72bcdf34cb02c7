"""django-rq's dashboard, under its own exception to the Content-Security-Policy.

Its pages (staff only) style elements inline and follow a row of a job's results by an inline onclick,
which the site's policy refuses. django-csp's per-view decorator relaxes exactly those two on these views
alone: inline styles and inline event handlers, never an inline <script>. The dashboard is served twice, as
django-rq offers it: at /admin/rq/ (termite_site/urls.py) and in the admin, at /admin/django_rq/dashboard/
(termite_site/admin.py).
"""

from __future__ import annotations

from csp.constants import SELF, UNSAFE_INLINE
from csp.decorators import csp_replace
from django.urls import URLPattern
from django_rq.admin import QueueAdmin
from django_rq.urls import get_admin_urlpatterns, get_api_urlpatterns

with_dashboard_policy = csp_replace({"style-src": [SELF, UNSAFE_INLINE], "script-src-attr": [UNSAFE_INLINE]})


def dashboard_urlpatterns() -> list[URLPattern]:
    """django-rq's own patterns (`django_rq.urls`), each page under the dashboard's policy."""
    return get_api_urlpatterns() + get_admin_urlpatterns(view_wrapper=with_dashboard_policy)


class DashboardAdmin(QueueAdmin):
    def get_urls(self) -> list[URLPattern]:
        return [
            URLPattern(url.pattern, with_dashboard_policy(url.callback), url.default_args, url.name)
            for url in super().get_urls()  # type: ignore[no-untyped-call]  # django-rq leaves it unannotated
        ]
