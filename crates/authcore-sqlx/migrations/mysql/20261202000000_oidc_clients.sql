-- The OpenID Provider's clients made at run time by administrators (beyond Auth.js): one
-- row per client, its id the key (of two creations of one id one is refused), the client
-- as JSON (its secret only as its SHA-256), kept as given.
CREATE TABLE IF NOT EXISTS `oidcClient`
(
  `clientId` VARCHAR(255) NOT NULL,
  `data` MEDIUMTEXT NOT NULL,

  PRIMARY KEY (`clientId`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
