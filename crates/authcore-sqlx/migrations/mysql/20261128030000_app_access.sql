-- Access a user granted to applications that sign in through authcore as an OpenID Provider
-- (beyond Auth.js): the scopes allowed (space-separated, empty once revoked), when access
-- was first and last granted, and the epoch that each revocation moves on (tokens of an
-- earlier epoch are void). No foreign key, as for `sessionRevocation`: `delete_user`
-- deletes the rows itself.
CREATE TABLE IF NOT EXISTS `appAccess`
(
  `userId` VARCHAR(255) NOT NULL,
  `clientId` VARCHAR(255) NOT NULL,
  `clientName` TEXT NOT NULL,
  `scopes` TEXT NOT NULL,
  `createdAt` DATETIME(3) NOT NULL,
  `updatedAt` DATETIME(3) NOT NULL,
  `epoch` BIGINT NOT NULL,

  PRIMARY KEY (`userId`, `clientId`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
