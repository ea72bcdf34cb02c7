from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from termite_site.accounts.models import User
from termite_site.accounts.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it cannot be shown again)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="command line", help="A name to tell the token apart.")

    def handle(self, *args: Any, username: str, name: str, **options: Any) -> None:
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        _token, raw = api_token_create(user=user, name=name)
        self.stdout.write(raw)
