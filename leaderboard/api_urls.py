"""The JSON API, /api/v1/: its endpoints (api.py, run_api.py) on the API that api_common.py sets up."""

from leaderboard import api, run_api
from leaderboard.api_common import api as ninja_api
from leaderboard.api_common import urlpatterns as api_urlpatterns

app_name = "api"

ninja_api.add_router("", api.router)
ninja_api.add_router("", run_api.router)

urlpatterns = api_urlpatterns()
