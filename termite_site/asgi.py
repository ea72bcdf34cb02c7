import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "termite_site.settings")
application = get_asgi_application()

# As in wsgi.py: a serving process sweeps what a dead one left, in the embedded mode, then freezes its
# start-up.
from leaderboard.run_services import requeue_runs_after_start  # noqa: E402
from leaderboard.services import requeue_stuck_after_start  # noqa: E402
from termite_site.serving import freeze_start_up  # noqa: E402

requeue_stuck_after_start()
requeue_runs_after_start()
freeze_start_up()
