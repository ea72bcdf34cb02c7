"""The Italian translation: language choice (default, set_language cookie, Accept-Language), the pages
rendered in Italian, and a catalogue that is complete and compiled.

To refresh the catalogue after changing translatable strings:

    DEBUG=1 .venv/bin/python manage.py makemessages -l it --ignore=.venv --ignore=var
    (translate the new or fuzzy entries in locale/it/LC_MESSAGES/django.po)
    DEBUG=1 .venv/bin/python manage.py compilemessages --ignore=.venv

and commit both django.po and django.mo.
"""

from __future__ import annotations

import gettext
import re
from dataclasses import dataclass, field
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

pytestmark = pytest.mark.django_db

CATALOGUE = Path(settings.BASE_DIR) / "locale" / "it" / "LC_MESSAGES"
PO_FILE = CATALOGUE / "django.po"
MO_FILE = CATALOGUE / "django.mo"

HOME_EN = [
    "Termite: a Text-to-SQL benchmark no model has seen",
    "How to take part",
    "Make your submission public to appear on the leaderboard.",
    "Log in",
    "Sign up",
]
HOME_IT = [
    "Termite: un benchmark Text-to-SQL che nessun modello ha mai visto",
    "Come partecipare",
    "Rendere pubblica la sottomissione per comparire in classifica.",
    "query SQL di riferimento",
    "Regole",
    "Accedi",
    "Registrati",
    "Termite è un benchmark Text-to-SQL per l'italiano",
    "<title>Portale Termite</title>",
]


def _text(response) -> str:
    assert response.status_code == 200
    return unescape(response.content.decode())


def _assert_italian(text: str) -> None:
    assert '<html lang="it">' in text
    for phrase in HOME_IT:
        assert phrase in text
    for phrase in HOME_EN:
        assert phrase not in text


def test_the_home_page_is_english_by_default(client):
    text = _text(client.get("/"))
    assert '<html lang="en">' in text
    for phrase in HOME_EN:
        assert phrase in text
    assert "Come partecipare" not in text


def test_choosing_italian_in_the_language_switch_translates_the_site(client):
    response = client.post("/i18n/setlang/", {"language": "it", "next": "/"})
    assert response.status_code == 302
    assert response.url == "/"
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "it"
    text = _text(client.get("/"))
    _assert_italian(text)
    assert '<option value="it" selected>' in text

    client.post("/i18n/setlang/", {"language": "en", "next": "/"})
    assert "How to take part" in _text(client.get("/"))


def test_the_jsonl_step_is_translated(client):
    # templates/site/home.html writes this string with \" inside {% translate "..." %}, which
    # makemessages cannot extract: the Italian comes from a hand-added entry in django.po. If this
    # fails after a makemessages run, the entry went obsolete: quote that template string with
    # single quotes (or restore the entry).
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    text = _text(client.get("/"))
    assert 'in un file JSONL: un oggetto {"question_id": …, "sql": …} per riga.' in text
    assert "per line." not in text


def test_an_italian_browser_gets_italian(client):
    text = _text(client.get("/", headers={"accept-language": "it-IT,it;q=0.9,en;q=0.5"}))
    _assert_italian(text)


def test_the_cookie_wins_over_the_browser_language(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    text = _text(client.get("/", headers={"accept-language": "it"}))
    assert "How to take part" in text


def test_the_login_page_is_in_italian(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    text = _text(client.get(reverse("accounts:login")))
    assert "<title>Accedi</title>" in text
    assert "<h1>Accedi</h1>" in text
    assert "Password dimenticata?" in text
    assert "Crea un account" in text
    assert "Nome utente" in text  # the form's label, from Django's own catalogue
    assert "Forgot your password?" not in text


def test_a_failed_login_explains_itself_in_italian(client, owner):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    response = client.post(reverse("accounts:login"), {"username": owner.username, "password": "wrong"})
    text = _text(response)
    assert "Inserisci nome utente e password corretti" in text


def test_the_sign_up_page_is_in_italian(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    text = _text(client.get(reverse("accounts:signup")))
    assert "<title>Registrati</title>" in text
    assert "<h1>Crea un account</h1>" in text
    assert "Indirizzo e-mail" in text
    assert "Affiliazione" in text
    assert "Università, azienda o laboratorio; compare nelle sottomissioni pubbliche." in text
    assert '<button type="submit">Registrati</button>' in text


def test_signing_up_in_italian_welcomes_by_name(client):
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    password = "correct-horse-battery-staple"
    response = client.post(
        reverse("accounts:signup"),
        {"username": "dario", "email": "dario@example.org", "password1": password, "password2": password},
        follow=True,
    )
    text = _text(response)
    assert "Le diamo il benvenuto sul Portale Termite, dario." in text
    assert "<title>Profilo personale</title>" in text
    assert "Token API" in text


# --- The catalogue itself -------------------------------------------------------------------------

_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}


def _unquote(literal: str) -> str:
    assert literal.startswith('"') and literal.endswith('"'), literal
    return re.sub(r"\\(.)", lambda m: _ESCAPES[m.group(1)], literal[1:-1])


@dataclass
class Entry:
    line: int
    msgctxt: str | None = None
    msgid: str = ""
    msgid_plural: str | None = None
    msgstr: dict[int, str] = field(default_factory=dict)
    flags: set[str] = field(default_factory=set)

    @property
    def fuzzy(self) -> bool:
        return "fuzzy" in self.flags

    def mo_items(self):
        """The (key, value) pairs Python's gettext builds for this entry from a compiled .mo."""
        key = self.msgid if self.msgctxt is None else f"{self.msgctxt}\x04{self.msgid}"
        if self.msgid_plural is None:
            yield key, self.msgstr[0]
        else:
            for n, text in self.msgstr.items():
                yield (key, n), text


def parse_po(path: Path) -> list[Entry]:
    """The active entries of a .po file (obsolete `#~` entries are skipped), header included."""
    entries: list[Entry] = []
    entry: Entry | None = None
    target: tuple[str, int] | None = None
    pending_flags: set[str] = set()
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line:
            target = None
            continue
        if line.startswith("#~"):
            continue
        if line.startswith("#,"):
            pending_flags |= {flag.strip() for flag in line[2:].split(",")}
            continue
        if line.startswith("#"):
            continue
        keyword, _, rest = line.partition(" ")
        if line.startswith('"'):
            assert entry is not None and target is not None, f"{path}:{number}: stray string"
            name, index = target
            if name == "msgstr":
                entry.msgstr[index] += _unquote(line)
            else:
                setattr(entry, name, (getattr(entry, name) or "") + _unquote(line))
            continue
        if keyword in ("msgctxt", "msgid") and (entry is None or entry.msgstr):
            entry = Entry(line=number, flags=pending_flags)
            entries.append(entry)
            pending_flags = set()
        assert entry is not None, f"{path}:{number}: {keyword} before any msgid"
        if keyword in ("msgctxt", "msgid", "msgid_plural"):
            setattr(entry, keyword, _unquote(rest))
            target = (keyword, 0)
        elif match := re.fullmatch(r"msgstr(?:\[(\d+)\])?", keyword):
            index = int(match.group(1) or 0)
            entry.msgstr[index] = _unquote(rest)
            target = ("msgstr", index)
        else:
            raise AssertionError(f"{path}:{number}: cannot parse {raw!r}")
    return entries


def _messages() -> list[Entry]:
    return [entry for entry in parse_po(PO_FILE) if entry.msgid]


def test_the_catalogue_has_a_proper_header():
    header = next(entry for entry in parse_po(PO_FILE) if not entry.msgid)
    assert not header.fuzzy, "a fuzzy header is dropped by msgfmt, and the charset with it"
    assert "Language: it\n" in header.msgstr[0]
    assert "charset=UTF-8" in header.msgstr[0]


def test_every_message_is_translated_and_none_is_fuzzy():
    messages = _messages()
    assert len(messages) > 50
    untranslated = [e.msgid for e in messages if not all(e.msgstr.values())]
    fuzzy = [e.msgid for e in messages if e.fuzzy]
    assert not untranslated, f"untranslated in {PO_FILE}: {untranslated}"
    assert not fuzzy, f"fuzzy (review, then drop the flag) in {PO_FILE}: {fuzzy}"


def test_translations_keep_the_placeholders():
    placeholder = re.compile(r"%\(\w+\)[sdifr]|%[sdifr]|&\w+;|</?\w+>")
    for entry in _messages():
        expected = sorted(placeholder.findall(entry.msgid))
        for text in entry.msgstr.values():
            assert sorted(placeholder.findall(text)) == expected, (entry.msgid, text)


def test_the_compiled_catalogue_matches_the_po_file():
    """django.mo must be compiled from the current django.po (run compilemessages and commit both)."""
    expected = dict(item for entry in _messages() if not entry.fuzzy for item in entry.mo_items())
    with MO_FILE.open("rb") as mo:
        compiled = gettext.GNUTranslations(mo)
    catalogue = {key: value for key, value in compiled._catalog.items() if key != ""}
    stale = {key for key in expected.keys() & catalogue.keys() if expected[key] != catalogue[key]}
    assert not stale, f"{MO_FILE} has other translations than django.po for: {sorted(map(str, stale))}"
    assert not expected.keys() - catalogue.keys(), "missing from django.mo: run compilemessages"
    assert not catalogue.keys() - expected.keys(), "django.mo has messages no longer in django.po"
    assert compiled.info().get("content-type") == "text/plain; charset=UTF-8"
