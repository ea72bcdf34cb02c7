"""A dump in mysqldump's style (MySQL 8.0.40, --routines --events), written for these tests: a small library.

Every construct mysqldump writes that `mysql_dump` reads: its header and footer of versioned SET statements,
DROP/CREATE TABLE with MySQL 8.0's column attributes (BINARY, a column's own CHARACTER SET and COLLATE, ENUM, SET,
YEAR, BIT, a spatial column with its SRID, VIRTUAL and STORED generated columns, ON UPDATE CURRENT_TIMESTAMP,
FULLTEXT and SPATIAL keys, a CHECK NOT ENFORCED), LOCK TABLES and DISABLE KEYS guards around extended INSERTs
(a row numbered 0 under NO_AUTO_VALUE_ON_ZERO, `_binary` and hexadecimal values), a trigger, an event, a
function and a procedure in DELIMITER blocks, and a view with its temporary stand-in.

And a dump written by hand, whose triggers come before the rows they fire for.
"""

BIBLIOTECA = r"""-- MySQL dump 10.13  Distrib 8.0.40, for Linux (x86_64)
--
-- Host: localhost    Database: biblioteca
-- ------------------------------------------------------
-- Server version	8.0.40

/*!40101 SET @OLD_CHARACTER_SET_CLIENT=@@CHARACTER_SET_CLIENT */;
/*!40101 SET @OLD_CHARACTER_SET_RESULTS=@@CHARACTER_SET_RESULTS */;
/*!40101 SET @OLD_COLLATION_CONNECTION=@@COLLATION_CONNECTION */;
/*!50503 SET NAMES utf8mb4 */;
/*!40103 SET @OLD_TIME_ZONE=@@TIME_ZONE */;
/*!40103 SET TIME_ZONE='+00:00' */;
/*!40014 SET @OLD_UNIQUE_CHECKS=@@UNIQUE_CHECKS, UNIQUE_CHECKS=0 */;
/*!40014 SET @OLD_FOREIGN_KEY_CHECKS=@@FOREIGN_KEY_CHECKS, FOREIGN_KEY_CHECKS=0 */;
/*!40101 SET @OLD_SQL_MODE=@@SQL_MODE, SQL_MODE='NO_AUTO_VALUE_ON_ZERO' */;
/*!40111 SET @OLD_SQL_NOTES=@@SQL_NOTES, SQL_NOTES=0 */;

--
-- Table structure for table `autori`
--

DROP TABLE IF EXISTS `autori`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `autori` (
  `id_autore` smallint unsigned NOT NULL AUTO_INCREMENT,
  `nome` varchar(40) NOT NULL,
  `cognome` varchar(40) NOT NULL,
  `nominativo` varchar(81) GENERATED ALWAYS AS (concat(`nome`,_utf8mb4' ',`cognome`)) VIRTUAL,
  `nato` year DEFAULT NULL,
  `sigla` char(3) CHARACTER SET latin1 COLLATE latin1_bin DEFAULT NULL,
  `parola` varchar(40) BINARY DEFAULT NULL,
  `aggiornato` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,
  PRIMARY KEY (`id_autore`),
  KEY `idx_cognome` (`cognome`),
  FULLTEXT KEY `ft_nominativo` (`nome`,`cognome`)
) ENGINE=InnoDB AUTO_INCREMENT=5 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

--
-- Dumping data for table `autori`
--

LOCK TABLES `autori` WRITE;
/*!40000 ALTER TABLE `autori` DISABLE KEYS */;
INSERT INTO `autori` (`id_autore`, `nome`, `cognome`, `nato`, `sigla`, `parola`, `aggiornato`) VALUES (0,'Anonimo','Veneziano',NULL,NULL,NULL,'2026-01-01 10:00:00'),(1,'Italo','Calvino',1923,'ICA','Palomar','2026-01-02 11:00:00'),(2,'Elsa','Morante',12,'EMO','Arturo','2026-01-03 12:00:00'),(3,'Natalia','Ginzburg',1916,'NGI','lessico; famigliare','2026-01-04 13:00:00'),(4,'Primo','Levi','1919','PLE','Chiave a stella','2026-01-05 14:00:00');
/*!40000 ALTER TABLE `autori` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `libri`
--

DROP TABLE IF EXISTS `libri`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `libri` (
  `id_libro` int NOT NULL AUTO_INCREMENT,
  `id_autore` smallint unsigned NOT NULL,
  `titolo` varchar(120) NOT NULL,
  `genere` enum('romanzo','racconti','saggio','poesia') NOT NULL,
  `formati` set('cartaceo','ebook','audiolibro') DEFAULT 'cartaceo',
  `prezzo` decimal(6,2) NOT NULL,
  `prezzo_ivato` decimal(7,2) GENERATED ALWAYS AS ((`prezzo` * 1.04)) STORED,
  `copie` tinyint unsigned NOT NULL DEFAULT '1',
  `esaurito` bit(1) NOT NULL DEFAULT b'0',
  PRIMARY KEY (`id_libro`),
  KEY `fk_autore` (`id_autore`),
  CONSTRAINT `fk_autore` FOREIGN KEY (`id_autore`) REFERENCES `autori` (`id_autore`) ON UPDATE CASCADE,
  CONSTRAINT `chk_copie` CHECK ((`copie` < 100)) /*!80016 NOT ENFORCED */
) ENGINE=InnoDB AUTO_INCREMENT=7 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

LOCK TABLES `libri` WRITE;
/*!40000 ALTER TABLE `libri` DISABLE KEYS */;
INSERT INTO `libri` (`id_libro`, `id_autore`, `titolo`, `genere`, `formati`, `prezzo`, `copie`, `esaurito`) VALUES (1,1,'Il barone rampante','romanzo','cartaceo,ebook',12.50,3,_binary '\0'),(2,1,'Le città invisibili','romanzo','ebook,cartaceo,audiolibro',11.00,0,0x01),(3,2,'L\'isola di Arturo','romanzo','',14.90,2,b'0'),(4,3,'Lessico famigliare','saggio','audiolibro',13.00,1,b'0'),(5,4,'Il sistema periodico','racconti',NULL,10.99,12,b'1'),(6,0,'Rime sparse','poesia','cartaceo',7.25,1,b'0');
/*!40000 ALTER TABLE `libri` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `sedi`
--

DROP TABLE IF EXISTS `sedi`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `sedi` (
  `id_sede` tinyint NOT NULL,
  `citta` varchar(30) NOT NULL,
  `posizione` point NOT NULL /*!80003 SRID 0 */,
  PRIMARY KEY (`id_sede`),
  SPATIAL KEY `idx_posizione` (`posizione`)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

LOCK TABLES `sedi` WRITE;
/*!40000 ALTER TABLE `sedi` DISABLE KEYS */;
INSERT INTO `sedi` VALUES (1,'Torino',_binary 0x00000000010100000000000000000024400000000000804640),(2,'Roma',0x00000000010100000000000000000029400000000000F04440);
/*!40000 ALTER TABLE `sedi` ENABLE KEYS */;
UNLOCK TABLES;

--
-- Table structure for table `prestiti`
--

DROP TABLE IF EXISTS `prestiti`;
/*!40101 SET @saved_cs_client     = @@character_set_client */;
/*!50503 SET character_set_client = utf8mb4 */;
CREATE TABLE `prestiti` (
  `id_prestito` int unsigned NOT NULL AUTO_INCREMENT,
  `id_libro` int NOT NULL,
  `lettore` varchar(60) NOT NULL,
  `preso` date NOT NULL,
  `reso` date DEFAULT NULL,
  PRIMARY KEY (`id_prestito`)
) ENGINE=InnoDB AUTO_INCREMENT=4 DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_0900_ai_ci;
/*!40101 SET character_set_client = @saved_cs_client */;

LOCK TABLES `prestiti` WRITE;
/*!40000 ALTER TABLE `prestiti` DISABLE KEYS */;
INSERT INTO `prestiti` VALUES (1,1,'Bice Sarto','2026-03-01','2026-03-20'),(2,3,'Ugo Fabbri','2026-04-02',NULL),(3,1,'Gilda D\'Onofrio','2026-04-10',NULL);
/*!40000 ALTER TABLE `prestiti` ENABLE KEYS */;
UNLOCK TABLES;
/*!50003 SET @saved_cs_client      = @@character_set_client */ ;
/*!50003 SET @saved_cs_results     = @@character_set_results */ ;
/*!50003 SET @saved_col_connection = @@collation_connection */ ;
/*!50003 SET character_set_client  = utf8mb4 */ ;
/*!50003 SET character_set_results = utf8mb4 */ ;
/*!50003 SET collation_connection  = utf8mb4_0900_ai_ci */ ;
/*!50003 SET @saved_sql_mode       = @@sql_mode */ ;
/*!50003 SET sql_mode              = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION' */ ;
DELIMITER ;;
/*!50003 CREATE*/ /*!50017 DEFINER=`root`@`localhost`*/ /*!50003 TRIGGER `prestiti_dopo_inserimento` AFTER INSERT ON `prestiti` FOR EACH ROW BEGIN
  -- one copy fewer on the shelf; a semicolon in a comment: ;; still nothing
  UPDATE libri SET copie = copie - 1 WHERE id_libro = NEW.id_libro;
END */;;
DELIMITER ;
/*!50003 SET sql_mode              = @saved_sql_mode */ ;
/*!50003 SET character_set_client  = @saved_cs_client */ ;
/*!50003 SET character_set_results = @saved_cs_results */ ;
/*!50003 SET collation_connection  = @saved_col_connection */ ;

--
-- Temporary view structure for view `catalogo`
--

DROP TABLE IF EXISTS `catalogo`;
/*!50001 DROP VIEW IF EXISTS `catalogo`*/;
SET @saved_cs_client     = @@character_set_client;
/*!50503 SET character_set_client = utf8mb4 */;
/*!50001 CREATE VIEW `catalogo` AS SELECT
 1 AS `titolo`,
 1 AS `autore`,
 1 AS `genere`*/;
SET character_set_client = @saved_cs_client;

--
-- Dumping events for database 'biblioteca'
--
/*!50106 SET @save_time_zone= @@TIME_ZONE */ ;
/*!50106 DROP EVENT IF EXISTS `pulizia_notturna` */;
DELIMITER ;;
/*!50003 SET @saved_cs_client      = @@character_set_client */ ;;
/*!50003 SET sql_mode              = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES' */ ;;
/*!50003 SET @saved_time_zone      = @@time_zone */ ;;
/*!50003 SET time_zone             = 'SYSTEM' */ ;;
/*!50106 CREATE*/ /*!50117 DEFINER=`root`@`localhost`*/ /*!50106 EVENT `pulizia_notturna` ON SCHEDULE EVERY 1 DAY STARTS '2026-01-01 03:00:00' ON COMPLETION NOT PRESERVE ENABLE DO DELETE FROM prestiti WHERE reso < NOW() - INTERVAL 5 YEAR */ ;;
/*!50003 SET time_zone             = @saved_time_zone */ ;;
/*!50003 SET sql_mode              = @saved_sql_mode */ ;;
DELIMITER ;
/*!50106 SET TIME_ZONE= @save_time_zone */ ;

--
-- Dumping routines for database 'biblioteca'
--
/*!50003 DROP FUNCTION IF EXISTS `prestiti_aperti` */;
/*!50003 SET @saved_sql_mode       = @@sql_mode */ ;
/*!50003 SET sql_mode              = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES' */ ;
DELIMITER ;;
CREATE DEFINER=`root`@`localhost` FUNCTION `prestiti_aperti`(p_lettore VARCHAR(60)) RETURNS int
    READS SQL DATA
    DETERMINISTIC
BEGIN
  DECLARE n INT;
  SELECT COUNT(*) INTO n FROM prestiti WHERE lettore = p_lettore AND reso IS NULL;
  RETURN n;
END ;;
DELIMITER ;
/*!50003 SET sql_mode              = @saved_sql_mode */ ;
/*!50003 DROP PROCEDURE IF EXISTS `restituisci` */;
/*!50003 SET @saved_sql_mode       = @@sql_mode */ ;
DELIMITER ;;
CREATE DEFINER=`root`@`localhost` PROCEDURE `restituisci`(IN p_prestito INT)
BEGIN
  UPDATE prestiti SET reso = CURDATE() WHERE id_prestito = p_prestito;
  SELECT 'restituito; grazie' AS esito;
END ;;
DELIMITER ;
/*!50003 SET sql_mode              = @saved_sql_mode */ ;

--
-- Final view structure for view `catalogo`
--

/*!50001 DROP VIEW IF EXISTS `catalogo`*/;
/*!50001 SET @saved_cs_client          = @@character_set_client */;
/*!50001 SET character_set_client      = utf8mb4 */;
/*!50001 SET collation_connection      = utf8mb4_0900_ai_ci */;
/*!50001 CREATE ALGORITHM=UNDEFINED */
/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */
/*!50001 VIEW `catalogo` AS select `l`.`titolo` AS `titolo`,`a`.`nominativo` AS `autore`,`l`.`genere` AS `genere` from (`libri` `l` join `autori` `a` on((`l`.`id_autore` = `a`.`id_autore`))) where (`l`.`copie` > 0) */;
/*!50001 SET character_set_client      = @saved_cs_client */;
/*!40103 SET TIME_ZONE=@OLD_TIME_ZONE */;

/*!40101 SET SQL_MODE=@OLD_SQL_MODE */;
/*!40014 SET FOREIGN_KEY_CHECKS=@OLD_FOREIGN_KEY_CHECKS */;
/*!40014 SET UNIQUE_CHECKS=@OLD_UNIQUE_CHECKS */;
/*!40101 SET CHARACTER_SET_CLIENT=@OLD_CHARACTER_SET_CLIENT */;
/*!40101 SET CHARACTER_SET_RESULTS=@OLD_CHARACTER_SET_RESULTS */;
/*!40101 SET COLLATION_CONNECTION=@OLD_COLLATION_CONNECTION */;
/*!40111 SET SQL_NOTES=@OLD_SQL_NOTES */;

-- Dump completed on 2026-12-07 16:30:00
"""

# Triggers before their rows: BEFORE INSERT assignments, AFTER INSERT and DELETE writes into other tables, and an
# AFTER UPDATE with an IF, which no row fires.
HAND_WRITTEN_TRIGGERS = r"""CREATE TABLE libri (id INT PRIMARY KEY, titolo VARCHAR(40), prezzo DECIMAL(6,2), ivato DECIMAL(6,2),
  registrato DATE NOT NULL);
CREATE TABLE schede (id INT PRIMARY KEY, titolo VARCHAR(40));
CREATE TABLE registro (evento VARCHAR(60));
DELIMITER ;;
CREATE TRIGGER libri_prima BEFORE INSERT ON libri FOR EACH ROW BEGIN
  SET NEW.prezzo = NEW.prezzo + 0.5;
  SET NEW.ivato = NEW.prezzo * 1.04, NEW.registrato = '2026-12-07';
END;;
CREATE TRIGGER libri_dopo AFTER INSERT ON libri FOR EACH ROW BEGIN
  INSERT INTO schede (id, titolo) VALUES (NEW.id, UPPER(NEW.titolo));
  INSERT INTO registro VALUES (CONCAT('nuovo: ', NEW.titolo));
END;;
CREATE TRIGGER libri_via AFTER DELETE ON libri FOR EACH ROW DELETE FROM schede WHERE id = OLD.id;;
CREATE TRIGGER libri_cambio AFTER UPDATE ON libri FOR EACH ROW BEGIN
  IF NEW.titolo <> OLD.titolo THEN UPDATE schede SET titolo = NEW.titolo WHERE id = NEW.id; END IF;
END;;
DELIMITER ;
INSERT INTO libri (id, titolo, prezzo, registrato) VALUES (1, 'Marcovaldo', 9.46, '2000-01-01'), (2, 'Palomar', 12.34, '2000-01-01');
ALTER TABLE libri ADD COLUMN nota TEXT;
INSERT INTO libri (id, titolo, prezzo, registrato) VALUES (3, 'Lessico famigliare', 13.04, '2000-01-01');
"""
