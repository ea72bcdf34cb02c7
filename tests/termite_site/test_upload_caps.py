"""The caps of a predictions upload are declared once (termite_site/upload_caps.py): the settings' defaults
and the parser's own defaults are those."""

from __future__ import annotations

import inspect
import os

import pytest
from django.conf import settings

from evaluation.predictions import parse_predictions
from termite_site import upload_caps


def test_the_parser_defaults_to_the_declared_caps():
    defaults = {
        name: parameter.default for name, parameter in inspect.signature(parse_predictions).parameters.items()
    }
    assert defaults["max_file_bytes"] == upload_caps.MAX_UPLOAD_BYTES == 5 * 1024 * 1024
    assert defaults["max_sql_chars"] == upload_caps.MAX_SQL_CHARS == 20_000


@pytest.mark.skipif(
    {"TERMITE_MAX_UPLOAD_BYTES", "TERMITE_MAX_SQL_CHARS"} & set(os.environ),
    reason="caps set in the environment",
)
def test_the_settings_default_to_the_declared_caps():
    assert settings.TERMITE_MAX_UPLOAD_BYTES == upload_caps.MAX_UPLOAD_BYTES
    assert settings.TERMITE_MAX_SQL_CHARS == upload_caps.MAX_SQL_CHARS
