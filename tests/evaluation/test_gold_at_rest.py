"""Gold SQL is encrypted in the database and readable only with the configured key."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command
from django.db import connection

from evaluation.gold import GoldKeyError, encrypt_gold
from evaluation.models import Question

pytestmark = pytest.mark.django_db


def raw_gold_columns() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT gold_encrypted, gold_sqlite_encrypted FROM evaluation_question")
        return cursor.fetchall()


def test_the_raw_columns_hold_no_sql(demo_version):
    rows = raw_gold_columns()
    assert len(rows) == demo_version.questions.count() > 0
    for written, transpiled in rows:
        for value in (written, transpiled):
            assert value.startswith("gAAAA")  # a Fernet token
            assert not any(word in value.upper() for word in ("SELECT", " FROM ", "WHERE"))


def test_gold_decrypts_back_for_the_scorer(demo_version):
    question = demo_version.questions.first()
    assert question.decrypt_gold().upper().lstrip("( ").startswith(("SELECT", "WITH"))


def test_gold_encrypted_with_another_key_is_a_clear_error(settings):
    token = encrypt_gold("SELECT 1")
    settings.TERMITE_GOLD_KEY = Fernet.generate_key().decode()
    from evaluation.gold import decrypt_gold

    with pytest.raises(GoldKeyError, match="cannot be decrypted with TERMITE_GOLD_KEY"):
        decrypt_gold(token)


def test_rotating_the_key_re_encrypts_every_question(demo_version, settings, capsys):
    old_key = settings.TERMITE_GOLD_KEY
    golds = {q.pk: q.decrypt_gold() for q in Question.objects.all()}
    new_key = Fernet.generate_key().decode()
    settings.TERMITE_GOLD_KEY = f"{new_key},{old_key}"
    call_command("rotate_gold_key")
    assert f"Re-encrypted the gold of {len(golds)} questions." in capsys.readouterr().out
    settings.TERMITE_GOLD_KEY = new_key
    assert {q.pk: q.decrypt_gold() for q in Question.objects.all()} == golds


def test_rotating_without_the_old_key_fails_and_changes_nothing(demo_version, settings):
    before = raw_gold_columns()
    settings.TERMITE_GOLD_KEY = Fernet.generate_key().decode()
    with pytest.raises(CommandError, match="cannot be decrypted"):
        call_command("rotate_gold_key")
    assert raw_gold_columns() == before
