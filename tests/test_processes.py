"""The helpers that start the portal's processes for the process lane."""

import pytest

from tests.processes import embedded_env, serve

pytestmark = pytest.mark.processes


def test_a_gunicorn_that_cannot_start_fails_the_test_at_once_with_its_log(tmp_path):
    env = {**embedded_env(tmp_path), "DJANGO_SETTINGS_MODULE": "termite_site.no_such_settings"}
    exited = r"(?s)gunicorn exited with \d+; its log:.*no_such_settings"
    with pytest.raises(AssertionError, match=exited), serve(env, log=tmp_path / "gunicorn.log"):
        pass
