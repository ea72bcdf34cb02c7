-- Ciclismo amatoriale: squadre, corridori, gare, tappe e piazzamenti di un circuito di gare amatoriali.
-- Original demo data for Termite Portal: every name, race and time is invented.
-- A hand-written MySQL script (no backticks), as run once on MySQL / MariaDB.

CREATE DATABASE ciclismo;
USE ciclismo;

CREATE TABLE squadre (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  nome VARCHAR(80) CHARACTER SET utf8mb4 NOT NULL,
  citta VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  anno_fondazione INT UNSIGNED,
  colore_maglia VARCHAR(30)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- codice_fci: the federation card number, text with its leading zeros
CREATE TABLE corridori (
  id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
  codice_fci VARCHAR(10) NOT NULL,
  nome VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  cognome VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  sesso ENUM('M','F') NOT NULL,
  data_nascita DATE NOT NULL,
  categoria ENUM('junior','under 23','elite','master') NOT NULL,
  squadra_id INT,
  tesserato TINYINT(1) NOT NULL DEFAULT 1,
  FOREIGN KEY (squadra_id) REFERENCES squadre(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

CREATE TABLE gare (
  id INT NOT NULL AUTO_INCREMENT,
  nome VARCHAR(100) CHARACTER SET utf8mb4 NOT NULL,
  localita VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  data_gara DATE NOT NULL,
  tipo ENUM('in linea','a tappe','cronometro','gran fondo') NOT NULL,
  quota_iscrizione DECIMAL(8,2) NOT NULL,
  PRIMARY KEY (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- race numbers continue the paper register, which ended at 499
ALTER TABLE gare AUTO_INCREMENT=500;

CREATE TABLE tappe (
  id INT PRIMARY KEY NOT NULL AUTO_INCREMENT,
  gara_id INT NOT NULL,
  numero TINYINT UNSIGNED NOT NULL,
  partenza VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  arrivo VARCHAR(60) CHARACTER SET utf8mb4 NOT NULL,
  km DECIMAL(5,1) NOT NULL,
  dislivello INT UNSIGNED NOT NULL,
  orario_partenza TIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

-- the first three of each stage, and who abandoned it (no place, no time)
CREATE TABLE risultati (
  id INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
  tappa_id INT NOT NULL,
  corridore_id INT UNSIGNED NOT NULL,
  posizione INT UNSIGNED,
  tempo TIME,
  punti INT NOT NULL DEFAULT 0,
  ritirato TINYINT(1) NOT NULL DEFAULT 0,
  registrato_il DATETIME NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;

INSERT INTO squadre (id, nome, citta, anno_fondazione, colore_maglia) VALUES
(1, 'Pedale Fiorito', 'Bergamo', 1987, 'verde'),
(2, 'Ruote Libere Valtellina', 'Sondrio', 2001, 'blu'),
(3, 'ASD Ciclistica L\'Aquila', 'L\'Aquila', 1975, 'nero'),
(4, 'Team Salita Dura', 'Trento', 2010, 'arancione'),
(5, 'Gruppo Sportivo Borgo Ponte', 'Cuneo', 1992, 'rosso'),
(6, 'Velo Club Adriatico', 'Pescara', 1980, 'azzurro'),
(7, 'Pedalata Allegra', 'Perugia', 2015, 'giallo'),
(8, 'Squadra Corse Monte Baldo', 'Verona', 1999, 'bianco'),
(9, 'Amatori Ciclismo Colline Rosse', 'Siena', 2005, 'bordeaux'),
(10, 'Bici e Sorrisi', 'Bari', 2018, 'viola');

INSERT INTO corridori (id, codice_fci, nome, cognome, sesso, data_nascita, categoria, squadra_id, tesserato) VALUES
(1, '0012345', 'Matteo', 'Brambilla', 'M', '1990-5-4', 'elite', 1, 1),
(2, '0012346', 'Giacomo', 'Pesenti', 'M', '1985-11-23', 'master', 1, 1),
(3, '0012390', 'Alessia', 'Carminati', 'F', '1998-2-14', 'elite', 1, 1),
(4, '0013001', 'Davide', 'Locatelli', 'M', '2004-7-7', 'under 23', 1, 1),
(5, '0020455', 'Federico', 'Bertolini', 'M', '1979-3-30', 'master', 2, 1),
(6, '0020456', 'Laura', 'Ghilotti', 'F', '1993-9-12', 'elite', 2, 0),
(7, '0031002', 'Emanuele', 'Di Lorenzo', 'M', '1988-1-19', 'elite', 3, 1),
(8, '0031003', 'Valentina', 'D''Angelo', 'F', '2006-6-2', 'junior', 3, 1),
(9, '0040010', 'Simone', 'Dallapiccola', 'M', '1996-10-10', 'elite', 4, 1),
(10, '0040011', 'Michele', 'Zanon', 'M', '2005-12-1', 'under 23', 4, 1),
(11, '0040012', 'Giorgia', 'Tomasi', 'F', '1991-4-25', 'elite', 4, 1),
(12, '0040013', 'Paolo', 'Pedrotti', 'M', '1970-8-8', 'master', 4, 1),
(13, '0050200', 'Andrea', 'Giordano', 'M', '1983-2-2', 'master', 5, 1),
(14, '0050201', 'Sofia', 'Rosso', 'F', '2007-3-3', 'junior', 5, 1),
(15, '0060077', 'Luca', 'Di Marco', 'M', '1994-6-15', 'elite', 6, 1),
(16, '0070001', 'Chiara', 'Bellucci', 'F', '2000-11-11', 'elite', 7, 0),
(17, '0080120', 'Nicolò', 'Zanetti', 'M', '1987-5-5', 'master', 8, 1),
(18, '0080121', 'Riccardo', 'Fasoli', 'M', '2003-9-9', 'under 23', 8, 1),
(19, '0090300', 'Marco', 'Bindi', 'M', '1975-12-24', 'master', 9, 1),
(20, '0100001', 'Francesca', 'Lorusso', 'F', '1997-1-1', 'elite', 10, 1),
(21, '0000777', 'Gianni', 'Sabatini', 'M', '1965-4-4', 'master', NULL, 1);

-- no ids: the races are numbered from 500 on
INSERT INTO gare (nome, localita, data_gara, tipo, quota_iscrizione) VALUES
('Gran Fondo delle Orobie', 'Bergamo', '2023-4-16', 'gran fondo', 45.00),
('Trofeo di Primavera', 'bergamo', '2023-3-19', 'in linea', 15.00),
('Cronoscalata del Gran Sasso', 'L\'Aquila', '2023-6-11', 'cronometro', 20.00),
('Giro delle Tre Valli Amatori', 'Trento', '2023-7-7', 'a tappe', 60.00),
('Coppa Città di Cuneo', 'Cuneo', '2023-9-3', 'in linea', 15.00),
('Crono di Ferragosto', 'Pescara', '2023-8-15', 'cronometro', 12.00),
('Gran Fondo dei Trabocchi', 'Pescara', '2024-5-12', 'gran fondo', 45.00),
('Trofeo delle Colline Senesi', 'Siena', '2024-4-7', 'in linea', 25.00),
('Tre Giorni del Garda', 'Verona', '2024-6-21', 'a tappe', 55.00),
('Circuito Notturno di Bari', 'Bari', '2023-10-14', 'in linea', 10.00);

INSERT INTO tappe VALUES
(1, 500, 1, 'Bergamo', 'Bergamo', 128.5, 2350, '7:30'),
(2, 501, 1, 'Bergamo', 'Clusone', 96.0, 1100, '9:5:00'),
(3, 502, 1, 'Assergi', 'Campo Imperatore', 27.3, 1250, '10:00'),
(4, 503, 1, 'Trento', 'Levico Terme', 85.2, 900, '9:30:00'),
(5, 503, 2, 'Levico Terme', 'Pergine Valsugana', 72.4, 1480, '10:15'),
(6, 503, 3, 'Pergine Valsugana', 'Trento', 64.0, 600, '14:0:00'),
(7, 504, 1, 'Cuneo', 'Cuneo', 110.0, 1300, '8:45:00'),
(8, 505, 1, 'Pescara', 'Francavilla al Mare', 18.6, 40, '17:30'),
(9, 506, 1, 'Pescara', 'Ortona', 142.0, 1900, '7:0:00'),
(10, 507, 1, 'Siena', 'Siena', 118.8, 1750, '9:00'),
(11, 508, 1, 'Verona', 'Garda', 95.5, 700, '9:45:00'),
(12, 508, 2, 'Garda', 'Malcesine', 60.2, 520, '11:0:00'),
(13, 508, 3, 'Malcesine', 'Verona', 102.3, 850, '8:5:00'),
(14, 509, 1, 'Bari', 'Bari', 45.0, 120, '21:0:00');

INSERT INTO risultati (tappa_id, corridore_id, posizione, tempo, punti, ritirato, registrato_il) VALUES
(1, 1, 1, '3:58:12', 10, 0, '2023-4-16 14:5:00'),
(1, 9, 2, '3:59:40', 6, 0, '2023-4-16 14:5:00'),
(1, 5, 3, '4:1:5', 4, 0, '2023-4-16 14:6:00'),
(1, 17, NULL, NULL, 0, 1, '2023-4-16 14:10:00'),
(2, 4, 1, '2:31:10', 10, 0, '2023-3-19 12:0:00'),
(2, 1, 2, '2:31:10', 6, 0, '2023-3-19 12:0:00'),
(2, 2, 3, '2:31:15', 4, 0, '2023-3-19 12:1:00'),
(3, 7, 1, '0:58:3', 10, 0, '2023-6-11 13:30:00'),
(3, 15, 2, '0:59:21', 6, 0, '2023-6-11 13:30:00'),
(3, 9, 3, '1:0:44', 4, 0, '2023-6-11 13:31:00'),
(4, 9, 1, '2:10:5', 10, 0, '2023-7-7 12:15:00'),
(4, 11, 2, '2:12:30', 6, 0, '2023-7-7 12:15:00'),
(4, 10, 3, '2:12:31', 4, 0, '2023-7-7 12:16:00'),
(5, 10, 1, '2:05:00', 10, 0, '2023-7-8 12:40:00'),
(5, 9, 2, '2:05:12', 6, 0, '2023-7-8 12:40:00'),
(5, 12, 3, '2:07:30', 4, 0, '2023-7-8 12:41:00'),
(5, 18, NULL, NULL, 0, 1, '2023-7-8 12:45:00'),
(6, 9, 1, '1:40:2', 10, 0, '2023-7-9 16:0:00'),
(6, 13, 2, '1:40:2', 6, 0, '2023-7-9 16:0:00'),
(6, 10, 3, '1:40:9', 4, 0, '2023-7-9 16:1:00'),
(7, 13, 1, '2:58:30', 10, 0, '2023-9-3 11:50:00'),
(7, 14, 2, '3:1:0', 6, 0, '2023-9-3 11:52:00'),
(7, 5, 3, '3:1:2', 4, 0, '2023-9-3 11:52:00'),
(8, 15, 1, '0:24:51', 10, 0, '2023-8-15 19:5:00'),
(8, 7, 2, '0:25:3', 6, 0, '2023-8-15 19:5:00'),
(8, 20, 3, '0:26:40', 4, 0, '2023-8-15 19:6:00'),
(11, 17, 1, '2:25:0', 10, 0, '2024-6-21 12:20:00'),
(11, 18, 2, '2:25:0', 6, 0, '2024-6-21 12:20:00'),
(11, 1, 3, '2:25:4', 4, 0, '2024-6-21 12:21:00'),
(12, 18, 1, '1:33:20', 10, 0, '2024-6-22 12:40:00'),
(12, 17, 2, '1:33:25', 6, 0, '2024-6-22 12:40:00'),
(12, 19, 3, '1:34:0', 4, 0, '2024-6-22 12:41:00'),
(13, 1, 1, '2:41:11', 10, 0, '2024-6-23 11:0:00'),
(13, 18, 2, '2:41:15', 6, 0, '2024-6-23 11:0:00'),
(13, 17, 3, '2:41:15', 4, 0, '2024-6-23 11:1:00'),
(14, 20, 1, '1:5:30', 10, 0, '2023-10-14 22:10:00'),
(14, 16, 2, '1:5:31', 6, 0, '2023-10-14 22:10:00'),
(14, 21, 3, '1:6:0', 4, 0, '2023-10-14 22:11:00');

ALTER TABLE tappe ADD CONSTRAINT fk_tappe_gara FOREIGN KEY (gara_id) REFERENCES gare(id);
ALTER TABLE risultati ADD CONSTRAINT fk_risultati_tappa FOREIGN KEY (tappa_id) REFERENCES tappe(id);
ALTER TABLE risultati ADD CONSTRAINT fk_risultati_corridore FOREIGN KEY (corridore_id) REFERENCES corridori(id);
