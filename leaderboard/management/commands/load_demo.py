from __future__ import annotations

import secrets

from django.conf import settings
from django.core.management.base import BaseCommand
from django.db import transaction

from evaluation.models import BenchmarkVersion
from evaluation.services import demo_benchmark_load
from leaderboard.services import demo_submissions_load
from termite_site.accounts.models import User

DEMO_ADMIN = "admin"


class Command(BaseCommand):
    help = "Load the demo content and make sure a demo admin exists; prints the admin's credentials."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="Say what would be done, change nothing.")

    def handle(self, *args, dry_run: bool, **options):
        if dry_run:
            exists = User.objects.filter(username=DEMO_ADMIN).exists()
            self.stdout.write(f"Demo admin {DEMO_ADMIN!r}: {'present' if exists else 'would be created'}.")
            return
        with transaction.atomic():
            password = self._demo_admin_password()
            version = demo_benchmark_load()
        if version is None:
            self.stdout.write("Demo benchmark: already loaded.")
            version = BenchmarkVersion.objects.get(label="demo-1.0")
        else:
            self.stdout.write(f"Demo benchmark: loaded {version} ({version.questions.count()} questions).")
        made = demo_submissions_load(version=version)
        self.stdout.write(f"Demo submissions: {made} scored." if made else "Demo submissions: already there.")
        self.stdout.write(self.style.SUCCESS(f"Demo admin: username {DEMO_ADMIN!r}, password {password!r}"))

    def _demo_admin_password(self) -> str:
        # The password is kept beside the other generated secrets so that every start can print it.
        path = settings.DATA_DIR / "secrets" / "demo-admin-password"
        user = User.objects.filter(username=DEMO_ADMIN).first()
        if user is not None and path.exists():
            return path.read_text().strip()
        password = secrets.token_urlsafe(12)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text(password)
        path.chmod(0o600)
        if user is None:
            User.objects.create_superuser(DEMO_ADMIN, "admin@example.org", password)
        else:
            user.set_password(password)
            user.save(update_fields=["password"])
        return password
