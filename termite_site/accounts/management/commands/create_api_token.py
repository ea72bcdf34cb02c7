from django.core.management.base import BaseCommand, CommandError

from termite_site.accounts.models import User
from termite_site.accounts.services import api_token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it cannot be shown again)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="command line", help="A name to tell the token apart.")

    def handle(self, *args, username: str, name: str, **options):
        user = User.objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        _token, raw = api_token_create(user=user, name=name)
        self.stdout.write(raw)
