from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from evaluation.gold import GoldKeyError
from evaluation.services import gold_key_rotate


class Command(BaseCommand):
    help = (
        "Re-encrypt all stored gold with the first key of TERMITE_GOLD_KEY. To rotate: set "
        "TERMITE_GOLD_KEY=NEW,OLD, run this, then drop OLD."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            count = gold_key_rotate()
        except GoldKeyError as error:
            raise CommandError(str(error)) from None
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted the gold of {count} questions."))
