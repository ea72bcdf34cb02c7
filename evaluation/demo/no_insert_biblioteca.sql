-- Biblioteca comunale: schema only (no data), the dump a participant's prompt shows.
-- Original demo schema for Termite Portal (see biblioteca.sql for the data).
-- Written in the style of a mysqldump of MySQL 8 / MariaDB 10.11.

CREATE DATABASE IF NOT EXISTS `biblioteca` DEFAULT CHARACTER SET utf8mb4;
USE `biblioteca`;

--
-- Table structure for table `sedi`
--

CREATE TABLE `sedi` (
  `id` INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  `nome` VARCHAR(80) CHARACTER SET utf8mb4 NOT NULL,
  `quartiere` VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  `telefono` VARCHAR(15) NOT NULL,
  `apertura` TIME NOT NULL,
  `chiusura` TIME NOT NULL,
  `aperta_sabato` TINYINT(1) NOT NULL DEFAULT 0,
  `posti_lettura` SMALLINT UNSIGNED NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

--
-- Table structure for table `autori`
--

CREATE TABLE `autori` (
  `id` INT UNSIGNED NOT NULL AUTO_INCREMENT,
  `nome` VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  `cognome` VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  `nazionalita` VARCHAR(40) NOT NULL,
  `anno_nascita` INT UNSIGNED DEFAULT NULL,
  PRIMARY KEY (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

--
-- Table structure for table `libri`
--

CREATE TABLE `libri` (
  `id` INT UNSIGNED NOT NULL AUTO_INCREMENT,
  `titolo` VARCHAR(150) CHARACTER SET utf8mb4 NOT NULL,
  `autore_id` INT UNSIGNED NOT NULL,
  `genere` ENUM('romanzo','giallo','saggio','poesia','ragazzi','fumetto') NOT NULL,
  `anno_pubblicazione` INT UNSIGNED NOT NULL,
  `pagine` INT UNSIGNED NOT NULL,
  `prezzo` DECIMAL(8,2) NOT NULL,
  `sede_id` INT NOT NULL,
  `disponibile` TINYINT(1) NOT NULL DEFAULT 1,
  `data_acquisto` DATE DEFAULT NULL,
  PRIMARY KEY (`id`),
  CONSTRAINT `fk_libri_autore` FOREIGN KEY (`autore_id`) REFERENCES `autori` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

--
-- Table structure for table `soci`
-- (the membership numbers of the old paper cards are kept as text, leading zeros included)
--

CREATE TABLE `soci` (
  `id` INT PRIMARY KEY NOT NULL AUTO_INCREMENT,
  `tessera` VARCHAR(8) NOT NULL,
  `nome` VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  `cognome` VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  `citta` VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  `data_nascita` DATE NOT NULL,
  `data_iscrizione` DATE NOT NULL,
  `categoria` ENUM('ordinario','studente','senior') NOT NULL DEFAULT 'ordinario',
  `sede_id` INT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

ALTER TABLE `soci` AUTO_INCREMENT=500;

--
-- Table structure for table `prestiti`
--

CREATE TABLE `prestiti` (
  `id` INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  `libro_id` INT UNSIGNED NOT NULL,
  `socio_id` INT NOT NULL,
  `data_prestito` DATETIME NOT NULL,
  `data_scadenza` DATE NOT NULL,
  `data_restituzione` DATE DEFAULT NULL,
  `rinnovato` TINYINT(1) NOT NULL DEFAULT 0,
  CONSTRAINT `fk_prestiti_libro` FOREIGN KEY (`libro_id`) REFERENCES `libri` (`id`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

--
-- Constraints added after the tables, as a hand-run migration did
--

ALTER TABLE `libri` ADD CONSTRAINT `fk_libri_sede` FOREIGN KEY (`sede_id`) REFERENCES `sedi` (`id`);
ALTER TABLE `soci` ADD CONSTRAINT `fk_soci_sede` FOREIGN KEY (`sede_id`) REFERENCES `sedi` (`id`);
ALTER TABLE `prestiti` ADD CONSTRAINT `fk_prestiti_socio` FOREIGN KEY (`socio_id`) REFERENCES `soci` (`id`);
