-- The tables of Auth.js's Drizzle adapter for MySQL (@auth/drizzle-adapter, its default
-- `mysqlTable` schema): the same table and column names, so a database an Auth.js app uses
-- through it works with authcore and both can share it.
--
-- Differences, each a superset of Drizzle's types:
-- * utf8mb4_bin collation: tokens, credential ids and ids compare byte for byte (MySQL's
--   default collations ignore case, so `abc` would find a token `ABC`);
-- * DATETIME(3) in UTC for every time (Drizzle: TIMESTAMP, which ends in 2038 and, for
--   `expires`, keeps whole seconds only);
-- * TEXT for OAuth tokens, scopes, images and public keys (Drizzle: VARCHAR(255), too short
--   for many providers' access tokens and for RSA passkey keys); BIGINT for `expires_at`
--   and `counter` (Drizzle: INT).
-- Indexes are declared inside CREATE TABLE: MySQL 8 has no CREATE INDEX IF NOT EXISTS.

CREATE TABLE IF NOT EXISTS `user`
(
  id VARCHAR(255) NOT NULL,
  name VARCHAR(255),
  email VARCHAR(255),
  `emailVerified` DATETIME(3),
  image TEXT,

  PRIMARY KEY (id),
  UNIQUE KEY user_email_unique (email)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `account`
(
  `userId` VARCHAR(255) NOT NULL,
  type VARCHAR(255) NOT NULL,
  provider VARCHAR(255) NOT NULL,
  `providerAccountId` VARCHAR(255) NOT NULL,
  refresh_token TEXT,
  access_token TEXT,
  expires_at BIGINT,
  token_type VARCHAR(255),
  scope TEXT,
  id_token TEXT,
  session_state TEXT,

  PRIMARY KEY (provider, `providerAccountId`),
  KEY account_userId_idx (`userId`),
  CONSTRAINT account_userId_user_id_fk FOREIGN KEY (`userId`) REFERENCES `user` (id) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `session`
(
  `sessionToken` VARCHAR(255) NOT NULL,
  `userId` VARCHAR(255) NOT NULL,
  expires DATETIME(3) NOT NULL,

  PRIMARY KEY (`sessionToken`),
  KEY session_userId_idx (`userId`),
  CONSTRAINT session_userId_user_id_fk FOREIGN KEY (`userId`) REFERENCES `user` (id) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `verificationToken`
(
  identifier VARCHAR(255) NOT NULL,
  token VARCHAR(255) NOT NULL,
  expires DATETIME(3) NOT NULL,

  PRIMARY KEY (identifier, token),
  -- create_verification_token deletes tokens a day past their expiry on every insert.
  KEY verificationToken_expires_idx (expires)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `authenticator`
(
  `credentialID` VARCHAR(255) NOT NULL,
  `userId` VARCHAR(255) NOT NULL,
  `providerAccountId` VARCHAR(255) NOT NULL,
  `credentialPublicKey` TEXT NOT NULL,
  counter BIGINT NOT NULL,
  `credentialDeviceType` VARCHAR(255) NOT NULL,
  `credentialBackedUp` BOOLEAN NOT NULL,
  transports VARCHAR(255),

  PRIMARY KEY (`userId`, `credentialID`),
  UNIQUE KEY authenticator_credentialID_unique (`credentialID`),
  CONSTRAINT authenticator_userId_user_id_fk FOREIGN KEY (`userId`) REFERENCES `user` (id) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
