"""The size caps of a predictions upload, declared once. Plain Python: settings.py reads them as the
defaults the environment may override (TERMITE_MAX_UPLOAD_BYTES, TERMITE_MAX_SQL_CHARS), and
evaluation/predictions.py takes them as its own defaults where no setting is passed (scripts, tests).
"""

from __future__ import annotations

MAX_UPLOAD_BYTES = 5 * 1024 * 1024  # a predictions file, and what a zip of them may unzip to
MAX_SQL_CHARS = 20_000  # one predicted query
