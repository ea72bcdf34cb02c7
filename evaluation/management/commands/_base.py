from __future__ import annotations

from django.core.management.base import BaseCommand


class BenchmarkCommand(BaseCommand):
    """A command whose `--version` names a benchmark version, as the admin documentation promises.

    Django gives every command a `--version` that prints Django's own version; these commands replace it.
    """

    def create_parser(self, prog_name, subcommand, **kwargs):
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)
