-- Password accounts (beyond Auth.js): each user's password hash as given (a PHC string such
-- as `$argon2id$v=19$…`, or an imported bcrypt hash) and when it was last set
-- (`utf8mb4_bin`: case counts when hashes are compared). No foreign key, as for
-- `sessionRevocation`: `delete_user` deletes the row itself.
CREATE TABLE IF NOT EXISTS `userPassword`
(
  `userId` VARCHAR(255) NOT NULL,
  `hash` TEXT NOT NULL,
  `updatedAt` DATETIME(3) NOT NULL,

  PRIMARY KEY (`userId`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;

-- The groups a user source gave a user at their last sign-in (beyond Auth.js), in the
-- order given: one row per group, `position` from 0. No foreign key either.
CREATE TABLE IF NOT EXISTS `userGroup`
(
  `userId` VARCHAR(255) NOT NULL,
  `position` INT NOT NULL,
  `name` TEXT NOT NULL,

  PRIMARY KEY (`userId`, `position`)
) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin;
