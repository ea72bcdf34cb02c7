import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "termite_site.settings")
application = get_wsgi_application()

# Only processes that serve the portal load this module: gunicorn, and runserver through WSGI_APPLICATION.
# Not AppConfig.ready(), which every manage.py command (migrate too, before the table exists) and the
# test suite run. Imported after the set-up above, which the models need. (gunicorn --preload would run
# this in the master, before it forks: the portal is not run that way.)
from leaderboard.run_services import requeue_runs_after_start  # noqa: E402
from leaderboard.services import requeue_stuck_after_start  # noqa: E402
from termite_site.serving import freeze_start_up  # noqa: E402

requeue_stuck_after_start()
requeue_runs_after_start()
freeze_start_up()
