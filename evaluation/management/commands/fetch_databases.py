from __future__ import annotations

from typing import Any

from django.core.management.base import CommandError, CommandParser

from evaluation.database_cache import databases_fetch
from evaluation.management.commands._base import BenchmarkCommand


class Command(BenchmarkCommand):
    help = (
        "Fetch into this host's cache (TERMITE_DATABASE_CACHE_DIR) a checked copy of every database of a "
        "version, or of every version, that it lacks or holds altered: prepares a scoring host. The worker "
        "does the same when it starts. Prints each copy and whether it was fetched."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--version", dest="label", help="Label of a benchmark version (default: all)")

    def handle(self, *args: Any, label: str | None = None, **options: Any) -> None:
        versions = [self.version_named(label)] if label else None
        copies = databases_fetch(versions=versions)
        for copy in copies:
            state = "missing" if copy.problem else "fetched" if copy.fetched else "present"
            self.stdout.write(f"{state}  {copy.sha256[:12]}  {copy.name}")
        fetched = sum(copy.fetched for copy in copies)
        missing = [copy for copy in copies if copy.problem]
        self.stdout.write(f"{fetched} fetched, {len(copies) - fetched - len(missing)} already here")
        if missing:
            raise CommandError("\n".join(copy.problem for copy in missing))
