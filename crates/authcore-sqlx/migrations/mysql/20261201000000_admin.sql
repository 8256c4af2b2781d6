-- Bans (beyond Auth.js): at most one per user, as an administrator last set it (why, when,
-- until when — NULL: until lifted — and by whom). No foreign key to `user` (as for
-- `sessionRevocation`): `delete_user` deletes the user's ban itself.
CREATE TABLE IF NOT EXISTS `ban`
(
  `userId` VARCHAR(255) NOT NULL,
  `reason` TEXT NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,
  `expires` DATETIME(3),
  `bannedBy` VARCHAR(255),

  PRIMARY KEY (`userId`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- The audit log (beyond Auth.js): append-only, one row per record, kept exactly as given.
-- `seq` is the key, so that of two instances appending the same next record one is
-- refused; `at` to the millisecond (the hash chain covers it); `actor` and `target` record
-- who and reference nothing: the record outlives the user.
CREATE TABLE IF NOT EXISTS `auditLog`
(
  `seq` BIGINT NOT NULL,
  `at` DATETIME(3) NOT NULL,
  `kind` VARCHAR(255) NOT NULL,
  `actor` VARCHAR(255),
  `target` VARCHAR(255),
  `data` MEDIUMTEXT NOT NULL,
  `prevHash` TEXT NOT NULL,
  `hash` TEXT NOT NULL,

  PRIMARY KEY (`seq`),
  KEY `auditLog_kind_idx` (`kind`),
  KEY `auditLog_actor_idx` (`actor`),
  KEY `auditLog_target_idx` (`target`),
  KEY `auditLog_at_idx` (`at`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- The administrator who signed in as the session's user (impersonation); NULL for the
-- user's own sign-in.
ALTER TABLE `session`
  ADD COLUMN `impersonator` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL;
