"""A serving process, once started, has every view loaded and its start-up out of the garbage collector's
way (termite_site/serving.py, called by termite_site/wsgi.py)."""

from __future__ import annotations

import gc
import sys

from termite_site.serving import freeze_start_up


def test_start_up_is_loaded_then_frozen():
    try:
        freeze_start_up()
        assert gc.get_freeze_count() > 10_000
        assert "leaderboard.ranking_views" in sys.modules
    finally:
        gc.unfreeze()
