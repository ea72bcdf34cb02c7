-- Biblioteca comunale: prestiti della rete di biblioteche di un comune immaginario.
-- Original demo data for Termite Portal: every name, title and number is invented.
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
-- Dumping data for table `sedi`
--

INSERT INTO `sedi` VALUES
(1,'Biblioteca Centrale','Centro storico','0612340001','8:30:00','19:00',1,120),
(2,'Sala dell''Orologio','Centro storico','0612340002','9:00','13:00',0,24),
(3,'Biblioteca del Parco','Parco Nord','0612340003','9:0:00','18:30:00',1,60),
(4,'Punto Lettura Stazione','Stazione','0612340004','7:30','14:0:00',0,18),
(5,'Biblioteca dei Ragazzi','Borgo Vecchio','0612340005','14:0:00','19:00',1,40),
(6,'Mediateca San Lorenzo','San Lorenzo','0612340006','10:00','22:00',1,80),
(7,'Biblioteca Villa Olmi','Colle Olmi','0612340007','9:30','17:30:00',0,35),
(8,'Punto Prestito Mercato Coperto','Mercato','0612340008','8:0:00','12:30',1,10),
(9,'Biblioteca di Quartiere Le Fornaci','Le Fornaci','0612340009','15:00','19:30',0,30),
(10,'Sala Studio dell\'Ex Macello','Porta Est','0612340010','8:30','23:30',1,150);

--
-- Dumping data for table `autori`
--

INSERT INTO `autori` VALUES
(1,'Lucia','Farnetti','italiana',1948),
(2,'Guido','Sartorelli','italiana',1962),
(3,'Elena','Maraschi','italiana',1975),
(4,'Pietro','D\'Ambrosio','italiana',1955),
(5,'Chiara','Valdambrini','italiana',1981),
(6,'Tommaso','Ferlini','italiana',1939),
(7,'Agata','Wróblewska','polacca',1970),
(8,'Jean-Luc','Morvan','francese',1966),
(9,'Sofia','Lindqvist','svedese',1984),
(10,'Marco','Dell''Orto','italiana',1958),
(11,'Rosa','Tancredi','italiana',1990),
(12,'Hugo','Brenner','tedesca',1944);

--
-- Dumping data for table `libri`
--

INSERT INTO `libri` VALUES
(1,'La notte dei fari spenti',2,'giallo',2015,312,18.50,1,1,'2016-2-3'),
(2,'Il giardino di via Sassi',1,'romanzo',1989,240,14.00,1,1,'2010-5-12'),
(3,'Versi per un inverno lungo',6,'poesia',1972,96,11.00,2,1,'2011-09-20'),
(4,'Il commissario e la nebbia',2,'giallo',2018,287,17.90,1,0,'2018-11-5'),
(5,'Breve storia dei mulini ad acqua',4,'saggio',2004,410,32.00,7,1,'2012-1-9'),
(6,'Notte sul lago',3,'romanzo',2012,198,15.50,3,1,'2013-4-22'),
(7,'Il drago che aveva paura del buio',11,'ragazzi',2021,48,12.90,5,1,'2022-1-15'),
(8,'Pane, sale e geometria',10,'saggio',2010,256,22.00,6,1,'2014-3-3'),
(9,'Cartografie dell''assenza',5,'poesia',2019,88,13.00,2,1,'2020-6-1'),
(10,'Delitto al mercato del pesce',8,'giallo',2009,354,16.00,8,1,'2015-7-7'),
(11,'Il ritorno delle rondini',1,'romanzo',1995,302,16.50,1,1,'2010-5-12'),
(12,'Atlante dei venti',9,'saggio',2020,520,45.00,10,1,'2021-10-18'),
(13,'Il segreto della soffitta',11,'ragazzi',2022,132,11.50,5,0,'2022-12-1'),
(14,'Quaderno di notte',6,'poesia',1980,72,9.50,2,1,'2011-9-20'),
(15,'Il fiume sotto la città',7,'romanzo',2001,376,19.00,6,1,'2009-2-27'),
(16,'Fumo e ruggine',12,'fumetto',2016,144,21.00,6,1,'2017-5-5'),
(17,'Il tredicesimo ospite',8,'romanzo',2014,298,17.00,1,1,'2015-7-7'),
(18,'Le api della signora Bice',3,'ragazzi',2017,64,10.00,5,1,'2018-3-30'),
(19,'Manuale di orticoltura urbana',4,'saggio',2016,228,24.50,7,0,'2017-4-11'),
(20,'Gatti di ringhiera',12,'fumetto',2019,120,18.00,10,1,'2020-2-14'),
(21,'Un''estate senza vento',5,'romanzo',2014,215,14.90,3,1,'2015-6-9'),
(22,'Il bosco dei numeri',10,'ragazzi',2011,110,12.00,5,1,'2012-10-10'),
(23,'Sonetti della notte bianca',9,'poesia',2008,80,12.50,2,1,'2010-11-11'),
(24,'Enciclopedia dei funghi dimenticati',7,'saggio',2023,612,39.00,10,1,'2023-9-4');

--
-- Dumping data for table `soci`
-- (no ids: they start at 500, as the counter of the old system did)
--

INSERT INTO `soci` (`tessera`,`nome`,`cognome`,`citta`,`data_nascita`,`data_iscrizione`,`categoria`,`sede_id`) VALUES
('000101','Giulia','Rinaldi','Roma','1990-4-12','2019-1-15','ordinario',1),
('000102','Marco','Esposti','roma','2002-11-3','2020-9-1','studente',10),
('000417','Franca','Cattaneo','Tivoli','1945-7-30','2015-3-2','senior',1),
('000233','Davide','D\'Alessio','L\'Aquila','1985-1-9','2021-6-18','ordinario',3),
('001250','Sara','Lombardini','ROMA','1999-12-25','2018-10-4','studente',6),
('000078','Giorgio','Ferlini','Frascati','1947-3-8','2012-2-20','senior',2),
('000419','Ilaria','Montanari','Roma','1978-6-6','2016-5-5','ordinario',1),
('002001','Luca','Bonfanti','Viterbo','2005-2-17','2022-9-12','studente',5),
('000350','Paola','Greco','Reggio nell''Emilia','1962-8-21','2014-11-30','ordinario',7),
('000012','Antonio','Sereni','roma','1940-10-1','2010-1-7','senior',1),
('000888','Marta','Guidi','Latina','1995-3-14','2023-1-20','ordinario',6),
('000999','Nicola','Parisi','L''Aquila','1988-9-9','2019-7-1','ordinario',3),
('001001','Elisa','Fontana','Roma','2003-5-27','2021-10-10','studente',10),
('000640','Roberto','Marchetti','Tivoli','1955-12-2','2013-4-15','ordinario',7),
('000071','Anna','Colombo','Frascati','1949-1-31','2011-3-3','senior',2),
('003300','Tommaso','Villa','Viterbo','2006-8-8','2023-9-15','studente',5),
('000505','Chiara','Benedetti','Latina','1983-4-4','2017-2-2','ordinario',1),
('000777','Fabio','Testa','Tivoli','1970-7-7','2020-1-9','ordinario',6),
('000418','Irene','Caruso','Frascati','1992-2-29','2022-2-2','studente',10),
('000320','Stefano','Pellegrini','Ciampino','1960-10-10','2015-5-15','ordinario',3);

--
-- Dumping data for table `prestiti`
--

INSERT INTO `prestiti` VALUES
(1,2,500,'2022-11-3 10:15:00','2022-12-3','2022-11-28',0),
(2,12,501,'2022-11-20 17:40:00','2022-12-20','2023-1-9',1),
(3,7,507,'2022-12-1 16:5:00','2022-12-31','2022-12-15',0),
(4,3,505,'2022-12-12 9:30:00','2023-1-11','2023-1-10',0),
(5,1,503,'2022-12-22 11:0:00','2023-1-21','2023-1-18',0),
(6,4,500,'2023-1-10 9:5:00','2023-2-9','2023-2-1',0),
(7,10,503,'2023-1-25 18:20:00','2023-2-24','2023-3-10',1),
(8,9,505,'2023-2-2 10:0:00','2023-3-4','2023-2-20',0),
(9,16,504,'2023-2-14 15:30:00','2023-3-16','2023-3-1',0),
(10,6,506,'2023-3-1 9:45:00','2023-3-31','2023-3-20',0),
(11,1,503,'2023-3-3 12:0:00','2023-4-2','2023-3-29',0),
(12,13,507,'2023-3-7 18:45:00','2023-4-6','2023-4-7',0),
(13,20,512,'2023-3-15 16:0:00','2023-4-14','2023-4-10',0),
(14,24,510,'2023-3-28 11:11:00','2023-4-27','2023-5-30',1),
(15,11,500,'2023-4-4 10:0:00','2023-5-4','2023-4-30',0),
(16,17,503,'2023-4-18 17:0:00','2023-5-18','2023-5-2',0),
(17,21,516,'2023-5-6 9:20:00','2023-6-5','2023-6-1',0),
(18,8,513,'2023-5-20 10:30:00','2023-6-19','2023-7-4',1),
(19,5,508,'2023-6-1 15:0:00','2023-7-1','2023-6-25',0),
(20,14,505,'2023-6-10 11:0:00','2023-7-10','2023-7-1',0),
(21,18,515,'2023-9-18 16:30:00','2023-10-18','2023-10-2',0),
(22,15,506,'2023-10-3 18:0:00','2023-11-2','2023-10-30',0),
(23,2,517,'2023-10-21 10:0:00','2023-11-20','2023-11-15',0),
(24,19,513,'2023-11-8 9:0:00','2023-12-8','2023-12-20',1),
(25,22,507,'2023-12-2 15:45:00','2024-1-1','2023-12-28',0),
(26,4,500,'2023-12-15 10:10:00','2024-1-14','2024-1-10',0),
(27,23,505,'2024-1-8 9:0:00','2024-2-7','2024-2-1',0),
(28,12,518,'2024-1-19 17:0:00','2024-2-18','2024-2-10',0),
(29,10,503,'2024-2-2 11:30:00','2024-3-3','2024-2-25',0),
(30,6,511,'2024-2-15 16:0:00','2024-3-16','2024-3-10',0),
(31,13,512,'2024-3-5 15:0:00','2024-4-4',NULL,0),
(32,19,516,'2024-3-12 10:0:00','2024-4-11',NULL,1),
(33,4,501,'2024-3-20 18:30:00','2024-4-19',NULL,0),
(34,23,503,'2023-7-14 10:0:00','2023-8-13','2023-8-1',0);

--
-- Constraints added after the data, as a hand-run migration did
--

ALTER TABLE `libri` ADD CONSTRAINT `fk_libri_sede` FOREIGN KEY (`sede_id`) REFERENCES `sedi` (`id`);
ALTER TABLE `soci` ADD CONSTRAINT `fk_soci_sede` FOREIGN KEY (`sede_id`) REFERENCES `sedi` (`id`);
ALTER TABLE `prestiti` ADD CONSTRAINT `fk_prestiti_socio` FOREIGN KEY (`socio_id`) REFERENCES `soci` (`id`);
