"""The SQL of a model's answer (leaderboard/protocols/extraction.py), on answers as models write them."""

from __future__ import annotations

import pytest

from leaderboard.protocols.extraction import extract_sql

ANSWERS = {
    "bare query": (
        "SELECT nome FROM studenti WHERE eta > 20",
        "SELECT nome FROM studenti WHERE eta > 20",
    ),
    "bare query with its semicolon and blanks": (
        "\n\n  SELECT COUNT(*) FROM esami;  \n",
        "SELECT COUNT(*) FROM esami",
    ),
    "Italian prose around a fenced query": (
        "Ecco la query che risponde alla domanda:\n\n```sql\nSELECT s.nome, s.cognome\nFROM studenti s\n"
        "WHERE s.citta = 'Roma';\n```\n\nQuesta query restituisce nome e cognome degli studenti di Roma.",
        "SELECT s.nome, s.cognome\nFROM studenti s\nWHERE s.citta = 'Roma'",
    ),
    "a fence tagged mysql": (
        "```mysql\nSELECT titolo FROM corsi ORDER BY crediti DESC LIMIT 3;\n```",
        "SELECT titolo FROM corsi ORDER BY crediti DESC LIMIT 3",
    ),
    "an SQL fence preferred over an earlier untagged one": (
        "Lo schema:\n```\nstudenti(id, nome)\n```\nLa query:\n```SQL\nSELECT nome FROM studenti;\n```",
        "SELECT nome FROM studenti",
    ),
    "the first of two SQL fences": (
        "```sql\nSELECT a FROM t;\n```\noppure, in alternativa:\n```sql\nSELECT b FROM t;\n```",
        "SELECT a FROM t",
    ),
    "an untagged fence": (
        "```\nSELECT nome FROM docenti\n```",
        "SELECT nome FROM docenti",
    ),
    "an unterminated fence": (
        "```sql\nSELECT nome\nFROM docenti\nWHERE ruolo = 'ordinario'",
        "SELECT nome\nFROM docenti\nWHERE ruolo = 'ordinario'",
    ),
    "a closing fence at the end of the last line": (
        "```sql\nSELECT nome FROM docenti```\nFatto.",
        "SELECT nome FROM docenti",
    ),
    "a fence and a query on one line": (
        "```sql SELECT nome FROM docenti ```",
        "SELECT nome FROM docenti",
    ),
    "a python fence without SQL, then a query": (
        "```python\nprint('ciao')\n```\nSELECT nome FROM corsi",
        "SELECT nome FROM corsi",
    ),
    "two statements": (
        "SELECT id FROM corsi WHERE anno = 1; SELECT id FROM corsi WHERE anno = 2;",
        "SELECT id FROM corsi WHERE anno = 1",
    ),
    "semicolons inside strings and a quoted name": (
        "SELECT `nome;completo` FROM studenti WHERE nota = 'a; b' AND sigla = \"x;y\"; DROP TABLE studenti;",
        "SELECT `nome;completo` FROM studenti WHERE nota = 'a; b' AND sigla = \"x;y\"",
    ),
    "a backslash-escaped quote before a semicolon": (
        "SELECT nome FROM libri WHERE titolo = 'L\\'amica; geniale';",
        "SELECT nome FROM libri WHERE titolo = 'L\\'amica; geniale'",
    ),
    "a trailing explanation after a blank line, without semicolon": (
        "SELECT c.titolo, COUNT(*) AS iscritti\nFROM corsi c\nJOIN iscrizioni i ON i.corso_id = c.id\n"
        "GROUP BY c.titolo\n\nSpiega: conto gli iscritti di ogni corso.",
        "SELECT c.titolo, COUNT(*) AS iscritti\nFROM corsi c\nJOIN iscrizioni i ON i.corso_id = c.id\n"
        "GROUP BY c.titolo",
    ),
    "a trailing explanation on the next line": (
        "SELECT nome FROM studenti\nQuesta query restituisce i nomi di tutti gli studenti.",
        "SELECT nome FROM studenti",
    ),
    "a trailing explanation that begins with a keyword": (
        "SELECT nome FROM studenti\nIn questa query leggo la tabella degli studenti.",
        "SELECT nome FROM studenti",
    ),
    "a trailing explanation with an apostrophe": (
        "SELECT nome FROM studenti\nL'elenco contiene tutti gli iscritti.",
        "SELECT nome FROM studenti",
    ),
    "a trailing label": (
        "SELECT nome FROM studenti\nNota: la tabella non ha duplicati.",
        "SELECT nome FROM studenti",
    ),
    "a Markdown list after the query": (
        "1. SELECT nome FROM corsi\n2. Poi li ordino\n- oppure no",
        "SELECT nome FROM corsi",
    ),
    "bold labels around the query": (
        "**Query:**\n\nSELECT nome\nFROM studenti s\nWHERE s.id NOT IN (\n  SELECT studente_id\n  FROM esami\n)\n\n"
        "**Spiegazione:** uso una sottoquery.",
        "SELECT nome\nFROM studenti s\nWHERE s.id NOT IN (\n  SELECT studente_id\n  FROM esami\n)",
    ),
    "an English explanation": (
        "Here is the query:\nSELECT name FROM students\nThis query returns all names.",
        "SELECT name FROM students",
    ),
    "an SQL: label": (
        "SQL: SELECT nome FROM studenti WHERE anno = 2",
        "SELECT nome FROM studenti WHERE anno = 2",
    ),
    "prose before the query on its line": (
        "Ecco la query richiesta: SELECT nome FROM studenti ORDER BY nome;",
        "SELECT nome FROM studenti ORDER BY nome",
    ),
    "lower-case SQL at the start of a line": (
        "La risposta è:\nselect nome\nfrom studenti\nwhere eta < 30",
        "select nome\nfrom studenti\nwhere eta < 30",
    ),
    "a select in prose is not a query": (
        "Per prima cosa uso una SELECT annidata.\n\nSELECT nome FROM studenti WHERE id IN (SELECT studente_id FROM esami)",
        "SELECT nome FROM studenti WHERE id IN (SELECT studente_id FROM esami)",
    ),
    "a multi-line query with a list of columns and a CASE": (
        "SELECT\n    nome,\n    cognome,\n    CASE WHEN voto >= 18 THEN 'promosso' ELSE 'bocciato' END AS esito\n"
        "FROM esami\nWHERE corso = 'Basi di dati e sistemi informativi'",
        "SELECT\n    nome,\n    cognome,\n    CASE WHEN voto >= 18 THEN 'promosso' ELSE 'bocciato' END AS esito\n"
        "FROM esami\nWHERE corso = 'Basi di dati e sistemi informativi'",
    ),
    "a common table expression": (
        "Uso una CTE:\nWITH medie AS (\n  SELECT studente_id, AVG(voto) AS media FROM esami GROUP BY studente_id\n)\n"
        "SELECT * FROM medie WHERE media > 27;",
        "WITH medie AS (\n  SELECT studente_id, AVG(voto) AS media FROM esami GROUP BY studente_id\n)\n"
        "SELECT * FROM medie WHERE media > 27",
    ),
    "a comment inside the query is kept, a trailing one dropped": (
        "SELECT nome -- il nome\nFROM studenti; -- fine",
        "SELECT nome -- il nome\nFROM studenti",
    ),
    "inline code": (
        "La query è `SELECT nome FROM studenti`, che restituisce i nomi.",
        "SELECT nome FROM studenti",
    ),
    "a think-style preamble": (
        "<think>\nLa domanda chiede gli studenti. Potrei scrivere SELECT * FROM docenti, ma no.\n</think>\n"
        "```sql\nSELECT nome FROM studenti;\n```",
        "SELECT nome FROM studenti",
    ),
    "a think-style preamble whose opening tag was cut": (
        "Devo contare i corsi: SELECT COUNT(*) FROM docenti è sbagliato.\n</think>\n\nSELECT COUNT(*) FROM corsi",
        "SELECT COUNT(*) FROM corsi",
    ),
    "a refusal with no SQL": (
        "Mi dispiace, non posso rispondere: il database non contiene informazioni sulle tasse universitarie.",
        "",
    ),
    "a refusal mentioning a selection": (
        "Non è possibile selezionare questi dati: select richiede una tabella che non esiste.",
        "",
    ),
    "an empty answer": ("", ""),
    "an answer of blanks": ("   \n\n  ", ""),
    "a fence without a query": ("```sql\n-- non so rispondere\n```", ""),
}


@pytest.mark.parametrize(("answer", "sql"), list(ANSWERS.values()), ids=list(ANSWERS))
def test_it_extracts_the_sql_of_an_answer(answer, sql):
    assert extract_sql(answer) == sql
