-- The JWT revocation list (`jwt_revocation`): per user, JWT sessions signed in before
-- `revokedBefore` are refused, except the one whose `sid` is `keepSession`. No foreign key:
-- on tables Drizzle created, `user`.`id` has the server's default collation, which a key
-- from this binary-collated column cannot reference; `delete_user` deletes the row itself.
CREATE TABLE IF NOT EXISTS `sessionRevocation`
(
  `userId` VARCHAR(255) NOT NULL,
  `revokedBefore` DATETIME(3) NOT NULL,
  `keepSession` VARCHAR(255),

  PRIMARY KEY (`userId`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
