"""The Italian translation: language choice (default, set_language cookie, Accept-Language), the pages
rendered in Italian, and a catalogue that is complete and compiled.

To refresh the catalogue after changing translatable strings:

    DEBUG=1 .venv/bin/python manage.py makemessages -l it --ignore=.venv --ignore=var \
        --ignore=benchmarks --ignore=tests
    (translate the new or fuzzy entries in locale/it/LC_MESSAGES/django.po)
    DEBUG=1 .venv/bin/python manage.py compilemessages --ignore=.venv

and commit both django.po and django.mo.
"""

from __future__ import annotations

import ast
import gettext
import re
from dataclasses import dataclass, field
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import trim_whitespace

from tests.factories import baseline_make

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
    # templates/site/home.html quotes this string with single quotes, so that its inner double
    # quotes need no \" (makemessages cuts a msgid at the first \"): see
    # test_every_template_string_is_in_the_catalogue.
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


# --- The benchmark, leaderboard and staff pages ------------------------------------------------------


def _in_italian(client, url: str, user=None) -> str:
    """The page at `url` as an Italian visitor sees it (logged in as `user`, if given)."""
    if user is not None:
        client.force_login(user)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "it"
    text = _text(client.get(url))
    assert '<html lang="it">' in text
    return text


def _assert_phrases(text: str, italian: list[str], english: list[str]) -> None:
    missing = [phrase for phrase in italian if phrase not in text]
    assert not missing, f"not in the Italian page: {missing}"
    left = [phrase for phrase in english if phrase in text]
    assert not left, f"still in English: {left}"


@pytest.fixture
def ranked(make_submission, demo_version):
    """A public scored submission with open weights, an earlier one (so that the best EA has a line over
    time) and a baseline, so that every kind of row shows."""
    from tests.leaderboard.scored import scored_fields

    make_submission(
        model_name="Alfa", weights="open", model_size="7B", spider_dev_ea=80.0, **scored_fields(20)
    )
    make_submission(model_name="Primo", created_at=timezone.now() - timedelta(days=3), **scored_fields(10))
    baseline_make(version=demo_version)


LEADERBOARD_IT = [
    "<title>Classifica · ",
    "<h1>Classifica</h1>",
    "Versione del benchmark",
    'placeholder="modello, gruppo, dimensione"',
    '<option value="">qualsiasi</option>',
    '<option value="open">pesi aperti</option>',
    "Nascondi colonne",
    "EA per base di dati",
    "EA per livello di difficoltà",
    "Scheda del modello",
    '<button type="submit">Applica</button>',
    'Righe mostrate: <span id="shown-count">3</span> su 3.',
    "Colonne nascoste: EA per base di dati, EA per livello di difficoltà, Scheda del modello.",
    "Mostra tutte le colonne",
    ">Posizione</a>",
    ">Modello</a>",
    ">Gruppo</a>",
    ">molto difficile</a>",
    ">Divario</a>",
    'title="Accuratezza di esecuzione (%) e relativo intervallo di confidenza al 95%"',
    'title="intervallo di confidenza al 95%"',
    '<span class="badge baseline">baseline</span>',
    "riportata nell'articolo, non valutata qui",
    "Come leggere questa tabella",
    "<strong>EA</strong> (accuratezza di esecuzione)",
    "query di riferimento",
    "<strong>Posti.</strong>",
    "Le <strong>baseline</strong> sono risultati riportati in un articolo",
    "Confronta due sottomissioni",
    "EA migliore nel tempo",
]
LEADERBOARD_EN = [
    "Benchmark version",
    "Hide columns",
    "How to read this table",
    "reported in the paper, not scored here",
    "95% confidence interval",
    "Shared ranks",
    "best EA",
    "Show every column",
]


def test_the_leaderboard_is_in_italian(client, ranked):
    text = _in_italian(client, reverse("leaderboard:leaderboard"))
    _assert_phrases(text, LEADERBOARD_IT, LEADERBOARD_EN)
    assert '"name": "EA migliore"' in text  # the progress chart's legend


def test_the_cached_leaderboard_rows_follow_the_language(client, ranked):
    # The rows' HTML is cached per version and language: an English visit first must not leave
    # English rows for the Italian one, nor the other way round.
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    english = _text(client.get(reverse("leaderboard:leaderboard")))
    assert "reported in the paper, not scored here" in english
    italian = _in_italian(client, reverse("leaderboard:leaderboard"))
    _assert_phrases(italian, LEADERBOARD_IT, LEADERBOARD_EN)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert "reported in the paper, not scored here" in _text(client.get(reverse("leaderboard:leaderboard")))


def test_an_empty_leaderboard_says_so_in_italian(client, empty_store):
    text = _in_italian(client, reverse("leaderboard:leaderboard"))
    _assert_phrases(
        text, ["Non è ancora stata pubblicata alcuna versione del benchmark."], ["No benchmark version"]
    )


def test_the_metrics_page_is_in_italian(client):
    text = _in_italian(client, reverse("metrics"))
    _assert_phrases(
        text,
        [
            "<title>Metriche</title>",
            "<h1>Come vengono valutate le sottomissioni</h1>",
            "La query di riferimento viene eseguita allo stesso modo.",
            '<h2 id="ea">EA: accuratezza di esecuzione</h2>',
            '<h2 id="ea-strict">EA-strict: la regola originale degli autori</h2>',
            '<h2 id="outcomes">Esiti</h2>',
            "<dt>wrong_result</dt><dd>la query è stata eseguita ma ha restituito altro</dd>",
            '<h2 id="hardness">Difficoltà</h2>',
            "(facile, media, difficile, molto difficile)",
            '<h2 id="ci">Intervallo di confidenza</h2>',
            "un intervallo bootstrap al 95% basato sui percentili",  # %% in the catalogue, % on the page
            '<h2 id="sandbox">La sandbox</h2>',
            "Le predizioni sono in MySQL per impostazione predefinita",
        ],
        ["How submissions are scored", "execution accuracy", "Confidence interval", "95%%"],
    )


def test_the_changelog_is_in_italian(client, demo_version):
    text = _in_italian(client, reverse("changelog"))
    _assert_phrases(
        text,
        [
            "<title>Registro delle modifiche</title>",
            "<h1>Versioni del benchmark</h1>",
            "I punteggi si riferiscono sempre a una sola versione.",
            # The navigation, on every page.
            ">Classifica</a>",
            ">Metriche</a>",
            ">Registro delle modifiche</a>",
            ">Informazioni</a>",
        ],
        ["Benchmark versions", "Scores always belong", "Changelog", "About"],
    )
    assert re.search(r"\d+ basi di dati, \d+ domande, di cui \d+ valutate\.", text)


def test_the_about_page_is_in_italian(client):
    text = _in_italian(client, reverse("about"))
    _assert_phrases(
        text,
        [
            "<title>Informazioni e citazione</title>",
            "<h1>Informazioni su Termite</h1>",
            "all'Università di Roma Tor Vergata",
            "<h2>Citazione</h2>",
            "con licenza GPL-3.0",
        ],
        ["About Termite", "Citation", "cite the papers"],
    )


def test_the_benchmark_version_page_is_in_italian(client, owner, demo_version):
    text = _in_italian(client, demo_version.get_absolute_url(), owner)
    _assert_phrases(
        text,
        [
            "Scarica il pacchetto del task",
            "questions.jsonl e tutti gli schemi, in versione MySQL e SQLite",
            "<h2>Domande per difficoltà</h2>",
            "<h2>Basi di dati</h2>",
            "<th>Base di dati</th>",
            '<th class="num">Tabelle</th>',
            '<th class="num">Righe</th>',
            '<th class="num">Domande</th>',
            '<th class="num">Valutate</th>',
            # The navigation for a participant.
            ">Benchmark</a>",
            ">Sottomissioni</a>",
        ],
        ["Download the task bundle", "Questions by hardness", "Databases", ">Submissions</a>"],
    )


def test_the_upload_form_is_in_italian(client, owner, demo_version):
    text = _in_italian(client, reverse("leaderboard:submission_new"), owner)
    _assert_phrases(
        text,
        [
            "<title>Invia le predizioni</title>",
            "<h1>Invia le predizioni</h1>",
            f"Valutazione su {demo_version}.",
            "Le domande si scaricano dalla <a",
            ">pagina del benchmark</a>",
            "Sottomissioni ancora disponibili oggi: ",
            "Nome del modello:",
            "Gruppo:",
            "Dimensione del modello:",
            "ad es. 7B, 70B",
            '<option value="closed">pesi chiusi</option>',
            '<option value="unknown" selected>non dichiarati</option>',
            '<option value="other">altro</option>',
            "Dialetto SQL delle predizioni:",
            "URL dell'articolo:",
            "EA su Spider dev dichiarata dagli autori (%):",
            "Versione del benchmark:",
            "File delle predizioni:",
            "obbligatorio se pubblica",
            'JSONL, un oggetto {"question_id": …, "sql": …} per riga',
            '<button type="submit">Carica e valuta</button>',
        ],
        ["Submit predictions", "You can submit", "Model name", "not said", "Upload and score", "per line"],
    )


def test_a_submission_page_is_in_italian(client, owner, make_submission):
    from tests.leaderboard.scored import scored_fields

    submission = make_submission(**scored_fields(20))
    text = _in_italian(client, submission.get_absolute_url(), owner)
    _assert_phrases(
        text,
        [
            '<span id="status" class="badge status-scored">valutata</span>',
            "<h2>Punteggi</h2>",
            "domande valutate: 23; escluse: 0",
            "<th>Base di dati</th>",
            "<th>Difficoltà</th>",
            "<h3>Esiti</h3>",
            "<h2>Ricevuta</h2>",
            # The question static/js/site.js asks before the form posts.
            'data-confirm="Ritirare questa sottomissione?"',
            '<button type="submit" class="danger">Ritira</button>',
        ],
        ["Scores", "Receipt", "Withdraw"],
    )


def test_the_staff_home_is_in_italian(client, staff, demo_version):
    text = _in_italian(client, reverse("staff:home"), staff)
    _assert_phrases(
        text,
        [
            "<title>Amministrazione</title>",
            "<h1>Amministrazione del benchmark</h1>",
            "<h2>Versioni</h2>",
            "<th>Versione</th><th>Stato</th><th>Data di creazione</th><th>Data di pubblicazione</th>",
            "<td>pubblicata</td>",
            "<h2>Nuova versione in bozza</h2>",
            "Etichetta della versione:",
            "Nome del benchmark:",
            "Note sulle modifiche:",
            "Copia basi di dati e domande da:",
            "(inizia da zero)",
            '<button type="submit">Crea la bozza</button>',
            "<h2>Importa l'archivio di Termite</h2>",
            "Archivio di Termite (.zip):",
            "Password dell'archivio:",
            "Pubblica subito:",
            '<button type="submit">Importa</button>',
            "<h2>Rapporti di convalida</h2>",
            ">Amministrazione</a>",  # the navigation link
        ],
        ["Benchmark administration", "New draft version", "Validation reports", "Create draft"],
    )


def test_choosing_italian_while_logged_in_keeps_the_session(client, staff):
    client.force_login(staff)
    response = client.post("/i18n/setlang/", {"language": "it", "next": reverse("staff:home")})
    assert response.status_code == 302
    assert "<h1>Amministrazione del benchmark</h1>" in _text(client.get(response.url))


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


# --- Every translatable string reaches the catalogue ----------------------------------------------

TEMPLATES = Path(settings.BASE_DIR) / "templates"
# `{% translate "..." %}` (or `{% trans %}`) with a literal, single- or double-quoted, and its options.
TRANSLATE_TAG = re.compile(
    r"""\{%\s*trans(?:late)?\s+(?P<quote>["'])(?P<text>(?:\\.|(?!(?P=quote)).)*)(?P=quote)(?P<options>[^%]*)%\}"""
)
BLOCKTRANSLATE_TAG = re.compile(
    r"\{%\s*blocktrans(?:late)?(?P<options>[^%]*)%\}(?P<body>.*?)\{%\s*endblocktrans(?:late)?\s*%\}", re.S
)
CONTEXT_OPTION = re.compile(r"""\bcontext\s+(["'])(.*?)\1""")
# The code makemessages reads (the same --ignore as in the module docstring).
NOT_EXTRACTED = {".venv", "var", "benchmarks", "tests", "node_modules"}
GETTEXT_CALL = re.compile(
    r"""\b(?:_|gettext|gettext_lazy|gettext_noop)\(\s*"""
    r"""(?P<literal>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')\s*[,)]"""
)


def _translated() -> dict[tuple[str | None, str], Entry]:
    return {(e.msgctxt, e.msgid): e for e in _messages() if not e.fuzzy and all(e.msgstr.values())}


def _template_msgids() -> list[tuple[str, str | None, str]]:
    """(where, msgctxt, msgid) for every literal translate tag and every plain blocktranslate in
    templates/, as makemessages writes them: % doubled, {{ var }} as %(var)s."""
    found = []
    for path in sorted(TEMPLATES.rglob("*")):
        if not path.is_file() or path.suffix not in {".html", ".txt"}:
            continue
        source = path.read_text(encoding="utf-8")
        where = str(path.relative_to(settings.BASE_DIR))
        for match in TRANSLATE_TAG.finditer(source):
            # Django unescapes the literal (\" → ") before looking it up.
            text = ast.literal_eval(f'"""{match["text"]}"""') if "\\" in match["text"] else match["text"]
            context = CONTEXT_OPTION.search(match["options"])
            found.append((where, context and context[2], text.replace("%", "%%")))
        for match in BLOCKTRANSLATE_TAG.finditer(source):
            body, options = match["body"], match["options"]
            if re.search(r"\{%\s*plural\s*%\}", body):
                continue  # a plural form: its msgid_plural would need more parsing than this test does
            if "trimmed" in options.split():
                body = trim_whitespace(body)
            body = re.sub(r"\{\{\s*(\w+)\s*\}\}", r"%(\1)s", body.replace("%", "%%"))
            assert "{%" not in body and "{{" not in body, f"{where}: a tag or filter inside {body!r}"
            context = CONTEXT_OPTION.search(options)
            found.append((where, context and context[2], body))
    return found


def test_every_template_string_is_in_the_catalogue():
    """A string added to a template without running makemessages (or left untranslated) shows in
    English on the Italian site: every one must have a translated, non-fuzzy entry in django.po."""
    msgids = _template_msgids()
    assert len(msgids) > 200
    translated = _translated()
    missing = sorted(
        {f"{where}: {msgid!r}" for where, context, msgid in msgids if (context, msgid) not in translated}
    )
    assert not missing, "not translated in django.po (run makemessages, then translate):\n" + "\n".join(
        missing
    )


def test_a_translate_tag_with_escaped_quotes_would_be_caught():
    # makemessages cuts `{% translate "say \"hi\"" %}` at the first \", so the full text is never in
    # the catalogue; the regex above must still read the whole literal for the check to notice.
    match = TRANSLATE_TAG.search(r"""<p>{% translate "one {\"id\": …} per line." %}</p>""")
    assert match is not None
    assert ast.literal_eval(f'"""{match["text"]}"""') == 'one {"id": …} per line.'


def test_every_python_string_is_in_the_catalogue():
    """The same for _("...") / gettext_lazy("...") calls with a single literal in the project's code."""
    base = Path(settings.BASE_DIR)
    translated = _translated()
    found, missing = 0, []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(base).parts
        if parts[0] in NOT_EXTRACTED or any(part.startswith(".") for part in parts):
            continue
        for match in GETTEXT_CALL.finditer(path.read_text(encoding="utf-8")):
            found += 1
            msgid = ast.literal_eval(match["literal"])
            if (None, msgid) not in translated:
                missing.append(f"{path.relative_to(base)}: {msgid!r}")
    assert found > 100
    assert not missing, "not translated in django.po (run makemessages, then translate):\n" + "\n".join(
        missing
    )
