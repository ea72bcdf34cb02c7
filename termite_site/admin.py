from __future__ import annotations

from django.contrib import admin
from django_rq.models import Dashboard

from termite_site.rq_dashboard import DashboardAdmin

# In place of django-rq's own registration (off: RQ_SHOW_ADMIN_LINK), with its pages under their policy.
admin.site.register(Dashboard, DashboardAdmin)
