"""django-rq jobs of the benchmark store: each takes a primary key, loads the row and calls a service."""

from __future__ import annotations

from evaluation.imports import database_import_run


def add_database(job_id: int) -> str:
    return database_import_run(job_id=job_id)
