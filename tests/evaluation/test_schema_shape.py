"""A schema's shape: what its forms must agree on (evaluation.scoring.schema_shape)."""

from __future__ import annotations

from pathlib import Path

from evaluation.scoring.mysql_dump import build_sqlite, shape_of_ddl, sqlite_schema
from evaluation.scoring.schema_shape import (
    Column,
    ForeignKey,
    column_names,
    differences,
    from_json,
    read_shape,
    spider_tables,
    to_json,
)

# A small invented dump: a key added after the data, as hand-run migrations do.
OFFICINA = """-- Officina di quartiere
CREATE TABLE meccanici (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  nome VARCHAR(40) NOT NULL,
  codice CHAR(6) NOT NULL,
  UNIQUE KEY uk_codice (codice)
) ENGINE=InnoDB;
CREATE TABLE riparazioni (
  targa VARCHAR(8) NOT NULL,
  giorno DATE NOT NULL,
  meccanico INT UNSIGNED,
  costo DECIMAL(7,2),
  pronta TINYINT(1) DEFAULT 0,
  PRIMARY KEY (targa, giorno)
);
INSERT INTO meccanici (nome, codice) VALUES ('Ottavio', 'OT0001'), ('Rina', 'RI0002');
INSERT INTO riparazioni VALUES ('AB123CD', '2026-3-2', 1, 120.5, 1);
ALTER TABLE riparazioni ADD CONSTRAINT fk_meccanico FOREIGN KEY (meccanico) REFERENCES meccanici (id);
"""

# The same schema as its "authors" might have published it: one column renamed, one type narrowed.
OFFICINA_AUTHORS = """CREATE TABLE meccanici (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  nome VARCHAR(40) NOT NULL,
  codice CHAR(6) NOT NULL,
  UNIQUE KEY uk_codice (codice)
);
CREATE TABLE riparazioni (
  targa VARCHAR(7) NOT NULL,
  giorno DATE NOT NULL,
  id_meccanico INT UNSIGNED,
  costo DECIMAL(7,2),
  pronta TINYINT(1) DEFAULT 0,
  PRIMARY KEY (targa, giorno),
  FOREIGN KEY (id_meccanico) REFERENCES meccanici (id)
);
"""


def built_shape(tmp_path: Path, dump: str = OFFICINA):
    target = tmp_path / "officina.sqlite3"
    build_sqlite(dump, target)
    return read_shape(target), target


def test_the_shape_holds_tables_columns_types_and_every_kind_of_key(tmp_path: Path) -> None:
    shape, _ = built_shape(tmp_path)
    meccanici, riparazioni = shape
    assert [c.name for c in meccanici.columns] == ["id", "nome", "codice"]
    assert meccanici.primary_key == ("id",) and meccanici.unique == (("codice",),)
    assert riparazioni.column("COSTO") == Column("costo", "DECIMAL(7,2)", False)
    assert riparazioni.column("targa") == Column("targa", "VARCHAR(8)", True)
    assert riparazioni.primary_key == ("targa", "giorno")
    assert riparazioni.foreign_keys == (ForeignKey(("meccanico",), "meccanici", ("id",)),)


def test_the_dump_without_its_data_and_the_sqlite_text_build_the_same_shape(tmp_path: Path) -> None:
    shape, target = built_shape(tmp_path)
    assert shape_of_ddl(OFFICINA) == shape
    assert shape_of_ddl(sqlite_schema(target), source="sqlite") == shape


def test_the_create_statements_alone_miss_a_key_added_later(tmp_path: Path) -> None:
    shape, _ = built_shape(tmp_path)
    creates_only = OFFICINA.split("INSERT")[0]
    assert differences(shape_of_ddl(creates_only), shape) == [
        "riparazioni: foreign keys none in the authors' dump, ((meccanico) -> meccanici(id)) scored"
    ]


def test_differences_name_every_renamed_column_type_and_key(tmp_path: Path) -> None:
    shape, _ = built_shape(tmp_path)
    assert differences(shape_of_ddl(OFFICINA_AUTHORS), shape) == [
        "riparazioni.meccanico: only in the scored database",
        "riparazioni.id_meccanico: only in the authors' dump",
        "riparazioni.targa: VARCHAR(7) in the authors' dump, VARCHAR(8) scored",
        "riparazioni: foreign keys ((id_meccanico) -> meccanici(id)) in the authors' dump, "
        "((meccanico) -> meccanici(id)) scored",
    ]
    assert differences(shape, shape) == []


def test_names_compare_without_case_and_a_reference_without_columns_means_the_primary_key(
    tmp_path: Path,
) -> None:
    shape, _ = built_shape(tmp_path)
    spelled = OFFICINA.replace("REFERENCES meccanici (id)", "REFERENCES meccanici").replace("nome ", "NOME ")
    assert differences(shape_of_ddl(spelled), shape) == []


def test_tables_missing_on_either_side_are_named(tmp_path: Path) -> None:
    shape, _ = built_shape(tmp_path)
    other = shape_of_ddl("CREATE TABLE meccanici (id INT); CREATE TABLE clienti (id INT);")
    lines = differences(other, shape)
    assert "table riparazioni: only in the scored database" in lines
    assert "table clienti: only in the authors' dump" in lines


def test_the_stored_form_reads_back_equal(tmp_path: Path) -> None:
    shape, _ = built_shape(tmp_path)
    assert from_json(to_json(shape)) == shape
    assert column_names(shape)["riparazioni"] == {"targa", "giorno", "meccanico", "costo", "pronta"}


def test_spider_tables_json_indexes_columns_keys_and_types_as_spider_does(tmp_path: Path) -> None:
    shape, _ = built_shape(tmp_path)
    entry = spider_tables("officina", shape)
    assert entry["table_names_original"] == ["meccanici", "riparazioni"]
    columns = entry["column_names_original"]
    assert columns[:4] == [[-1, "*"], [0, "id"], [0, "nome"], [0, "codice"]]
    assert entry["column_types"] == [
        "text",
        "number",
        "text",
        "text",
        "text",
        "time",
        "number",
        "number",
        "boolean",
    ]
    assert entry["primary_keys"] == [1, [4, 5]]
    assert entry["foreign_keys"] == [[6, 1]]
