-- Organizations (beyond Auth.js): each with a unique slug; its members, one row per user
-- with their roles and the ids of their teams (each list space-separated, in the order
-- given: names and ids never contain spaces); its teams, each name once per organization;
-- invitations by email, to an organization or (without one) to sign up, of which only the
-- hash of the emailed token is kept, with where each stands (`status`: pending, accepted
-- or revoked; who accepted it, and when it was accepted or revoked). `inviterId` and
-- `acceptedBy` record who did it and reference nothing: the record outlives the user.
-- Foreign keys to `organization` only, not to `user` (as for `sessionRevocation`):
-- `delete_user` deletes a user's memberships itself.
CREATE TABLE IF NOT EXISTS `organization`
(
  `id` VARCHAR(255) NOT NULL,
  `slug` VARCHAR(255) NOT NULL,
  `name` TEXT NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,

  PRIMARY KEY (`id`),
  UNIQUE KEY `organization_slug_unique` (`slug`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `organizationMember`
(
  `organizationId` VARCHAR(255) NOT NULL,
  `userId` VARCHAR(255) NOT NULL,
  `roles` TEXT NOT NULL,
  `teams` TEXT NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,

  PRIMARY KEY (`organizationId`, `userId`),
  KEY `organizationMember_userId_idx` (`userId`),
  CONSTRAINT `organizationMember_organizationId_fk` FOREIGN KEY (`organizationId`)
    REFERENCES `organization` (`id`) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `organizationTeam`
(
  `id` VARCHAR(255) NOT NULL,
  `organizationId` VARCHAR(255) NOT NULL,
  `name` VARCHAR(255) NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,

  PRIMARY KEY (`id`),
  UNIQUE KEY `organizationTeam_name_unique` (`organizationId`, `name`),
  CONSTRAINT `organizationTeam_organizationId_fk` FOREIGN KEY (`organizationId`)
    REFERENCES `organization` (`id`) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

CREATE TABLE IF NOT EXISTS `organizationInvitation`
(
  `id` VARCHAR(255) NOT NULL,
  `organizationId` VARCHAR(255),
  `email` VARCHAR(255) NOT NULL,
  `roles` TEXT NOT NULL,
  `teams` TEXT NOT NULL,
  `inviterId` VARCHAR(255),
  `tokenHash` VARCHAR(255) NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,
  `expires` DATETIME(3) NOT NULL,
  `status` VARCHAR(16) NOT NULL,
  `acceptedBy` VARCHAR(255),
  `closedAt` DATETIME(3),

  PRIMARY KEY (`id`),
  UNIQUE KEY `organizationInvitation_tokenHash_unique` (`tokenHash`),
  KEY `organizationInvitation_email_idx` (`email`),
  CONSTRAINT `organizationInvitation_organizationId_fk` FOREIGN KEY (`organizationId`)
    REFERENCES `organization` (`id`) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- API keys (beyond Auth.js): the key's visible part as id, the hash of its secret part, the
-- user it acts as, the organization of an organization's key, its permissions
-- (space-separated), and when it expires, was last used and was revoked. No foreign key to
-- `user`: `delete_user` deletes the user's keys itself.
CREATE TABLE IF NOT EXISTS `apiKey`
(
  `id` VARCHAR(255) NOT NULL,
  `hash` TEXT NOT NULL,
  `name` TEXT NOT NULL,
  `userId` VARCHAR(255) NOT NULL,
  `organizationId` VARCHAR(255),
  `permissions` TEXT NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,
  `expires` DATETIME(3),
  `lastUsedAt` DATETIME(3),
  `revokedAt` DATETIME(3),

  PRIMARY KEY (`id`),
  KEY `apiKey_userId_idx` (`userId`),
  CONSTRAINT `apiKey_organizationId_fk` FOREIGN KEY (`organizationId`)
    REFERENCES `organization` (`id`) ON DELETE CASCADE
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- The organization a database session acts for (NULL: none chosen). Cleared when the
-- member leaves or the organization goes; it goes with the session's row. No foreign key:
-- `session` may be Drizzle's table, in another collation (the column's own is binary).
ALTER TABLE `session`
  ADD COLUMN `activeOrganizationId` VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL,
  ADD INDEX `session_activeOrganizationId_idx` (`activeOrganizationId`);
