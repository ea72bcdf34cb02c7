from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from evaluation.models import BenchmarkVersion


class BenchmarkCommand(BaseCommand):
    """A command whose `--version` names a benchmark version, as the admin documentation promises.

    Django gives every command a `--version` that prints Django's own version; these commands replace it.
    """

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    @staticmethod
    def version_named(label: str) -> BenchmarkVersion:
        """The version `--version` names; a CommandError when there is none."""
        version = BenchmarkVersion.objects.filter(label=label).first()
        if version is None:
            raise CommandError(f"No benchmark version {label!r}.")
        return version
